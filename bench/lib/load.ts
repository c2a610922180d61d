/**
 * Drives a real PostgreSQL server for the benchmark corpus: pgbench (Debian's client, when
 * installed; otherwise a pgbench-like loop through `pg`) plus a loop of the incidents pgvigil is
 * about: lock waits, lock and statement timeouts, deadlocks, errors, temp files, autovacuum churn.
 * Bounded in time; only talks to the local test server.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import pg from 'pg';

export interface LoadTarget {
  host: string;
  port: number;
  user: string;
  database: string;
}

const PGBENCH_CANDIDATES = ['/usr/lib/postgresql/15/bin/pgbench', '/usr/bin/pgbench'];

export function pgbenchPath(): string | null {
  return PGBENCH_CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export interface LoadOptions {
  /** pgbench's rate limit in transactions per second (default 350, the reference corpus's rate). */
  tps?: number;
  /** The tables already made by prepareLoad (a caller that starts measuring after the set-up). */
  prepared?: boolean;
}

export async function driveLoad(target: LoadTarget, seconds: number, say: (msg: string) => void, options: LoadOptions = {}): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  if (!options.prepared) await prepareLoad(target);
  const pgbench = pgbenchPath();
  const tps = options.tps ?? 350;
  say(pgbench ? `load: ${pgbench} -c 4 -R ${tps} for ${seconds} s plus the incident loop` : `load: no pgbench binary; a pg loop of 4 clients for ${seconds} s`);
  const oltp = pgbench ? runPgbench(pgbench, target, seconds, tps) : Promise.all([0, 1, 2, 3].map(() => tpcbLoop(target, deadline)));
  await Promise.all([oltp, incidentLoop(target, deadline), churnLoop(target, deadline)]);
}

async function connect(target: LoadTarget): Promise<pg.Client> {
  const client = new pg.Client(target);
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** The tables the load works on (pgbench's, when installed, at scale 5). */
export async function prepareLoad(target: LoadTarget): Promise<void> {
  const pgbench = pgbenchPath();
  if (pgbench) await run(pgbench, ['-i', '-s', '5', '-q', ...connArgs(target)]);
  const c = await connect(target);
  try {
    if (!pgbench) {
      await c.query(`CREATE TABLE IF NOT EXISTS pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84))`);
      await c.query(`INSERT INTO pgbench_accounts SELECT g, 1, 0, '' FROM generate_series(1, 500000) g ON CONFLICT DO NOTHING`);
      await c.query(`CREATE TABLE IF NOT EXISTS pgbench_history (aid int, delta int, mtime timestamp)`);
    }
    await c.query(`CREATE TABLE IF NOT EXISTS bench_locks (id int PRIMARY KEY, v int)`);
    await c.query(`INSERT INTO bench_locks SELECT g, 0 FROM generate_series(1, 10) g ON CONFLICT DO NOTHING`);
    await c.query(`CREATE TABLE IF NOT EXISTS bench_churn (id int PRIMARY KEY, payload text)`);
    await c.query(`INSERT INTO bench_churn SELECT g, md5(g::text) FROM generate_series(1, 20000) g ON CONFLICT DO NOTHING`);
    await c.query(`ALTER TABLE bench_churn SET (autovacuum_vacuum_threshold = 200, autovacuum_vacuum_scale_factor = 0, autovacuum_analyze_threshold = 200, autovacuum_analyze_scale_factor = 0)`);
  } finally {
    await c.end();
  }
}

function connArgs(t: LoadTarget): string[] {
  return ['-h', t.host, '-p', String(t.port), '-U', t.user, t.database];
}

function runPgbench(binary: string, target: LoadTarget, seconds: number, tps: number): Promise<void> {
  return run(binary, ['-n', '-c', '4', '-j', '2', '-R', String(tps), '-T', String(seconds), ...connArgs(target)]);
}

function run(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PGCONNECT_TIMEOUT: '10' } });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`))));
  });
}

/** pgbench's TPC-B-like transaction, when no pgbench binary is installed. */
async function tpcbLoop(target: LoadTarget, deadline: number): Promise<void> {
  const c = await connect(target);
  try {
    while (Date.now() < deadline) {
      const aid = 1 + Math.floor(Math.random() * 500000);
      const delta = Math.floor(Math.random() * 10000) - 5000;
      await c.query('BEGIN');
      await c.query(`UPDATE pgbench_accounts SET abalance = abalance + ${delta} WHERE aid = ${aid}`);
      await c.query(`SELECT abalance FROM pgbench_accounts WHERE aid = ${aid}`);
      await c.query(`INSERT INTO pgbench_history (aid, delta, mtime) VALUES (${aid}, ${delta}, CURRENT_TIMESTAMP)`);
      await c.query('END');
    }
  } finally {
    await c.end();
  }
}

/** Updates and deletes that keep autovacuum and autoanalyze busy on bench_churn. */
async function churnLoop(target: LoadTarget, deadline: number): Promise<void> {
  const c = await connect(target);
  try {
    for (let i = 0; Date.now() < deadline; i++) {
      await c.query(`UPDATE bench_churn SET payload = md5(random()::text) WHERE id % 20 = ${i % 20}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await c.end();
  }
}

