/**
 * The incident `pgvigil demo` plays on a primary and its hot standby, in three acts that overlap
 * as they do in real life, about 70 s in all:
 *
 * 1. A 55 s report on the standby, with hot_standby_feedback = on: the primary's vacuum may not
 *    remove rows the report could still see, in every database (shop and billing both churn).
 * 2. A standby query reads build_logs; the primary drops it. Replaying the DROP's lock waits for
 *    the reader (a recovery conflict on lock), replay stands still and lag grows, until
 *    max_standby_streaming_delay cancels the reader.
 * 3. A migration's ALTER TABLE queues for ACCESS EXCLUSIVE behind a long transaction; every query
 *    on the table queues behind the ALTER, until its lock_timeout cancels it.
 *
 * The sessions are real clients with application names, so pgvigil's alerts name them.
 */
import pg from 'pg';
import { MONITOR_ROLE, STANDBY_CONFLICT_DELAY_S } from './demo-config.js';

/** What the incident needs of a server (the demo's Cluster). */
export interface IncidentServer {
  dsn(database?: string): string;
  query(sql: string, params?: unknown[], database?: string): Promise<unknown[]>;
}

export interface IncidentCast {
  primary: IncidentServer;
  standby: IncidentServer;
}

const REPORT_S = 55;
const LOCK_TIMEOUT_S = 15;
const TABLE_ROWS = 20_000;
/** XIDs burnt at once on the primary so the held horizon's age shows within seconds. */
const XID_BURST = 3_000;

/** When each act starts, in seconds after the incident's start. */
export const ACTS = { horizon: 0, dropConflict: 8, lockQueue: 8 + STANDBY_CONFLICT_DELAY_S + 5, over: REPORT_S + 15 } as const;

/** Tables that churn (so autovacuum runs and reports) and the monitoring role; before the standby is built. */
export async function prepareIncident(primary: IncidentServer): Promise<void> {
  await primary.query(`CREATE ROLE ${MONITOR_ROLE} LOGIN`);
  await primary.query(`GRANT pg_monitor TO ${MONITOR_ROLE}`);
  for (const database of ['shop', 'billing']) await primary.query(`CREATE DATABASE ${database}`);
  const churning = (table: string) => `CREATE TABLE ${table} (id int PRIMARY KEY, status text NOT NULL, amount numeric NOT NULL)
    WITH (autovacuum_vacuum_threshold = 50, autovacuum_vacuum_scale_factor = 0)`;
  await primary.query(churning('orders'), [], 'shop');
  await primary.query(`INSERT INTO orders SELECT g, 'new', g FROM generate_series(1, ${TABLE_ROWS}) g`, [], 'shop');
  await primary.query('CREATE TABLE build_logs (id int PRIMARY KEY, line text NOT NULL)', [], 'shop');
  await primary.query("INSERT INTO build_logs SELECT g, md5(g::text) FROM generate_series(1, 10000) g", [], 'shop');
  await primary.query(churning('invoices'), [], 'billing');
  await primary.query(`INSERT INTO invoices SELECT g, 'open', g FROM generate_series(1, ${TABLE_ROWS}) g`, [], 'billing');
}

/**
 * Plays the acts, telling each through `say`, then keeps the churn going until `signal` aborts.
 * Resolves once every session it opened is closed.
 */
