/**
 * Recovery conflicts on a hot standby, every reason a test can provoke on demand: snapshot (VACUUM on
 * the primary removes rows a standby query may still see), lock (DROP TABLE while a standby
 * transaction has read the table), database (DROP DATABASE while a standby session is connected to
 * it), buffer pin (VACUUM prunes a page a standby cursor keeps pinned) and tablespace (DROP
 * TABLESPACE while a standby session keeps a temporary file in it).
 *
 * The tablespace is made in place (allow_in_place_tablespaces, PG 15+; a developer option), after
 * the standby was built: its replay creates a directory inside the standby's own pg_tblspc, so the
 * two servers on one machine never share a tablespace directory, and the harness's standby copy
 * (which refuses tablespace symlinks) is not involved. Left out: the logical-slot and startup
 * deadlock reasons.
 */
import type { PgServer, PgVersion } from '../pg-harness.js';
import { waitUntil, type Settings } from '../pg-server.js';
import type { LogWatcher } from './log-watcher.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { withSessions, type Session } from './session.js';

const REPLAY_WAIT_MS = 30_000;

/** Waits until the standby has replayed everything the primary has written so far. */
export async function waitForReplay(primary: PgServer, standby: PgServer): Promise<void> {
  const [row] = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  if (!row) throw new Error('pg_current_wal_lsn() returned no row');
  await waitUntil(
    async () => (await standby.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [row.lsn]))[0]?.done === true,
    REPLAY_WAIT_MS,
    `the standby on port ${standby.port} to replay up to ${row.lsn}`,
  );
}

/** The standby settings of every recovery-conflict scenario: cancel after 1 s, log the waits (14+). */
function conflictSettings(version: PgVersion): Settings {
  return { max_standby_streaming_delay: '1s', hot_standby_feedback: false, ...(logsWaits(version) ? { log_recovery_conflict_waits: true } : {}) };
}

/** log_recovery_conflict_waits is new in 14: a PG 13 standby logs the cancel, never the wait. */
function logsWaits(version: PgVersion): boolean {
  return version >= 14;
}

/** Waits until `session` is running `sql` on its server, so a conflict meets a statement, not an idle session. */
async function waitUntilRunning(server: PgServer, session: Session, sql: string): Promise<void> {
  await waitUntil(
    async () => (await server.query<{ running: boolean }>("SELECT state = 'active' AND query = $2 AS running FROM pg_stat_activity WHERE pid = $1", [session.pid, sql]))[0]?.running === true,
    REPLAY_WAIT_MS,
    `session ${session.label} (pid ${session.pid}) to run ${sql}`,
  );
}

/** A one-page table with dead rows only VACUUM removes (no autovacuum, no truncation: live rows stay on the page). */
async function createTableWithDeadRows(primary: PgServer, table: string): Promise<void> {
  await primary.query(`CREATE TABLE ${table} (id int NOT NULL, note text NOT NULL) WITH (autovacuum_enabled = off)`);
  await primary.query(`INSERT INTO ${table} SELECT g, md5(g::text) FROM generate_series(1, 100) g`);
  await primary.query(`DELETE FROM ${table} WHERE id % 2 = 0`);
}

/** The FATAL a conflict gives session `pid`, with the DETAIL naming the reason (its start is enough). */
function terminatedByConflict(pid: number, detail: string): RegExp {
  return new RegExp(`\\[${pid}\\] [^\\n]*FATAL:  terminating connection due to conflict with recovery\\n[^\\n]*DETAIL:  ${detail}`);
}

/**
 * Ends the transaction whose statement a conflict cancelled. PG 15 may terminate the session
 * instead: its SIGUSR1 handler decides on the conflict in signal context, so the startup process's
 * repeated signal, arriving before the cancelled backend has let go of the pin or temp file, queues
 * a second cancel that ends the then idle session with a FATAL. Seen in most PG 15 buffer-pin runs
 * and some tablespace runs here, in none on 18 or 19; the log must then show that FATAL.
 */
