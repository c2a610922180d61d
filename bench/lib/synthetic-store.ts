/**
 * A pgvigil store filled day by day with synthetic history shaped like what the collectors and
 * the log produce for a primary (`primary`) and its standby (`standby1`) at the default caps:
 * every series name the collectors declare, with the labels they give it, per table (the kept
 * tables: max_tables_per_database per database), per database or per server; sessions that come
 * and go (xmin holders, lock waiters, autovacuum workers: a new pid each, their query text and
 * state as the series' info); and the events the rules read (autovacuum, lock waits, DDL,
 * lock timeouts, recovery conflict waits) plus checkpoints.
 *
 * Written straight into the tables, in bulk, one transaction per day: a series' samples of a
 * day are one INSERT ... SELECT over a recursive CTE, so 14 days build in about a minute rather
 * than the hours the StoreWriter would take sample by sample. Rows look as the writer leaves
 * them: identity labels in `labels`, descriptive ones in `info` (series-identity.ts), seen_ms
 * the newest sample.
 *
 * Densities: series the rules read are written at their collector's interval (1 s to 60 s).
 * Per-table series are written every `tableStepMs` (default 1 h) plus at their real 15 s for
 * the 5 minutes before each evaluation instant (`densify`): at 15 s, 14 days of 2,000 tables
 * would be ~5 billion rows, far past what the 2 GB default size budget keeps (~5 h of them),
 * and the rules read per-table series by key, so their density changes the depth of the
 * samples B-tree, not what a rule reads.
 */
import type { AnyLogEvent, Labels } from '../../src/domain/index.js';
import { labelsKey } from '../../src/domain/index.js';
import { createCollectors } from '../../src/collectors/index.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { splitLabels } from '../../src/store/series-identity.js';
import { autovacuumDetails, ddlDetails, lockTimeoutDetails, lockWaitDetails, recoveryWaitDetails } from '../../src/rules/test-events.js';

export interface StoreShape {
  tables: number;
  databases: number;
  maxTablesPerDatabase: number;
  tableStepMs: number;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** Series no rule reads: one sample in 5 minutes at most (they add rows, not reads). */
const FILLER_STEP_MS = 5 * MINUTE_MS;
const TABLE_INTERVAL_MS = 15_000;
const DENSE_WINDOW_MS = 5 * MINUTE_MS;
const SESSION_STEP_MS = 5_000;
/** PRAGMA cache_size to build with (negative: KiB): 1 GB. */
const BUILD_CACHE_SIZE = -1_000_000;
const PRIMARY = 'primary';
const STANDBY = 'standby1';

/** Read by the rules: written at the collector's own interval. */
const RULE_READ = new Set([
  'pg_lock_waits_sessions', 'pg_replication_slots_info', 'pg_stat_replication_replay_lag_seconds',
  'pg_standby_replay_standing_still_seconds', 'pg_standby_replay_pending_bytes', 'pg_standby_replay_paused',
  'pg_standby_startup_wait_event', 'pg_stat_recovery_in_record_bytes', 'pg_standby_replay_delay_seconds',
  'pg_stat_recovery_last_replayed_end_lsn_bytes', 'pg_xmin_horizon_age_xids', 'pg_xmin_horizon_holders',
]);
const NUMERIC_SETTINGS = [
  'server_version_num', 'max_parallel_workers', 'max_worker_processes', 'autovacuum_max_parallel_workers', 'autovacuum_max_workers',
  'autovacuum_naptime_seconds', 'autovacuum_freeze_max_age', 'maintenance_work_mem_bytes', 'max_replication_slots', 'max_wal_senders',
  'max_standby_streaming_delay_seconds', 'lock_timeout_seconds', 'deadlock_timeout_seconds', 'statement_timeout_seconds', 'wal_keep_size_bytes',
];
/** Made by the session generators below, not as steady series. */
const SESSION_SERIES = /^pg_(xmin_horizon_holder_|lock_waits_(session|relation)_|stat_progress_|maintenance_sessions_(info|xact|xmin))/;

interface SteadySeries {
  id: number;
  name: string;
  stepMs: number;
  value: number;
  perTable: boolean;
}

export class SyntheticStore {
  readonly db: Db;
  private readonly steady: SteadySeries[] = [];
  private readonly tableLabels: Labels[] = [];
  private readonly datnames: string[];
  private readonly sql;
  private readonly daemonCacheSize: number;
  private nextPid = 10_000;
  private daysWritten = 0;