/** One of each incident per round, about once a second. */
async function incidentLoop(target: LoadTarget, deadline: number): Promise<void> {
  const a = await connect(target);
  const b = await connect(target);
  const ignore = (): undefined => undefined;
  try {
    for (let round = 0; Date.now() < deadline; round++) {
      // Lock wait ended by lock_timeout (still waiting is logged after deadlock_timeout).
      await a.query('BEGIN');
      await a.query('LOCK TABLE bench_locks IN ACCESS EXCLUSIVE MODE');
      await b.query(`SET lock_timeout = '300ms'`);
      await b.query('SELECT * FROM bench_locks').catch(ignore);
      await b.query('RESET lock_timeout');
      await a.query('COMMIT');
      // Lock wait that is acquired.
      await a.query('BEGIN');
      await a.query('UPDATE bench_locks SET v = v + 1 WHERE id = 1');
      const waiting = b.query('UPDATE bench_locks SET v = v + 1 WHERE id = 1').catch(ignore);
      await new Promise((r) => setTimeout(r, 250));
      await a.query('COMMIT');
      await waiting;
      // Deadlock.
      await a.query('BEGIN');
      await b.query('BEGIN');
      await a.query('UPDATE bench_locks SET v = v + 1 WHERE id = 2');
      await b.query('UPDATE bench_locks SET v = v + 1 WHERE id = 3');
      // The victim's statement fails first; it must roll back before the other can finish.
      const pa = a.query('UPDATE bench_locks SET v = v + 1 WHERE id = 3').catch(ignore);
      await new Promise((r) => setTimeout(r, 20));
      const pb = b.query('UPDATE bench_locks SET v = v + 1 WHERE id = 2').catch(ignore);
      const victim = await Promise.race([pa.then(() => a), pb.then(() => b)]);
      await victim.query('ROLLBACK');
      await Promise.all([pa, pb]);
      await (victim === a ? b : a).query('ROLLBACK');
      // Statement timeout, errors, a temp file.
      await a.query(`SET statement_timeout = '50ms'`);
      await a.query('SELECT pg_sleep(1)').catch(ignore);
      await a.query('RESET statement_timeout');
      await a.query('SELECT 1/0').catch(ignore);
      await a.query('INSERT INTO bench_locks VALUES (1, 0)').catch(ignore);
      await a.query(`SET work_mem = '64kB'`);
      await a.query('SELECT g FROM generate_series(1, 50000) g ORDER BY md5(g::text) LIMIT 1');
      await a.query('RESET work_mem');
      if (round % 10 === 0) await a.query('CHECKPOINT');
      await new Promise((r) => setTimeout(r, 300));
    }
  } finally {
    await a.end();
    await b.end();
  }
}
