/**
 * `npm start`: a throwaway PostgreSQL 18 (the embedded npm package, run as an unprivileged user)
 * with the logging settings pgvigil wants and a small workload that produces autovacuum runs,
 * lock waits, a lock timeout and checkpoints; and pgvigil watching it, as a real `pgvigil run`
 * child process. Ctrl-C stops both and removes the server's temporary directory.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { destroyAllServers, startPrimary } from '../test/helpers/pg-harness.js';

const LISTEN = process.env.PGVIGIL_LISTEN ?? '127.0.0.1:9899';

async function main(): Promise<void> {
  console.log('starting PostgreSQL 18 (embedded) ...');
  const server = await startPrimary({
    version: 18,
    name: 'demo',
    settings: {
      log_autovacuum_min_duration: 0,
      autovacuum_naptime: '5s',
      log_lock_waits: true,
      deadlock_timeout: '200ms',
      log_checkpoints: true,
      log_temp_files: 0,
      log_recovery_conflict_waits: true,
      checkpoint_timeout: '30s',
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'pgvigil-demo-'));
  const db = join(dir, 'pgvigil.db');
  const config = join(dir, 'pgvigil.yaml');
  // The log is read from its beginning, so the server's start-up is part of the demo.
  writeFileSync(config, stringify({ targets: [{ name: 'demo', dsn: server.dsn(), log: { path: server.logDir, start_at: 'beginning' } }] }));
  console.log(`PostgreSQL 18 on ${server.dsn()}, log in ${server.logDir}`);
  const pgvigil = spawn(process.execPath, ['bin/pgvigil.js', 'run', '--config', config, '--db', db, '--listen', LISTEN], { stdio: 'inherit' });
  console.log(`pgvigil: http://${LISTEN}/metrics  http://${LISTEN}/readyz  http://${LISTEN}/api/events  (store ${db}); Ctrl-C stops`);

  const stop = new AbortController();
  const shutdown = async () => {
    if (stop.signal.aborted) return;
    stop.abort();
    pgvigil.kill('SIGTERM');
    await new Promise((resolve) => (pgvigil.exitCode !== null ? resolve(null) : pgvigil.once('exit', resolve)));
    await destroyAllServers();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  pgvigil.once('exit', (code) => {
    if (!stop.signal.aborted) console.error(`pgvigil exited with code ${code}`);
    void shutdown();
  });
  await workload(server.dsn(), stop.signal);
}

/** Churn that gives pgvigil something to report: dead tuples, lock queues, a lock timeout. */
async function workload(dsn: string, signal: AbortSignal): Promise<void> {
  const writer = new pg.Client({ connectionString: dsn, application_name: 'demo-writer' });
  const holder = new pg.Client({ connectionString: dsn, application_name: 'demo-lock-holder' });
  const waiter = new pg.Client({ connectionString: dsn, application_name: 'demo-lock-waiter' });
  await Promise.all([writer.connect(), holder.connect(), waiter.connect()]);
  await writer.query(`CREATE TABLE IF NOT EXISTS orders (id int PRIMARY KEY, status text, amount numeric)
    WITH (autovacuum_vacuum_threshold = 100, autovacuum_vacuum_scale_factor = 0);
    CREATE INDEX IF NOT EXISTS orders_status ON orders (status);
    INSERT INTO orders SELECT g, 'new', g FROM generate_series(1, 20000) g ON CONFLICT DO NOTHING`);
  for (let round = 0; !signal.aborted; round++) {
    await writer.query("UPDATE orders SET status = CASE status WHEN 'new' THEN 'paid' ELSE 'new' END, amount = amount + 1 WHERE id % 7 = $1", [round % 7]);
    if (round % 5 === 0) {
      // A lock queue: one session holds the table, another waits past deadlock_timeout, then times out.
      await holder.query('BEGIN; LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      await waiter.query("SET lock_timeout = '1s'");
      await waiter.query('SELECT count(*) FROM orders').catch(() => undefined);
      await holder.query('COMMIT');
    }
    if (round % 20 === 0) await writer.query('CHECKPOINT');
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  await Promise.all([writer.end(), holder.end(), waiter.end()]);
}

main().catch(async (err) => {
  console.error(err);
  await destroyAllServers();
  process.exit(1);
});
