/**
 * `pgvigil notify test` and `check --notify`, as an operator runs them before trusting pgvigil to
 * page: the built CLI against a PagerDuty-compatible receiver and a webhook on 127.0.0.1. The
 * receiver checks the routing key as PagerDuty does, so a wrong key is a 400 the command names.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { PagerDutyReceiver } from '../helpers/pagerduty-receiver.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const KEY = 'R0123456789abcdef0123456789abcde';
const dir = suiteTempDir('notify-test');
const pagerduty = new PagerDutyReceiver(KEY);
const webhook = new WebhookReceiver();

function pgvigil(args: string[]): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, ['bin/pgvigil.js', ...args], { env: { PATH: process.env.PATH } });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (t: string) => { stdout += t; });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
}

function config(name: string, routingKey: string): string {
  const file = join(dir, name);
  writeFileSync(file, [
    'name: db1',
    `db: ${join(dir, `${name}.db`)}`,
    'notify:',
    `  pagerduty: { routing_key: ${routingKey}, events_url: "${pagerduty.eventsUrl}" }`,
    `  webhooks: [{ url: "${webhook.url}", name: chatops }]`,
  ].join('\n'));
  return file;
}

beforeAll(async () => {
  await pagerduty.start();
  await webhook.start();
});
afterAll(async () => {
  await pagerduty.stop();
  await webhook.stop();
});

describe('pgvigil notify test', () => {
  it('triggers and resolves a test alert on every channel, whatever its min_severity, and prints each answer', async () => {
    const pagesBefore = pagerduty.pages;
    const hooksBefore = webhook.received.length;
    const { code, stdout } = await pgvigil(['notify', 'test', '-c', config('good.yaml', KEY)]);
    expect(stdout).toMatch(/^OK\s+notify pagerduty\s+trigger accepted \(HTTP 202\), resolve accepted \(HTTP 202\)$/m);
    expect(stdout).toMatch(/^OK\s+notify webhook:chatops\s+trigger accepted \(HTTP 200\), resolve accepted \(HTTP 200\)$/m);
    expect(code).toBe(EXIT.OK);
    // A real page that was closed again: nothing left open on the receiver.
    expect(pagerduty.pages).toBe(pagesBefore + 1);
    expect(pagerduty.openIncidents().filter((i) => i.dedupKey.startsWith('pgvigil-notify-test/'))).toEqual([]);
    expect(webhook.received.slice(hooksBefore).map((b) => [b.status, b.rule_id, b.target])).toEqual([
      ['firing', 'pgvigil-notify-test', 'db1'], ['resolved', 'pgvigil-notify-test', 'db1'],
    ]);
  });

  it('fails naming the receiver\'s answer and what to check when PagerDuty refuses the routing key; check --notify says the same', async () => {
    const wrongKey = config('wrong-key.yaml', 'Xbadbadbadbadbadbadbadbadbadbad0');
    const { code, stdout } = await pgvigil(['notify', 'test', '-c', wrongKey]);
    expect(code).toBe(EXIT.FAILURE);
    expect(stdout).toMatch(/^FAIL\s+notify pagerduty\s+trigger rejected \(HTTP 400\): .*routing_key is not the integration key/m);
    expect(stdout).toMatch(/hint: a 400 is a wrong routing_key/);
    expect(stdout).toMatch(/^OK\s+notify webhook:chatops/m);
    const checked = await pgvigil(['check', '--notify', '-c', wrongKey, '--dsn', 'postgres://nobody@127.0.0.1:1/postgres']);
    expect(checked.stdout).toMatch(/^FAIL\s+notify pagerduty\s+trigger rejected \(HTTP 400\)/m);
  });

  it('says so when no notifier is configured', async () => {
    const file = join(dir, 'none.yaml');
    writeFileSync(file, `db: ${join(dir, 'none.db')}\n`);
    const { code, stdout } = await pgvigil(['notify', 'test', '-c', file]);
    expect(code).toBe(EXIT.FAILURE);
    expect(stdout).toBe('no notifier is configured (notify.pagerduty, notify.alertmanager, notify.webhooks)\n');
  });
});
