/**
 * The collector scenarios every PostgreSQL version runs (collectors-pg15/18/19.test.ts): one
 * primary and one streaming standby per file, each polled by its own scheduler as a role with
 * only pg_monitor. Assertions are on samples, never on SQL text. The restart runs last.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, startStandby, type PgServer, type PgVersion } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { consumeXids, createMonitorRole, openSession, startPollRig, WAIT_MS, type PollRig } from './collectors-rig.js';
import type { PollStatus } from '../../src/sources/poll-scheduler.js';

export interface ScenarioContext {
  version: PgVersion;
  primary: PgServer;
  standby: PgServer;
  poller: PollRig;
  standbyPoller: PollRig;
}

// Errors a collector may meet while the tests drop databases (3D000, 55000 "cannot connect to
// invalid database", 57P01/57P04 sessions terminated, a connection waiting on the dropping
// database) and restart servers; anything else (42501 permission denied, 42703 undefined column,
// bad_row...) is a bug.
const EXPECTED_ERROR_CODES = new Set([
  '57P01', '57P02', '57P03', '57P04', '3D000', '55000', 'ECONNREFUSED', 'ECONNRESET', 'connection_terminated', 'connect_timeout',
]);

export function collectorScenarios(version: PgVersion, more?: (ctx: () => ScenarioContext) => void): void {
  const ctx = { version } as ScenarioContext;
  const standbyName = `collectors_standby_${version}`;

  beforeAll(async () => {
    ctx.primary = await startPrimary({
      version,
      name: `collectors-${version}`,
      settings: { wal_level: 'logical', max_prepared_transactions: 5, track_io_timing: true },
    });
    await createMonitorRole(ctx.primary);
    for (const [db, table] of [['shop', 'orders'], ['ledger', 'entries']] as const) {
      await ctx.primary.query(`CREATE DATABASE ${db}`);
      // Autovacuum off for the table: its dead rows must only go up while the test watches.
      await ctx.primary.query(`CREATE TABLE ${table} (id int PRIMARY KEY, amount int) WITH (autovacuum_enabled = false)`, [], db);
      await ctx.primary.query(`INSERT INTO ${table} SELECT g, g FROM generate_series(1, 2000) g`, [], db);
    }
    ctx.standby = await startStandby(ctx.primary, { name: standbyName });
    ctx.poller = await startPollRig(ctx.primary);
    ctx.standbyPoller = await startPollRig(ctx.standby, { target: `pg${version}_standby` });
  });

  afterAll(async () => {
    await ctx.standbyPoller?.stop();
    await ctx.poller?.stop();
    await destroyAllServers();
  });

  it('connects with only pg_monitor and names each server with its version and role', () => {
    const major = version;
    expect(ctx.poller.scheduler.status).toMatchObject({ connected: true, server: { inRecovery: false } });
    expect(ctx.standbyPoller.scheduler.status).toMatchObject({ connected: true, server: { inRecovery: true } });
    expect(ctx.poller.messages.find((m) => m.startsWith('connected to'))).toMatch(
      new RegExp(`^connected to pg${major} \\(PostgreSQL ${major}\\S*, primary\\)$`),
    );
    expect(ctx.standbyPoller.messages.find((m) => m.startsWith('connected to'))).toMatch(
      new RegExp(`^connected to pg${major}_standby \\(PostgreSQL ${major}\\S*, standby\\)$`),
    );
    expect(ctx.poller.scheduler.knownDatabases).toEqual(['ledger', 'postgres', 'shop']);
  });

  it('sees n_dead_tup rise in two databases after updates, with the change rate and REPACK budget', async () => {
    const tables = [['shop', 'orders'], ['ledger', 'entries']] as const;
    const before = new Map<string, number>();
    for (const [datname, relname] of tables) {
      const s = await ctx.poller.waitForSample('pg_stat_user_tables_n_dead_tup', { datname, relname }, (v) => v !== null, `n_dead_tup of ${datname}.${relname}`);
      before.set(datname, s.value ?? 0);
    }
    for (const [db, table] of tables) await ctx.primary.query(`UPDATE ${table} SET amount = amount + 1 WHERE id <= 500`, [], db);
    for (const [datname, relname] of tables) {
      await ctx.poller.waitForSample('pg_stat_user_tables_n_dead_tup', { datname, relname },
        (v) => v !== null && v >= (before.get(datname) ?? 0) + 400, `n_dead_tup of ${datname}.${relname} up by ~500`);
    }
    // One poll interval saw the 500 updates (a rate above zero, and the budget from it); the
    // quiet one after it has no budget limit: NULL, neither 0 nor infinity.
    const table = { datname: 'shop', relname: 'orders' };
    await waitUntil(() => {
      const rates = ctx.poller.stored('pg_stat_user_tables_changes_per_second', table);
      const busyAt = rates.find((s) => (s.value ?? 0) > 0)?.tsMs;
      return busyAt !== undefined && rates.some((s) => s.tsMs > busyAt && s.value === 0);
    }, WAIT_MS, 'a busy then a quiet change rate for shop.orders');
    const busy = ctx.poller.stored('pg_stat_user_tables_changes_per_second', table).find((s) => (s.value ?? 0) > 0)!;
    const budgets = ctx.poller.stored('pg_stat_user_tables_repack_seconds_until_ceiling', table);
    expect(budgets.find((s) => s.tsMs === busy.tsMs)?.value).toBeCloseTo(104_857_600 / busy.value!, 3);
    expect(budgets.find((s) => s.tsMs > busy.tsMs)?.value).toBeNull();
    const heapBytes = ctx.poller.latest('pg_stat_user_tables_relation_size_bytes', { datname: 'shop', relname: 'orders' })[0]?.value;
    expect(heapBytes).toBeGreaterThan(0);
    // Heap plus its primary key index.
    expect(ctx.poller.latest('pg_total_relation_size_bytes', { datname: 'shop', relname: 'orders' })[0]?.value).toBeGreaterThan(heapBytes!);
    expect(ctx.poller.latest('pg_stat_user_tables_tables_omitted', { datname: 'shop' })[0]?.value).toBe(0);
  });

  it('counts the tables pg_stat_user_tables lists, partitioned ones included, and sizes the largest', async () => {
    await ctx.primary.query('CREATE TABLE events (id int, at date) PARTITION BY RANGE (at)', [], 'ledger');
    await ctx.primary.query("CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')", [], 'ledger');
    const [row] = await ctx.primary.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_user_tables', [], 'ledger');
    await ctx.poller.waitForSample('pg_stat_user_tables_tables', { datname: 'ledger' }, (v) => v === row!.n, `the ${row!.n} tables of ledger counted`);
    await ctx.poller.waitForSample('pg_total_relation_size_bytes', { datname: 'ledger', relname: 'events_2026' }, (v) => v !== null, 'the partition sized');
  });

  it('sees a logical slot\'s catalog_xmin age grow while nobody consumes it', async () => {
    await ctx.primary.query("SELECT pg_create_logical_replication_slot('collectors_idle_slot', 'pgoutput')", [], 'shop');
    const labels = { slot_name: 'collectors_idle_slot' };
    const first = await ctx.poller.waitForSample('pg_replication_slots_catalog_xmin_age_xids', labels, (v) => v !== null, 'the slot catalog_xmin age');
    expect(ctx.poller.latest('pg_replication_slots_info', labels)[0]?.labels).toMatchObject({
      slot_type: 'logical', plugin: 'pgoutput', database: 'shop', owner: 'logical_subscription', temporary: 'false',
    });
    expect(ctx.poller.latest('pg_replication_slots_xmin_age_xids', labels)[0]?.value).toBeNull();
    await consumeXids(ctx.primary, 50);
    await ctx.poller.waitForSample('pg_replication_slots_catalog_xmin_age_xids', labels,
      (v) => v !== null && v >= (first.value ?? 0) + 50, 'the slot catalog_xmin age up by 50');
    await ctx.poller.waitForSample('pg_xmin_horizon_holder_age_xids', { kind: 'slot_catalog_xmin', name: 'collectors_idle_slot', scope: 'catalog' },
      (v) => v !== null && v >= 50, 'the slot among the xmin horizon holders');
    await ctx.primary.query("SELECT pg_drop_replication_slot('collectors_idle_slot')");
  });

  it('identifies a session holding back the xmin horizon by pid and database, and a prepared transaction', async () => {
    const { client, pid } = await openSession(ctx.primary, 'ledger');
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await client.query('SELECT count(*) FROM entries');
      await ctx.primary.query('BEGIN; CREATE TABLE prepared_probe (id int); PREPARE TRANSACTION \'collectors_px\'', [], 'shop');
      await consumeXids(ctx.primary, 20);
      const holder = await ctx.poller.waitForSample('pg_xmin_horizon_holder_age_xids', { kind: 'backend', pid: String(pid) },
        (v) => v !== null && v >= 20, `session ${pid} as an xmin holder`);
      expect(holder.labels).toMatchObject({ datname: 'ledger', scope: 'database', state: 'idle in transaction', query: 'SELECT count(*) FROM entries' });
      await ctx.poller.waitForSample('pg_xmin_horizon_holder_age_xids', { kind: 'prepared_xact', name: 'collectors_px', datname: 'shop' },
        (v) => v !== null && v >= 20, 'the prepared transaction as an xmin holder');
      await ctx.poller.waitForSample('pg_xmin_horizon_age_xids', { kind: 'backend', scope: 'database' }, (v) => v !== null && v >= 20, 'the oldest backend age');
      // The same session by who it is, never by pid: one client backend of ledger idle in a transaction, for a while.
      await ctx.poller.waitForSample('pg_stat_activity_idle_in_transaction', { datname: 'ledger', application_name: '' }, (v) => v === 1, 'the session idle in a transaction in ledger');
      expect(ctx.poller.latest('pg_stat_activity_idle_in_transaction_max_seconds', { datname: 'ledger', application_name: '' })[0]?.value).toBeGreaterThan(0);
    } finally {
      await client.end();
      await ctx.primary.query("ROLLBACK PREPARED 'collectors_px'", [], 'shop');
    }
    await waitUntil(() => ctx.poller.latest('pg_xmin_horizon_holder_age_xids', { pid: String(pid) }).length === 0, WAIT_MS, 'the holder gone once it ended');
  });

  it('samples the standby\'s receive and replay LSN and lag, and sees replay stand still while paused', async () => {
    const sb = ctx.standbyPoller;
    await sb.waitForSample('pg_standby_receive_lsn_bytes', {}, (v) => v !== null && v > 0, 'receive LSN');
    await sb.waitForSample('pg_standby_replay_lsn_bytes', {}, (v) => v !== null && v > 0, 'replay LSN');
    await sb.waitForSample('pg_stat_wal_receiver_up', {}, (v) => v === 1, 'a running walreceiver');
    expect(sb.latest('pg_stat_wal_receiver_info')[0]?.labels).toMatchObject({ status: 'streaming' });
    expect(sb.latest('pg_stat_database_conflicts_confl_lock_total', { datname: 'shop' })).toHaveLength(1);
    await ctx.poller.waitForSample('pg_stat_replication_replay_lsn_bytes', { application_name: standbyName }, (v) => v !== null, 'the standby seen from the primary');

    await ctx.standby.query('SELECT pg_wal_replay_pause()');
    try {
      // WAL keeps arriving while replay is paused: write on every check.
      await waitUntil(async () => {
        await ctx.primary.query('INSERT INTO orders SELECT g, g FROM generate_series(100001, 100100) g ON CONFLICT (id) DO UPDATE SET amount = orders.amount + 1', [], 'shop');
        const still = sb.latest('pg_standby_replay_standing_still_seconds')[0]?.value ?? 0;
        const pending = sb.latest('pg_standby_replay_pending_bytes')[0]?.value ?? 0;
        return still >= 2 && pending > 0;
      }, WAIT_MS, 'replay standing still for 2 s while WAL arrives');
      expect(sb.latest('pg_standby_replay_paused')[0]?.value).toBe(1);
      if (version >= 14) expect(sb.latest('pg_standby_replay_pause_state')[0]?.labels.pause_state).toBe('paused');
      await ctx.poller.waitForSample('pg_stat_replication_replay_lag_bytes', { application_name: standbyName }, (v) => v !== null && v > 0, 'replay lag in bytes on the primary');
    } finally {
      await ctx.standby.query('SELECT pg_wal_replay_resume()');
    }
    await sb.waitForSample('pg_standby_replay_standing_still_seconds', {}, (v) => v === 0, 'replay moving again');
  });

  // It once failed about one run in five: a server-wide run in flight during the DROP brought
  // the database's series back (fixed; poll-scheduler.test.ts reproduces that race on purpose).
  it('picks up a database created while running and forgets it once dropped', async () => {
    await ctx.primary.query('CREATE DATABASE pop');
    await ctx.primary.query('CREATE TABLE visits (id int PRIMARY KEY)', [], 'pop');
    await ctx.poller.waitForSample('pg_stat_user_tables_tables', { datname: 'pop' }, (v) => v === 1, 'the new database polled');
    // FORCE: the poller's own connection to it must not block the drop, and must not break it.
    await ctx.primary.query('DROP DATABASE pop WITH (FORCE)');
    await waitUntil(() => !ctx.poller.scheduler.knownDatabases.includes('pop'), WAIT_MS, 'the dropped database forgotten');
    await waitUntil(() => [...ctx.poller.scheduler.latest.values()].every((s) => s.labels.datname !== 'pop'), WAIT_MS, 'its series gone from latest');
    expect(ctx.poller.scheduler.status.connected).toBe(true);
  });

  more?.(() => ctx);

  it('runs every collector without a permission, column or row error', async () => {
    for (const poller of [ctx.poller, ctx.standbyPoller]) {
      for (const [name, stats] of poller.scheduler.stats) {
        const unexpected = Object.keys(stats.errorsByCode).filter((code) => !EXPECTED_ERROR_CODES.has(code));
        expect({ name, unexpected, lastError: unexpected.length ? stats.lastError : null }).toEqual({ name, unexpected: [], lastError: null });
      }
    }
    const ran = [...ctx.poller.scheduler.stats].filter(([, s]) => s.runs > 0).map(([name]) => name);
    expect(ran).toEqual(expect.arrayContaining(['pg_stat_user_tables', 'pg_replication_slots', 'pg_xmin_horizon', 'pg_stat_replication',
      'pg_stat_progress_vacuum', 'pg_stat_progress_repack', 'pg_maintenance_sessions', 'pg_lock_waits', 'pg_settings', 'pg_stat_database',
      'pg_database', 'pg_database_size', 'pg_stat_checkpointer', 'pg_stat_archiver', 'pg_stat_activity', 'pg_repack_leftovers', 'pg_invalid_indexes',
      'pg_total_relation_size']));
    // Waited for, not read at once: CI once found shop's size missing here (15 and 16, same run,
    // not reproduced since, even under load). A run that failed, or a probe that timed out and
    // counted the server lost, during the DROP above rightly empties it until the next run.
    await ctx.poller.waitForSample('pg_database_size_bytes', { datname: 'shop' }, (v) => (v ?? 0) > 0, 'the size of shop');
    await ctx.poller.waitForSample('pg_database_datfrozenxid_age_xids', { datname: 'template0' }, (v) => (v ?? 0) > 0, 'the datfrozenxid age of template0');
    // archive_mode is off here: the archiver's counters are there, at zero, and no failure has an age.
    expect(ctx.poller.latest('pg_stat_archiver_failed_count_total')[0]?.value).toBe(0);
    expect(ctx.poller.latest('pg_stat_archiver_last_failed_age_seconds')[0]?.value).toBeNull();
    const standbyRan = [...ctx.standbyPoller.scheduler.stats].filter(([, s]) => s.runs > 0).map(([name]) => name);
    expect(standbyRan).toEqual(expect.arrayContaining(['pg_standby', 'pg_stat_database_conflicts']));
  });

  // Not retried: about one run in five failed here (no reconnect 20 s after the restart) until the
  // poller stopped waiting on pools that never finish closing (30cd9c8); a retry would hide its return.
  it('survives a restart of the primary, with the gap visible in the series', async () => {
    const connectedBefore = connectedLines(ctx.poller.messages);
    const transitions: Array<{ connected: boolean; atMs: number }> = [];
    const off = ctx.poller.scheduler.onStatus((s: PollStatus) => transitions.push({ connected: s.connected, atMs: Date.now() }));
    const startedBefore = ctx.poller.scheduler.status.server?.startedAtMs;
    // Samples from before the restart, whichever tests ran before this one.
    await waitUntil(() => ctx.poller.stored('pg_stat_database_xact_commit_total', { datname: 'postgres' }).length > 0, WAIT_MS, 'samples before the restart');
    try {
      await ctx.primary.stop('fast');
      await waitUntil(() => !ctx.poller.scheduler.status.connected, WAIT_MS, 'the poller to notice the server gone');
      await ctx.primary.start();
      await waitUntil(() => ctx.poller.scheduler.status.connected, WAIT_MS, 'the poller to reconnect');
    } finally {
      off();
    }
    expect(ctx.poller.scheduler.status.server?.startedAtMs).not.toBe(startedBefore);
    expect(connectedLines(ctx.poller.messages) - connectedBefore, 'one reconnect').toBe(1);
    const downAt = transitions.find((t) => !t.connected)!.atMs;
    const upAt = transitions.find((t) => t.connected && t.atMs > downAt)!.atMs;
    // pg_up reads 0 during the gap, and the sampled series have nothing inside it: no interpolation.
    await waitUntil(() => ctx.poller.stored('pg_stat_database_xact_commit_total', { datname: 'postgres' }).some((s) => s.tsMs > upAt),
      WAIT_MS, 'samples after the reconnect');
    expect(ctx.poller.stored('pg_up').some((s) => s.value === 0 && s.tsMs >= downAt && s.tsMs <= upAt)).toBe(true);
    const commits = ctx.poller.stored('pg_stat_database_xact_commit_total', { datname: 'postgres' });
    expect(commits.filter((s) => s.tsMs > downAt && s.tsMs < upAt)).toEqual([]);
    expect(commits.some((s) => s.tsMs <= downAt)).toBe(true);
  });
}

/** "connected to pg18 (PostgreSQL 18.4, primary)" lines the poller logged so far. */
function connectedLines(messages: readonly string[]): number {
  return messages.filter((m) => /^connected to pg\d+ \(PostgreSQL \S+, primary\)$/.test(m)).length;
}