async function endCancelledTransaction(session: Session, log: LogWatcher, detail: string): Promise<void> {
  const rolledBack = await session.query('ROLLBACK').then(() => true, () => false);
  if (!rolledBack) await log.waitFor(terminatedByConflict(session.pid, detail));
}

/** `count` "recovery finished waiting" lines of one reason, so a second conflict is not mistaken for the first. */
function finishedWaiting(reason: string, count: number): RegExp {
  return new RegExp(`(?:recovery finished waiting after [\\d.]+ ms: recovery conflict on ${reason}[\\s\\S]*?){${count}}`);
}

export const standbyRecoveryConflicts: Scenario = {
  name: 'standby-recovery-conflicts',
  description:
    'On the standby (its log): a REPEATABLE READ reader running pg_sleep is cancelled by a snapshot conflict (DELETE + VACUUM ' +
    'on the primary); an idle-in-transaction reader of a table is terminated by a lock conflict (DROP TABLE on the primary); a ' +
    'session connected to a database is terminated when the primary drops it. Replay waits are logged (log_recovery_conflict_waits).',
  versions: ALL_VERSIONS,
  logOf: 'standby',
  settings: conflictSettings,
  sessionSettings: {},
  async run({ version, primary, standby, log }) {
    if (!standby) throw new Error('standby-recovery-conflicts needs a standby');
    await primary.query('CREATE TABLE rc_snapshot (id int NOT NULL, note text NOT NULL)');
    await primary.query('INSERT INTO rc_snapshot SELECT g, md5(g::text) FROM generate_series(1, 1000) g');
    await primary.query('CREATE TABLE rc_lock (id int NOT NULL)');
    await primary.query('INSERT INTO rc_lock SELECT generate_series(1, 10)');
    await primary.query('CREATE DATABASE rc_dropped');
    await waitForReplay(primary, standby);

    const readers = { reader: 'postgres', lockReader: 'postgres', databaseReader: 'rc_dropped' };
    await withSessions(standby, readers, async ({ reader, lockReader, databaseReader }) => {
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await reader.query('SELECT count(*) FROM rc_snapshot');
      const cancelled = reader.expectError('SELECT pg_sleep(60)', '40001');
      await primary.query('DELETE FROM rc_snapshot WHERE id % 2 = 0');
      await primary.query('VACUUM rc_snapshot');
      await cancelled;
      await endCancelledTransaction(reader, log, SNAPSHOT_DETAIL);
      if (logsWaits(version)) await log.waitFor(/recovery finished waiting after [\d.]+ ms: recovery conflict on snapshot/);

      await lockReader.query('BEGIN');
      await lockReader.query('SELECT count(*) FROM rc_lock');
      await primary.query('DROP TABLE rc_lock');
      if (logsWaits(version)) await log.waitFor(/recovery finished waiting after [\d.]+ ms: recovery conflict on lock/);
      else await waitForReplay(primary, standby);

      await primary.query('DROP DATABASE rc_dropped');
      await log.waitFor(terminatedByConflict(databaseReader.pid, 'User was connected to a database that must be dropped'));
      await waitForReplay(primary, standby);
    });
  },
};

const SLEEP = 'SELECT pg_sleep(60)';
const SNAPSHOT_DETAIL = 'User query might have needed to see row versions that must be removed';
const PIN_DETAIL = 'User was holding shared buffer pin for too long';