export async function playIncident(cast: IncidentCast, say: (line: string) => void, signal: AbortSignal): Promise<void> {
  const sessions: pg.Client[] = [];
  const background: Array<Promise<unknown>> = [];
  const open = async (server: IncidentServer, database: string, application: string) => {
    const client = new pg.Client({ connectionString: server.dsn(database), application_name: application });
    // A server stopped under the demo, or a session cancelled by it, must not crash the demo.
    client.on('error', () => undefined);
    sessions.push(client);
    await client.connect();
    return client;
  };
  /** A statement expected to end in an error: its message is part of the story. */
  const expectFailure = (what: string, running: Promise<unknown>) => background.push(running.then(
    () => undefined,
    (error: Error) => { if (!signal.aborted) say(`${what}: ${error.message}`); },
  ));
  const startMs = Date.now();
  const at = (seconds: number) => sleepUntil(startMs + seconds * 1000, signal);

  try {
    for (const [database, table] of [['shop', 'orders'], ['billing', 'invoices']] as const) {
      background.push(churn(await open(cast.primary, database, `${database}-app`), table, signal));
    }

    await at(ACTS.horizon);
    say(`act 1: a ${REPORT_S} s report on the standby (hot_standby_feedback = on) holds the primary's xmin horizon: ` +
      'vacuum may not remove rows the report could still see, in shop and in billing');
    const report = await open(cast.standby, 'billing', 'monthly-report');
    background.push(report.query(`SELECT pg_sleep(${REPORT_S}), count(*) FROM invoices`).then(
      () => { if (!signal.aborted) say('act 1: the standby report finished: the horizon moves again, autovacuum catches up'); },
      (error: Error) => { if (!signal.aborted) say(`act 1: the standby report ended: ${error.message}`); },
    ));
    await cast.primary.query(`DO $$ BEGIN FOR i IN 1..${XID_BURST} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`, [], 'shop');

    if (!(await at(ACTS.dropConflict))) return;
    say('act 2: a standby query reads shop.build_logs; the primary drops the table: replaying the DROP waits for the reader ' +
      `(a recovery conflict on lock) for up to max_standby_streaming_delay = ${STANDBY_CONFLICT_DELAY_S} s`);
    const reader = await open(cast.standby, 'shop', 'build-dashboard');
    expectFailure('act 2: the standby reader', reader.query('SELECT pg_sleep(60), count(*) FROM build_logs'));
    if (!(await at(ACTS.dropConflict + 1))) return;
    await cast.primary.query('DROP TABLE build_logs', [], 'shop');

    if (!(await at(ACTS.lockQueue))) return;
    say(`act 3: a migration's ALTER TABLE orders (lock_timeout ${LOCK_TIMEOUT_S} s) queues behind a long transaction; queries pile up behind it`);
    const holder = await open(cast.primary, 'shop', 'nightly-export');
    await holder.query('BEGIN');
    await holder.query("SELECT count(*) FROM orders WHERE status = 'new'");
    const migration = await open(cast.primary, 'shop', 'migration');
    await migration.query(`SET lock_timeout = '${LOCK_TIMEOUT_S}s'`);
    expectFailure('act 3: the migration', migration.query('ALTER TABLE orders ADD COLUMN note text'));
    if (!(await at(ACTS.lockQueue + 1))) return;
    for (let i = 1; i <= 3; i++) {
      const web = await open(cast.primary, 'shop', 'web');
      background.push(web.query('SELECT status FROM orders WHERE id = $1', [i]).catch(() => undefined));
    }
    if (!(await at(ACTS.lockQueue + LOCK_TIMEOUT_S + 3))) return;
    await holder.query('COMMIT');

    if (!(await at(ACTS.over))) return;
    say('the incident is over; pgvigil keeps watching');
    await sleepUntil(Number.POSITIVE_INFINITY, signal);
  } finally {
    await Promise.all(sessions.map((client) => client.end().catch(() => undefined)));
    await Promise.allSettled(background);
  }
}

/** Updates a tenth of the table every second, so autovacuum has dead rows to report. */
async function churn(client: pg.Client, table: string, signal: AbortSignal): Promise<void> {
  for (let round = 0; !signal.aborted; round++) {
    try {
      await client.query(`UPDATE ${table} SET amount = amount + 1 WHERE id % 10 = $1`, [round % 10]);
    } catch {
      if (signal.aborted) return;
    }
    await sleepUntil(Date.now() + 1_000, signal);
  }
}

/** Waits until the time, or until aborted; true when the time came. */
function sleepUntil(whenMs: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    // Infinity would overflow setTimeout: wait for the abort alone.
    const timer = Number.isFinite(whenMs) ? setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, Math.max(0, whenMs - Date.now())) : undefined;
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
