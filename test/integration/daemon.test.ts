/**
 * `pgvigil run` as an operator runs it: the built binary against a real PostgreSQL 18, then
 * against a server that is not there.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testTempDir } from '../helpers/temp-dir.js';
import { openStore } from '../../src/store/open-store.js';
import { destroyAllServers, startPrimary } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-server.js';

interface Daemon {
  child: ChildProcessWithoutNullStreams;
  url: string;
  logLines: () => Array<Record<string, unknown>>;
  exit: Promise<number | null>;
}

async function startDaemon(args: string[]): Promise<Daemon> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/pgvigil.js', 'run', '--listen', `127.0.0.1:${port}`, ...args], { env: { PATH: process.env.PATH } });
  let output = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => { output += text; });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const logLines = () => output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, url: `http://127.0.0.1:${port}`, logLines, exit };
}

function checkpointMessages(db: string): string[] {
  const store = openStore(db, { readonly: true });
  try {
    return store.prepare("SELECT message FROM events WHERE kind = 'checkpoint' ORDER BY ts_ms, id").pluck().all() as string[];
  } finally {
    store.close();
  }
}

const loggedMessage = (daemon: Daemon, pattern: RegExp) => daemon.logLines().find((l) => pattern.test(String(l.msg)));

afterAll(() => destroyAllServers());

describe('pgvigil run', () => {
  it('connects to a real server, reads its log, serves metrics and exits 0 after flushing on SIGTERM', async () => {
    const server = await startPrimary({ version: 18, name: 'daemon', settings: { log_checkpoints: true } });
    const db = join(testTempDir('daemon'), 'pgvigil.db');
    const daemon = await startDaemon(['--dsn', server.dsn(), '--log', server.logDir, '--db', db]);
    // Named after where the server is (this machine, for 127.0.0.1), never a name every sidecar shares.
    const name = `${hostname()}-${new URL(server.dsn()).port}`.replace(/[^A-Za-z0-9_.-]/g, '-');
    const target = name.replace(/\./g, '\\.');
    try {
      await waitUntil(() => loggedMessage(daemon, new RegExp(`^connected to ${target} \\(PostgreSQL 18\\.\\d+, primary\\)$`)) !== undefined, 20_000, 'the connected log line');
      await waitUntil(() => loggedMessage(daemon, /^tailing log file$/) !== undefined, 20_000, 'the tailer to open the log');
      await server.query('CHECKPOINT');
      await waitUntil(async () => {
        const metrics = await fetch(`${daemon.url}/metrics`).then((r) => r.text(), () => '');
        return new RegExp(`^pg_log_checkpoints_total\\{target="${target}",kind="checkpoint"\\} 1$`, 'm').test(metrics) && new RegExp(`^pg_up\\{target="${target}"\\} 1$`, 'm').test(metrics);
      }, 20_000, 'the checkpoint and pg_up in /metrics');
      const ready = await fetch(`${daemon.url}/readyz`);
      expect(ready.status).toBe(200);
      // The checkpoint was read from the live log, so a second one written right before SIGTERM
      // must be flushed to the store by the shutdown.
      await server.query('CHECKPOINT');
      await waitUntil(async () => {
        const metrics = await fetch(`${daemon.url}/metrics`).then((r) => r.text(), () => '');
        return /^pgvigil_log_lines_read_total\{[^}]*\} ([4-9]|\d\d+)$/m.test(metrics);
      }, 20_000, 'the second checkpoint read');
      daemon.child.kill('SIGTERM');
      expect(await daemon.exit).toBe(0);
      expect(loggedMessage(daemon, /^stopped$/)).toBeDefined();
      // The last entry may still have been waiting for continuation lines: it is not stored
      // half-read but re-read by the next run, which must end with each entry stored once.
      const again = await startDaemon(['--dsn', server.dsn(), '--log', server.logDir, '--db', db]);
      try {
        await waitUntil(() => checkpointMessages(db).length === 4, 20_000, 'all four checkpoint entries after the restart');
        again.child.kill('SIGTERM');
        expect(await again.exit).toBe(0);
      } finally {
        again.child.kill('SIGKILL');
      }
      expect(checkpointMessages(db).map((m) => m.split(':')[0])).toEqual(['checkpoint starting', 'checkpoint complete', 'checkpoint starting', 'checkpoint complete']);
    } finally {
      daemon.child.kill('SIGKILL');
    }
  });

  it('keeps retrying an unreachable server with backoff, says so with a hint, and still exits 0 on SIGTERM', async () => {
    const db = join(testTempDir('daemon'), 'pgvigil.db');
    const daemon = await startDaemon(['--name', 'orders-primary', '--dsn', `postgres://nobody@127.0.0.1:${await freePort()}/postgres`, '--db', db]);
    try {
      await waitUntil(() => loggedMessage(daemon, /^cannot connect; retrying with backoff$/) !== undefined, 20_000, 'the retry log line');
      const retry = loggedMessage(daemon, /^cannot connect; retrying with backoff$/)!;
      expect(retry.err).toMatch(/ECONNREFUSED/);
      expect(retry.hint).toMatch(/is PostgreSQL running/);
      const ready = await fetch(`${daemon.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(JSON.stringify(await ready.json())).toMatch(/"aspect":"postgres","target":"orders-primary","state":"failing"/);
      expect(daemon.child.exitCode).toBeNull();
      daemon.child.kill('SIGTERM');
      expect(await daemon.exit).toBe(0);
    } finally {
      daemon.child.kill('SIGKILL');
    }
  });
});
