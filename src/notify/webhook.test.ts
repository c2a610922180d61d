import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../domain/index.js';
import { IDEMPOTENCY_HEADER, SIGNATURE_HEADER, WebhookNotifier } from './webhook.js';

const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);
const alert: Alert = {
  id: 3, ruleId: 'deadlocks', dedupKey: 'deadlocks/db1', severity: 'warning', state: 'firing', target: 'db1', labels: { database: 'shop' },
  summary: '2 deadlocks', evidence: { eventIds: [1, 2], series: [], facts: { deadlocks: 2 } }, startedMs: T0, updatedMs: T0, resolvedMs: null,
};

describe('WebhookNotifier', () => {
  const received: Array<{ body: string; signature: string | undefined; idempotencyKey: string | undefined }> = [];
  let status = 204;
  let server: http.Server;
  let url = '';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        received.push({ body, signature: req.headers[SIGNATURE_HEADER] as string | undefined, idempotencyKey: req.headers[IDEMPOTENCY_HEADER] as string | undefined });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('posts the transition as snake_case JSON signed with HMAC-SHA256 of the exact body', async () => {
    const notifier = new WebhookNotifier({ url, hmacSecret: 's3cret' });
    const out = notifier.format({ kind: 'alert', alert, transition: { ...alert, alertId: 3, to: 'firing', tsMs: T0 + 1_000 } })!;
    expect(out).toMatchObject({ action: 'trigger', dedupKey: 'deadlocks/db1' });
    expect(await notifier.send(out.payload, T0)).toEqual({ outcome: 'accepted', status: 204 });
    const last = received.at(-1)!;
    expect(JSON.parse(last.body)).toMatchObject({ kind: 'alert', status: 'firing', rule_id: 'deadlocks', evidence: { event_ids: [1, 2], facts: { deadlocks: 2 } }, at: '2026-10-14T03:00:01.000Z' });
    expect(last.signature).toBe(`sha256=${createHmac('sha256', 's3cret').update(last.body).digest('hex')}`);
    expect(JSON.stringify(out.payload)).not.toContain('s3cret');
  });

  it('gives each transition and change a delivery id of its own, the same however often it is formatted, sent as Idempotency-Key', async () => {
    const notifier = new WebhookNotifier({ url });
    const idOf = (n: Parameters<WebhookNotifier['format']>[0]) => (notifier.format(n)!.payload as { delivery_id: string }).delivery_id;
    const firing = { kind: 'alert' as const, alert, transition: { ...alert, alertId: 3, to: 'firing' as const, tsMs: T0 } };
    const resolved = { ...firing, transition: { ...firing.transition, to: 'resolved' as const, tsMs: T0 + 60_000 } };
    const later = { ...firing, alert: { ...alert, id: 9, startedMs: T0 + 120_000 }, transition: { ...firing.transition, alertId: 9, tsMs: T0 + 120_000 } };
    const change = { kind: 'change' as const, change: { target: 'db1', summary: 'REPACK started', tsMs: T0, details: {} } };
    expect(idOf(firing)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idOf(firing)).toBe(idOf({ ...firing, alert: { ...alert, summary: 'updated while waiting' } }));
    expect(new Set([idOf(firing), idOf(resolved), idOf(later), idOf(change)]).size).toBe(4);
    const out = notifier.format(firing)!;
    expect(await notifier.send(out.payload, T0)).toMatchObject({ outcome: 'accepted' });
    expect(received.at(-1)!.idempotencyKey).toBe(`"${idOf(firing)}"`);
    expect(JSON.parse(received.at(-1)!.body)).toMatchObject({ delivery_id: idOf(firing) });
  });

  it('sends no signature without a secret, and classifies refusals', async () => {
    const notifier = new WebhookNotifier({ url });
    const out = notifier.format({ kind: 'alert', alert, transition: { ...alert, alertId: 3, to: 'resolved', tsMs: T0 } })!;
    expect(out.action).toBe('resolve');
    status = 400;
    expect(await notifier.send(out.payload, T0)).toMatchObject({ outcome: 'rejected', status: 400 });
    expect(received.at(-1)!.signature).toBeUndefined();
    status = 503;
    expect(await notifier.send(out.payload, T0)).toMatchObject({ outcome: 'retry', status: 503 });
    status = 204;
    const down = new WebhookNotifier({ url: 'http://127.0.0.1:1/closed' });
    expect(await down.send(out.payload, T0)).toMatchObject({ outcome: 'retry', status: null, reason: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('gives up on a receiver that does not answer within the timeout, to retry later', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const notifier = new WebhookNotifier({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, requestTimeoutMs: 200 });
    expect(await notifier.send({ kind: 'alert' }, T0)).toMatchObject({ outcome: 'retry', status: null, reason: expect.stringMatching(/timed out after 200 ms/) });
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });
});