  constructor(file: string, private readonly shape: StoreShape, readonly startMs: number) {
    this.db = openStore(file);
    this.daemonCacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    // Built without a journal (a bench store: nothing to recover), read in WAL mode as the
    // daemon reads it (forReading).
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma(`cache_size = ${BUILD_CACHE_SIZE}`);
    this.datnames = Array.from({ length: shape.databases }, (_, i) => `db_${i + 1}`);
    const perDatabase = Math.min(Math.ceil(shape.tables / shape.databases), shape.maxTablesPerDatabase);
    for (const datname of this.datnames) {
      for (let t = 1; t <= perDatabase; t++) this.tableLabels.push({ datname, schemaname: 'public', relname: `t_${t}` });
    }
    this.sql = {
      series: this.db.prepare('INSERT INTO series (target, name, labels, seen_ms, info) VALUES (?, ?, ?, ?, ?)'),
      seriesId: this.db.prepare('SELECT id FROM series WHERE target = ? AND name = ? AND labels = ?').pluck(),
      seen: this.db.prepare('UPDATE series SET seen_ms = ? WHERE id = ?'),
      fill: this.db.prepare(`WITH RECURSIVE t(ts) AS (SELECT @fromMs UNION ALL SELECT ts + @stepMs FROM t WHERE ts + @stepMs < @toMs)
        INSERT OR REPLACE INTO samples (series_id, ts_ms, value) SELECT @id, ts, @value FROM t`),
      event: this.db.prepare(`INSERT INTO events (target, ts_ms, kind, level, sqlstate, pid, database, user_name, message, details, source_file, source_offset)
        VALUES (?, ?, ?, 'LOG', NULL, ?, ?, 'app', ?, ?, 'postgresql.log', 0)`),
    };
    this.db.transaction(() => this.createSteadySeries())();
  }

  /** Appends the next day of history; returns its end, the instant to evaluate at. */
  addDay(): number {
    const fromMs = this.startMs + this.daysWritten * DAY_MS;
    const toMs = fromMs + DAY_MS;
    this.db.transaction(() => {
      for (const s of this.steady) this.fill(s.id, fromMs, toMs, s.perTable ? this.shape.tableStepMs : s.stepMs, s.value);
      this.sessions(fromMs, toMs);
      this.events(fromMs, toMs);
    })();
    this.daysWritten++;
    return toMs;
  }

  /** Per-table series at their collector's 15 s for the minutes before `nowMs`. */
  densify(nowMs: number): void {
    this.db.transaction(() => {
      for (const s of this.steady.filter((x) => x.perTable)) this.fill(s.id, nowMs - DENSE_WINDOW_MS + TABLE_INTERVAL_MS / 3, nowMs, TABLE_INTERVAL_MS, s.value);
    })();
  }

  /**
   * Back to the daemon's journal mode and page cache (as openStore leaves it) before measuring:
   * with the 1 GB cache of the build, reads that go to the file in the daemon would be free here.
   */
  forReading(): void {
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`cache_size = ${this.daemonCacheSize}`);
  }

  /** Journal off and the large cache again for the next days. */
  forWriting(): void {
    this.db.pragma('journal_mode = OFF');
    this.db.pragma(`cache_size = ${BUILD_CACHE_SIZE}`);
  }

  counts(): { series: number; samples: number; events: number; megabytes: number } {
    const n = (sql: string) => this.db.prepare(sql).pluck().get() as number;
    const bytes = n('SELECT page_count FROM pragma_page_count') * n('SELECT page_size FROM pragma_page_size');
    return { series: n('SELECT count(*) FROM series'), samples: n('SELECT count(*) FROM samples'), events: n('SELECT count(*) FROM events'), megabytes: bytes / 1e6 };
  }

  private createSteadySeries(): void {
    const collectors = createCollectors();
    const names = collectors.flatMap((c) => c.metrics.map((m) => ({ name: m.name, intervalMs: c.intervalMs })))
      .concat(NUMERIC_SETTINGS.map((s) => ({ name: `pg_settings_${s}`, intervalMs: MINUTE_MS })));
    for (const { name, intervalMs } of names) {
      if (SESSION_SERIES.test(name)) continue;
      const stepMs = RULE_READ.has(name) ? intervalMs : Math.max(intervalMs, FILLER_STEP_MS);
      // Values that keep every rule quiet: nothing lags, nothing is held, no ceiling is near.
      const value = name === 'pg_settings_server_version_num' ? 180_001 : /ceiling|max_|version|workers/.test(name) ? 1e9 : 0;
      for (const [target, labels, perTable] of this.labelsOf(name)) this.steady.push({ id: this.series(target, name, labels, null), name, stepMs, value, perTable });
    }
  }

