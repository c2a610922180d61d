/**
 * A real Alertmanager (Debian prometheus-alertmanager) on loopback for delivery tests, with its
 * own webhook receiver recording what it notifies (firing, then resolved). Unclustered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { freePort, waitUntil } from './pg-processes.js';
import { toolPath } from './tools.js';

export interface AmAlert { labels: Record<string, string>; annotations: Record<string, string>; endsAt: string; generatorURL?: string; status: { state: string } }
export interface AmNotification { status: string; alerts: Array<{ status: string; labels: Record<string, string> }> }

export interface RunningAlertmanager {
  url: string;
  /** What Alertmanager sent its receiver. */
  notifications: AmNotification[];
  /** The alerts its API lists. */
  listed(): Promise<AmAlert[]>;
  stop(): Promise<void>;
}

/** Starts one in dir (config, storage), on port when given; resolves once it is ready. */
export async function startAlertmanager(dir: string, port?: number): Promise<RunningAlertmanager> {
  mkdirSync(dir, { recursive: true });
  const notifications: AmNotification[] = [];
  const hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => { notifications.push(JSON.parse(body) as AmNotification); res.end(); });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  writeFileSync(path.join(dir, 'alertmanager.yml'), [
    'route:',
    '  receiver: pgvigil-test',
    '  group_by: [alertname]',
    '  group_wait: 0s',
    '  group_interval: 1s',
    '  repeat_interval: 1h',
    'receivers:',
    '  - name: pgvigil-test',
    '    webhook_configs:',
    `      - url: http://127.0.0.1:${(hook.address() as AddressInfo).port}/`,
    '        send_resolved: true',
  ].join('\n'));
  const listenPort = port ?? await freePort();
  const url = `http://127.0.0.1:${listenPort}`;
  let log = '';
  const am: ChildProcess = spawn(toolPath('alertmanager'), [
    `--config.file=${path.join(dir, 'alertmanager.yml')}`, `--storage.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${listenPort}`, '--cluster.listen-address=', '--log.level=warn',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  am.stderr!.on('data', (c: Buffer) => { log += c.toString(); });
  const stop = async () => {
    if (am.exitCode === null && am.signalCode === null) {
      am.kill('SIGTERM');
      await new Promise((resolve) => am.once('exit', resolve));
    }
    await new Promise((resolve) => hook.close(resolve));
  };
  await waitUntil(async () => (await fetch(`${url}/-/ready`)).ok, 20_000, `Alertmanager ready on ${url}`).catch(async (err: Error) => {
    await stop();
    throw new Error(`${err.message}; its log: ${log}`);
  });
  return {
    url,
    notifications,
    listed: async () => (await (await fetch(`${url}/api/v2/alerts`)).json()) as AmAlert[],
    stop,
  };
}
