/**
 * Incident: pgvigil is SIGKILLed after a webhook receiver took a notification but before the
 * outbox row was removed, so the next run sends it again. The receiver must be able to tell the
 * repeat: both sends carry the same delivery id (the `Idempotency-Key` header and `delivery_id`),
 * derived from the transition and stored with the row, and deduplicating by it leaves each
 * transition once.
 *
 * The kill window is hit on purpose: the receiver answers 200 and kills the sending process before
 * the response is complete, so the sender never learns of the 2xx and cannot remove the row.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IDEMPOTENCY_HEADER } from '../../src/notify/webhook.js';
import { openStore } from '../../src/store/open-store.js';
import { killChild, startOutboxChild } from '../helpers/outbox-child.js';
import { waitUntil } from '../helpers/pg-processes.js';

interface Received {
  idempotencyKey: string | undefined;
  body: string;
}

const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-webhook-id-'));
const store = path.join(dir, 'store.db');
const received: Received[] = [];
/** The process the receiver kills when the next notification arrives; null answers normally. */
let killOnArrival: ChildProcess | null = null;
let server: http.Server;
let url = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (text: string) => { body += text; });
    req.on('end', () => {
      received.push({ idempotencyKey: req.headers[IDEMPOTENCY_HEADER] as string | undefined, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      const victim = killOnArrival;
      killOnArrival = null;
      if (victim === null) return void res.end('{}');
      res.flushHeaders();
      void killChild(victim).then(() => res.end('{}'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

it('sends the same delivery id again after a kill between the 2xx and the row removal, so the receiver keeps each transition once', async () => {
  const db = openStore(store);
  const outboxRows = () => db.prepare('SELECT count(*) FROM outbox').pluck().get() as number;
  const exited = (proc: ChildProcess) => proc.exitCode !== null || proc.signalCode !== null;

  // Each transition: delivered by one process, which dies in the window; resent by the next.
  const first = await startOutboxChild(store, 'webhook', url);
  killOnArrival = first.proc;
  await first.send('fire replay-stalled/standby1');
  await waitUntil(() => received.length === 1 && exited(first.proc), 15_000, 'trigger received, sender killed');
  expect(outboxRows()).toBe(1);

  const second = await startOutboxChild(store, 'webhook', url);
  await waitUntil(() => received.length === 2 && outboxRows() === 0, 15_000, 'trigger sent again after the restart');
  killOnArrival = second.proc;
  await second.send('resolve replay-stalled/standby1');
  await waitUntil(() => received.length === 3 && exited(second.proc), 15_000, 'resolve received, sender killed');
  expect(outboxRows()).toBe(1);

  const third = await startOutboxChild(store, 'webhook', url);
  await waitUntil(() => received.length === 4 && outboxRows() === 0, 15_000, 'resolve sent again after the restart');
  await killChild(third.proc);
  db.close();

  const bodies = received.map((r) => JSON.parse(r.body) as { delivery_id: string; status: string; alert_id: number });
  for (const [i, r] of received.entries()) expect(r.idempotencyKey).toBe(`"${bodies[i]!.delivery_id}"`);
  expect(bodies.map((b) => b.status)).toEqual(['firing', 'firing', 'resolved', 'resolved']);
  // A repeat is byte for byte the first send; the two transitions have distinct ids.
  expect(received[1]!.body).toBe(received[0]!.body);
  expect(received[3]!.body).toBe(received[2]!.body);
  expect(bodies[2]!.delivery_id).not.toBe(bodies[0]!.delivery_id);

  const kept = new Map<string, string>();
  for (const r of received) if (!kept.has(r.idempotencyKey!)) kept.set(r.idempotencyKey!, r.body);
  expect([...kept.values()].map((b) => (JSON.parse(b) as { status: string }).status)).toEqual(['firing', 'resolved']);
}, 90_000);