  /** The targets and label sets a collector gives a name. */
  private labelsOf(name: string): Array<[target: string, labels: Labels, perTable: boolean]> {
    const onPrimary = (labels: Labels[]) => labels.map((l): [string, Labels, boolean] => [PRIMARY, l, false]);
    const perDb = this.datnames.map((datname) => ({ datname }));
    const standby = { application_name: STANDBY, client_addr: '10.0.0.2' };
    const slot = { slot_name: 'standby1_slot', slot_type: 'physical', owner: 'physical_standby' };
    if (name === 'pg_total_relation_size_bytes' || (name.startsWith('pg_stat_user_tables_') && !/_tables(_omitted)?$/.test(name))) {
      return this.tableLabels.map((l) => [PRIMARY, l, true]);
    }
    if (/^pg_(stat_user_tables|stat_database|database|lock_waits|repack_leftovers)_/.test(name)) {
      return name === 'pg_repack_leftovers_object_left_behind' ? [] : onPrimary(perDb);
    }
    if (name.startsWith('pg_standby_') || name.startsWith('pg_stat_wal_receiver_') || name.startsWith('pg_stat_recovery_')) {
      const labels: Labels = name === 'pg_standby_startup_wait_event' ? { wait_event_type: 'Activity', wait_event: 'RecoveryWalStream' }
        : name === 'pg_stat_wal_receiver_info' ? { status: 'streaming', sender_host: '10.0.0.1', sender_port: '5432', slot_name: slot.slot_name } : {};
      return [[STANDBY, labels, false]];
    }
    if (name.startsWith('pg_replication_slots_')) {
      const extra: Labels = name.endsWith('_wal_status') ? { wal_status: 'reserved' } : name.endsWith('_invalidated') ? { invalidation_reason: '' } : {};
      return onPrimary([{ ...slot, ...extra }]);
    }
    if (name.startsWith('pg_stat_replication_')) return onPrimary([name.endsWith('_info') ? { ...standby, pid: '4242', state: 'streaming', sync_state: 'async' } : standby]);
    if (name === 'pg_xmin_horizon_age_xids') return onPrimary([{ kind: 'backend', scope: 'database' }, { kind: 'slot_xmin', scope: 'cluster' }]);
    if (name === 'pg_xmin_horizon_holders') return onPrimary([{ kind: 'backend' }, { kind: 'slot_xmin' }]);
    if (name === 'pg_maintenance_sessions_running') return onPrimary(['repack', 'vacuum_full', 'cluster'].map((kind) => ({ kind })));
    if (name === 'pg_settings_info') return onPrimary(['wal_level', 'log_line_prefix', 'lc_messages'].map((n) => ({ name: n, setting: 'x' })));
    if (name.startsWith('pg_settings_')) return [[PRIMARY, {}, false], [STANDBY, {}, false]];
    return onPrimary([{}]);
  }

