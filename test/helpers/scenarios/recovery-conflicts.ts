/**
 * Recovery conflicts on a hot standby, one of each cheap reason: snapshot (VACUUM on the primary
 * removes rows a standby query may still see), lock (DROP TABLE while a standby transaction has
 * read the table) and database (DROP DATABASE while a standby session is connected to it).
 * Tablespace conflicts are left out: the harness's standby copy does not support tablespaces.
 */
import type { PgServer } from '../pg-harness.js';
import { waitUntil } from '../pg-server.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { withSessions } from './session.js';

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

export const standbyRecoveryConflicts: Scenario = {
  name: 'standby-recovery-conflicts',
  description:
    'On the standby (its log): a REPEATABLE READ reader running pg_sleep is cancelled by a snapshot conflict (DELETE + VACUUM ' +
    'on the primary); an idle-in-transaction reader of a table is terminated by a lock conflict (DROP TABLE on the primary); a ' +
    'session connected to a database is terminated when the primary drops it. Replay waits are logged (log_recovery_conflict_waits).',
  versions: ALL_VERSIONS,
  logOf: 'standby',
  settings: () => ({
    max_standby_streaming_delay: '1s',
    hot_standby_feedback: false,
    log_recovery_conflict_waits: true,
  }),
  sessionSettings: {},
  async run({ primary, standby, log }) {
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
      await reader.query('ROLLBACK');
      await log.waitFor(/recovery finished waiting after [\d.]+ ms: recovery conflict on snapshot/);

      await lockReader.query('BEGIN');
      await lockReader.query('SELECT count(*) FROM rc_lock');
      await primary.query('DROP TABLE rc_lock');
      await log.waitFor(/recovery finished waiting after [\d.]+ ms: recovery conflict on lock/);

      await primary.query('DROP DATABASE rc_dropped');
      await log.waitFor(new RegExp(`\\[${databaseReader.pid}\\] [^\\n]*FATAL:  terminating connection due to conflict with recovery\\n[^\\n]*DETAIL:  User was connected to a database that must be dropped`));
      await waitForReplay(primary, standby);
    });
  },
};