export const standbyBufferPinConflicts: Scenario = {
  name: 'standby-buffer-pin-conflicts',
  description:
    'On the standby (its log): a cursor that fetched one row keeps its heap page pinned while the session is idle in ' +
    'transaction; VACUUM on the primary prunes that page, replay waits for the cleanup lock and the session is ' +
    'terminated (buffer pin). A second cursor keeps a page pinned while its session runs pg_sleep; that statement is ' +
    'cancelled. Both snapshots are newer than the deletes, so neither is a snapshot conflict. Replay waits are logged ' +
    '(log_recovery_conflict_waits).',
  versions: ALL_VERSIONS,
  logOf: 'standby',
  settings: conflictSettings,
  sessionSettings: {},
  async run({ version, primary, standby, log }) {
    if (!standby) throw new Error('standby-buffer-pin-conflicts needs a standby');
    await createTableWithDeadRows(primary, 'rc_pin_idle');
    await createTableWithDeadRows(primary, 'rc_pin_busy');
    await waitForReplay(primary, standby);

    await withSessions(standby, { idleHolder: 'postgres', busyHolder: 'postgres' }, async ({ idleHolder, busyHolder }) => {
      // The snapshot is taken after the deletes were replayed: replay's snapshot check passes, its cleanup lock waits.
      await idleHolder.query('BEGIN');
      await idleHolder.query('DECLARE pin_idle CURSOR FOR SELECT id FROM rc_pin_idle');
      await idleHolder.query('FETCH 1 FROM pin_idle');
      await primary.query('VACUUM rc_pin_idle');
      await log.waitFor(terminatedByConflict(idleHolder.pid, PIN_DETAIL));
      if (logsWaits(version)) await log.waitFor(finishedWaiting('buffer pin', 1));

      await busyHolder.query('BEGIN');
      await busyHolder.query('DECLARE pin_busy CURSOR FOR SELECT id FROM rc_pin_busy');
      await busyHolder.query('FETCH 1 FROM pin_busy');
      const cancelled = busyHolder.expectError(SLEEP, '40001');
      await waitUntilRunning(standby, busyHolder, SLEEP);
      await primary.query('VACUUM rc_pin_busy');
      await cancelled;
      await endCancelledTransaction(busyHolder, log, PIN_DETAIL);
      if (logsWaits(version)) await log.waitFor(finishedWaiting('buffer pin', 2));
    });
  },
};

export const standbyTablespaceConflict: Scenario = {
  name: 'standby-tablespace-conflict',
  description:
    'On the standby (its log): a session with temp_tablespaces pointing at an in-place tablespace opens a cursor whose ' +
    'sort spills to a temporary file there (work_mem 64kB), then runs pg_sleep; DROP TABLESPACE on the primary cannot ' +
    'remove the directory on replay, and the statement is cancelled (tablespace). Replay waits are logged ' +
    '(log_recovery_conflict_waits).',
  versions: ALL_VERSIONS,
  logOf: 'standby',
  settings: conflictSettings,
  sessionSettings: { allow_in_place_tablespaces: 'on', temp_tablespaces: 'rc_temp_space', work_mem: '64kB' },
  async run({ version, primary, standby, log }) {
    if (!standby) throw new Error('standby-tablespace-conflict needs a standby');
    // CREATE TABLESPACE refuses a transaction block, so the SET needs a session of its own.
    await withSessions(primary, { admin: 'postgres' }, async ({ admin }) => {
      await admin.query('SET allow_in_place_tablespaces = on');
      await admin.query("CREATE TABLESPACE rc_temp_space LOCATION ''");
    });
    await waitForReplay(primary, standby);

    await withSessions(standby, { spiller: 'postgres' }, async ({ spiller }) => {
      await spiller.query('SET temp_tablespaces = rc_temp_space');
      await spiller.query("SET work_mem = '64kB'");
      await spiller.query('BEGIN');
      await spiller.query('DECLARE spill CURSOR FOR SELECT md5(g::text) FROM generate_series(1, 20000) g ORDER BY 1');
      await spiller.query('FETCH 1 FROM spill');
      const [temp] = await standby.query<{ files: number }>(
        "SELECT count(*)::int AS files FROM pg_ls_tmpdir((SELECT oid FROM pg_tablespace WHERE spcname = 'rc_temp_space'))",
      );
      if ((temp?.files ?? 0) === 0) throw new Error('the spilled sort left no temporary file in rc_temp_space on the standby');
      const cancelled = spiller.expectError(SLEEP, '40001');
      await waitUntilRunning(standby, spiller, SLEEP);
      await primary.query('DROP TABLESPACE rc_temp_space');
      await cancelled;
      await endCancelledTransaction(spiller, log, 'User was or might have been using tablespace');
      if (logsWaits(version)) await log.waitFor(finishedWaiting('tablespace', 1));
      await waitForReplay(primary, standby);
    });
  },
};