  /**
   * Sessions of the day, every one a new pid: 5 xmin holders of 10 minutes each (query text and
   * state in their info), 3 lock waiters for one minute in every 10, 3 autovacuum workers of
   * 2 minutes each (progress series per run and per table).
   */
  private sessions(fromMs: number, toMs: number): void {
    for (let startMs = fromMs; startMs < toMs; startMs += 10 * MINUTE_MS) {
      for (let slot = 0; slot < 5; slot++) {
        const pid = String(this.nextPid++);
        const datname = this.datnames[slot % this.datnames.length]!;
        const labels = { kind: 'backend', scope: 'database', owner: '', pid, datname, usename: 'app', application_name: 'api', backend_type: 'client backend', state: 'idle in transaction', name: '', query: `SELECT * FROM orders WHERE id = ${pid}` };
        for (const name of ['pg_xmin_horizon_holder_age_xids', 'pg_xmin_horizon_holder_xact_start_timestamp_seconds', 'pg_xmin_horizon_holder_query_start_timestamp_seconds']) {
          this.session(name, labels, startMs, startMs + 10 * MINUTE_MS, 1000);
        }
      }
      for (let w = 0; w < 3; w++) {
        const pid = String(this.nextPid++);
        const datname = this.datnames[(startMs / (10 * MINUTE_MS) + w) % this.datnames.length]!;
        const labels = { datname, pid, usename: 'app', application_name: 'api', locktype: 'transactionid', mode: 'ShareLock', schemaname: 'public', relname: 't_1', blocking_pids: '4000', query: `UPDATE t_1 SET v = v + 1 WHERE id = ${w}` };
        this.session('pg_lock_waits_session_wait_seconds', labels, startMs, startMs + MINUTE_MS, 3);
        this.event(startMs + 1_000, 'lock_wait', Number(pid), datname, 'process still waiting', lockWaitDetails({ waiting_pid: Number(pid), lock_mode: 'ShareLock', holder_pids: [4000] }));
        this.event(startMs + MINUTE_MS, 'lock_wait', Number(pid), datname, 'process acquired', lockWaitDetails({ waiting_pid: Number(pid), lock_mode: 'ShareLock', phase: 'acquired' }));
      }
    }
    for (let startMs = fromMs; startMs < toMs; startMs += 2 * MINUTE_MS) {
      for (let worker = 0; worker < 3; worker++) {
        const pid = this.nextPid++;
        const table = this.tableLabels[(pid * 7919) % this.tableLabels.length]!;
        this.session('pg_stat_progress_vacuum_info', { ...table, pid: String(pid), phase: 'vacuuming indexes', backend_type: 'autovacuum worker', mode: 'normal', started_by: 'autovacuum' }, startMs, startMs + 2 * MINUTE_MS, 1);
        for (const name of ['heap_blocks_scanned', 'num_dead_item_ids', 'xact_start_timestamp_seconds']) {
          this.session(`pg_stat_progress_vacuum_${name}`, table, startMs, startMs + 2 * MINUTE_MS, 100);
        }
        this.event(startMs + 2 * MINUTE_MS, 'autovacuum', pid, table.datname!, 'automatic vacuum of table', autovacuumDetails({ database: table.datname!, table: table.relname! }));
      }
    }
  }

  private events(fromMs: number, toMs: number): void {
    for (let ts = fromMs; ts < toMs; ts += 5 * MINUTE_MS) this.event(ts, 'checkpoint', null, null, 'checkpoint complete', {});
    for (let i = 0; i < 20; i++) this.event(fromMs + i * 4_000_000, 'ddl', 5000 + i, 'db_1', 'statement: TRUNCATE staging', ddlDetails('TRUNCATE', 'staging'));
    for (let i = 0; i < 10; i++) this.event(fromMs + i * 8_000_000, 'lock_timeout', 6000 + i, 'db_2', 'canceling statement due to lock timeout', lockTimeoutDetails({}));
    for (let i = 0; i < 5; i++) {
      this.event(fromMs + i * 16_000_000, 'recovery_conflict_wait', 7000 + i, 'db_1', 'recovery still waiting', recoveryWaitDetails({}), STANDBY);
    }
  }

  /** A series of one session: samples every 5 s for its life, seen_ms its last one. */
  private session(name: string, labels: Labels, fromMs: number, toMs: number, value: number): void {
    this.fill(this.series(PRIMARY, name, labels, fromMs), fromMs, toMs, SESSION_STEP_MS, value);
  }

  /** Inserts a series row, or finds it (a table vacuumed again); returns its id. */
  private series(target: string, name: string, labels: Labels, seenMs: number | null): number {
    const { identity, info } = splitLabels(name, labels);
    const key = labelsKey(identity);
    const existing = this.sql.seriesId.get(target, name, key) as number | undefined;
    if (existing !== undefined) return existing;
    return Number(this.sql.series.run(target, name, key, seenMs, info === null ? null : labelsKey(info)).lastInsertRowid);
  }

  /** Samples every stepMs in [fromMs, toMs); returns the last one's time and moves seen_ms there. */
  private fill(id: number, fromMs: number, toMs: number, stepMs: number, value: number): number {
    this.sql.fill.run({ id, fromMs, stepMs, toMs, value });
    const lastMs = fromMs + Math.floor((toMs - 1 - fromMs) / stepMs) * stepMs;
    this.sql.seen.run(lastMs, id);
    return lastMs;
  }

  private event(tsMs: number, kind: AnyLogEvent['kind'], pid: number | null, database: string | null, message: string, details: object, target = PRIMARY): void {
    this.sql.event.run(target, tsMs, kind, pid, database, message, JSON.stringify(details));
  }
}
