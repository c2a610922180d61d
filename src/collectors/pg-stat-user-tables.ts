/**
 * pg_stat_user_tables, in every connectable database: row counts, dead rows, (auto)vacuum and
 * analyze counts and times, heap size, and the REPACK change-rate budget (table-change-rate.ts).
 *
 * Per-table series are capped: the query ranks tables by size (pg_class.relpages), dead rows and
 * rows modified since the last analyze, keeps the best `maxTables` by their best rank, and says
 * how many it left out (`tables_omitted`), so 50,000 tables cost one query and a bounded number
 * of series. pg_stat_get_dead_tuples / pg_stat_get_mod_since_analyze are the functions behind
 * the view's n_dead_tup / n_mod_since_analyze in every version 13-19.
 *
 * Cost (bench/poll.ts; 500 tables, 200 kept, warm connection): ranking on pg_class directly ~1 ms
 * (through the view, whose GROUP BY over pg_index serves only idx_scan, ~2 ms); the view's
 * columns for the kept tables ~2 ms; pg_relation_size ~0.5 ms (it stat()s the main fork's
 * segments). pg_total_relation_size opens every index and the TOAST table and stat()s all their
 * forks: ~3 ms warm and ~15 ms on a fresh connection, more than everything else here, so it is
 * pg_total_relation_size.ts's, every 5 minutes. Heap size is not computed for a table someone
 * holds or awaits an ACCESS EXCLUSIVE lock on (VACUUM FULL, REPACK's swap, DROP):
 * pg_relation_size takes ACCESS SHARE and would queue behind it until statement_timeout; it
 * reads NULL instead.
 */
import type { Collector, CollectorOptions, MapContext, MetricDef, Row } from './collector.js';
import { DEFAULT_TIMEOUT_MS, majorVersion } from './collector.js';
import { counter, gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { label, msToSeconds, num, requiredNum } from './row.js';
import { deriveChangeRates, type ChangeCounter, type ChangeRateState } from './table-change-rate.js';

// Columns read as they are, by the first version that has them.
const COUNTER_COLUMNS: ReadonlyArray<readonly [column: string, sinceMajor: number]> = [
  ['seq_scan', 13], ['seq_tup_read', 13], ['idx_scan', 13], ['idx_tup_fetch', 13],
  ['n_tup_ins', 13], ['n_tup_upd', 13], ['n_tup_del', 13], ['n_tup_hot_upd', 13],
  ['n_tup_newpage_upd', 16], // PG 16+
  ['vacuum_count', 13], ['autovacuum_count', 13], ['analyze_count', 13], ['autoanalyze_count', 13],
];
const GAUGE_COLUMNS = ['n_live_tup', 'n_dead_tup', 'n_mod_since_analyze', 'n_ins_since_vacuum'] as const;
const TIMESTAMP_COLUMNS: ReadonlyArray<readonly [column: string, sinceMajor: number]> = [
  ['last_vacuum', 13], ['last_autovacuum', 13], ['last_analyze', 13], ['last_autoanalyze', 13],
  ['last_seq_scan', 16], ['last_idx_scan', 16], // PG 16+
];
// PG 18+: cumulative time spent in (auto)vacuum and (auto)analyze, float8 milliseconds.
const TIME_COLUMNS = ['total_vacuum_time', 'total_autovacuum_time', 'total_analyze_time', 'total_autoanalyze_time'] as const;

/**
 * The tables pg_stat_user_tables lists, as pg_class `c` joined to pg_namespace `n`: the view's own
 * definition (pg_stat_all_tables' relkinds, minus the system and TOAST schemas).
 */
export function userTablesFrom(major: number): string {
  // PG 14+: pg_stat_all_tables also lists partitioned tables.
  const relkinds = major >= 14 ? "'r', 't', 'm', 'p'" : "'r', 't', 'm'";
  return `pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN (${relkinds}) AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_toast'`;
}

/**
 * `locked`: relations of this database someone holds or awaits ACCESS EXCLUSIVE on. The size
 * functions take ACCESS SHARE and would queue behind such a lock until statement_timeout.
 */
export const LOCKED_RELATIONS_CTE = `locked AS (
  SELECT DISTINCT relation FROM pg_locks
  WHERE locktype = 'relation' AND mode = 'AccessExclusiveLock'
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
)`;

export function userTablesSql(major: number): string {
  const columns = [
    ...COUNTER_COLUMNS.filter(([, since]) => major >= since).map(([c]) => `s.${c}`),
    ...GAUGE_COLUMNS.map((c) => `s.${c}`),
    ...TIMESTAMP_COLUMNS.filter(([, since]) => major >= since).map(([c]) => `extract(epoch FROM s.${c})::float8 AS ${c}`),
    ...(major >= 18 ? TIME_COLUMNS.map((c) => `s.${c}`) : []),
  ];
  // Ranking reads pg_class with the view's own row filter (the view's definition, minus its
  // GROUP BY over pg_index); the view's ~25 columns are computed only for the kept tables (the
  // relid = ANY(...) filter reaches down into the view's pg_class scan).
  return `
WITH kept AS (
  SELECT c.oid AS relid, count(*) OVER () AS tables_total
  FROM ${userTablesFrom(major)}
  ORDER BY least(row_number() OVER (ORDER BY c.relpages DESC, c.oid),
                 row_number() OVER (ORDER BY pg_stat_get_dead_tuples(c.oid) DESC, c.oid),
                 row_number() OVER (ORDER BY pg_stat_get_mod_since_analyze(c.oid) DESC, c.oid))
  LIMIT $1
), ${LOCKED_RELATIONS_CTE}
SELECT s.relid, s.schemaname, s.relname, ${columns.join(', ')},
       (SELECT tables_total FROM kept LIMIT 1) AS tables_total,
       CASE WHEN l.relation IS NULL THEN pg_relation_size(s.relid) END AS relation_size_bytes
FROM pg_stat_user_tables s
LEFT JOIN locked l ON l.relation = s.relid
WHERE s.relid = ANY (ARRAY(SELECT relid FROM kept))`;
}

const P = 'pg_stat_user_tables';
const M = metricDefs(P, {
  seq_scan_total: counter('Sequential scans started on this table.'),
  seq_tup_read_total: counter('Live rows fetched by sequential scans.'),
  idx_scan_total: counter('Index scans started on this table (NULL without indexes).'),
  idx_tup_fetch_total: counter('Live rows fetched by index scans.'),
  n_tup_ins_total: counter('Rows inserted.'),
  n_tup_upd_total: counter('Rows updated (HOT included).'),
  n_tup_del_total: counter('Rows deleted.'),
  n_tup_hot_upd_total: counter('Rows HOT-updated.'),
  n_tup_newpage_upd_total: counter('Rows updated onto a new heap page (PG 16+).'),
  vacuum_count_total: counter('Manual VACUUMs (not VACUUM FULL).'),
  autovacuum_count_total: counter('Autovacuums.'),
  analyze_count_total: counter('Manual ANALYZEs.'),
  autoanalyze_count_total: counter('Autoanalyzes.'),
  n_live_tup: gauge('Estimated live rows.'),
  n_dead_tup: gauge('Estimated dead rows.'),
  n_mod_since_analyze: gauge('Estimated rows modified since the last analyze.'),
  n_ins_since_vacuum: gauge('Estimated rows inserted since the last vacuum.'),
  last_vacuum_timestamp_seconds: gauge('Last manual VACUUM, epoch seconds (NULL: never).'),
  last_autovacuum_timestamp_seconds: gauge('Last autovacuum, epoch seconds (NULL: never).'),
  last_analyze_timestamp_seconds: gauge('Last manual ANALYZE, epoch seconds (NULL: never).'),
  last_autoanalyze_timestamp_seconds: gauge('Last autoanalyze, epoch seconds (NULL: never).'),
  last_seq_scan_timestamp_seconds: gauge('Last sequential scan, epoch seconds (PG 16+).'),
  last_idx_scan_timestamp_seconds: gauge('Last index scan, epoch seconds (PG 16+).'),
  vacuum_time_seconds_total: counter('Time spent in manual VACUUM (PG 18+).'),
  autovacuum_time_seconds_total: counter('Time spent in autovacuum (PG 18+).'),
  analyze_time_seconds_total: counter('Time spent in manual ANALYZE (PG 18+).'),
  autoanalyze_time_seconds_total: counter('Time spent in autoanalyze (PG 18+).'),
  relation_size_bytes: gauge('pg_relation_size: the main fork (NULL while ACCESS EXCLUSIVE is held or awaited). With TOAST and indexes: pg_total_relation_size_bytes.'),
  changes_per_second: gauge('Updates + deletes per second between the last two samples.'),
  repack_seconds_until_ceiling: gauge(
    'How long a REPACK (CONCURRENTLY) can run at this change rate before 104,857,600 changed rows (the seed\'s hours_until_ceiling x 3600; NULL: no changes).',
  ),
  tables: gauge('Tables in pg_stat_user_tables of this database.'),
  tables_omitted: gauge('Tables left out of the per-table series by the max_tables cap.'),
});

const TIME_DEFS: Record<(typeof TIME_COLUMNS)[number], MetricDef> = {
  total_vacuum_time: M.vacuum_time_seconds_total,
  total_autovacuum_time: M.autovacuum_time_seconds_total,
  total_analyze_time: M.analyze_time_seconds_total,
  total_autoanalyze_time: M.autoanalyze_time_seconds_total,
};

interface PlannedColumn {
  column: string;
  def: MetricDef;
  /** Milliseconds to be exported as seconds. */
  ms: boolean;
}

const plans = new Map<number, PlannedColumn[]>();

/** Which column becomes which series on a major version; built once per version. */
function columnPlan(major: number): PlannedColumn[] {
  let plan = plans.get(major);
  if (plan) return plan;
  const defs = M as Record<string, MetricDef>;
  const def = (key: string): MetricDef => {
    const found = defs[key];
    if (!found) throw new Error(`pg_stat_user_tables: no metric ${key}`);
    return found;
  };
  plan = [
    ...COUNTER_COLUMNS.filter(([, since]) => major >= since).map(([column]) => ({ column, def: def(`${column}_total`), ms: false })),
    ...GAUGE_COLUMNS.map((column) => ({ column, def: def(column), ms: false })),
    ...TIMESTAMP_COLUMNS.filter(([, since]) => major >= since).map(([column]) => ({ column, def: def(`${column}_timestamp_seconds`), ms: false })),
    ...(major >= 18 ? TIME_COLUMNS.map((column) => ({ column, def: TIME_DEFS[column], ms: true })) : []),
    { column: 'relation_size_bytes', def: M.relation_size_bytes, ms: false },
  ];
  plans.set(major, plan);
  return plan;
}

export interface UserTablesResult {
  builder: SampleBuilder;
  /** n_tup_upd + n_tup_del per relid, for the change rate. */
  changes: Map<string, ChangeCounter>;
  /** relid -> labels of its series. */
  tableLabels: Map<string, { datname: string; schemaname: string; relname: string }>;
}

/** Pure: rows of userTablesSql -> samples (without the change rate, which needs history). */
export function mapUserTables(rows: readonly Row[], ctx: MapContext): UserTablesResult {
  const plan = columnPlan(majorVersion(ctx.server));
  const datname = ctx.database ?? '';
  const tsMs = ctx.nowMs;
  const builder = new SampleBuilder(ctx.target, tsMs);
  const changes = new Map<string, ChangeCounter>();
  const tableLabels = new Map<string, { datname: string; schemaname: string; relname: string }>();
  let total = 0;
  for (const row of rows) {
    const relid = String(requiredNum(row, 'relid'));
    const labels = { datname, schemaname: label(row, 'schemaname'), relname: label(row, 'relname') };
    tableLabels.set(relid, labels);
    total = requiredNum(row, 'tables_total');
    for (const { column, def, ms } of plan) builder.add(def, labels, ms ? msToSeconds(row, column) : num(row, column));
    const upd = num(row, 'n_tup_upd');
    const del = num(row, 'n_tup_del');
    if (upd !== null && del !== null) changes.set(relid, { changes: upd + del, tsMs });
  }
  // An empty database returns no row, hence no tables_total: it has 0 tables.
  builder.add(M.tables, { datname }, total);
  builder.add(M.tables_omitted, { datname }, total - rows.length);
  return { builder, changes, tableLabels };
}

export interface UserTablesOptions extends CollectorOptions {
  /** Per-table series kept per database (config collectors.max_tables_per_database). */
  maxTables?: number;
}

/** One instance per target: it keeps the previous counters per database for the change rate. */
export function pgStatUserTablesCollector(options: UserTablesOptions = {}): Collector {
  const maxTables = options.maxTables ?? 200;
  const intervalMs = options.intervalMs ?? 15_000;
  const history = new Map<string, ChangeRateState>();
  return {
    name: P,
    intervalMs,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    scope: 'per-database',
    metrics: Object.values(M),
    supports: () => true,
    forget: (database) => history.delete(database),
    async collect(ctx) {
      const datname = ctx.database ?? '';
      const rows = await ctx.query(userTablesSql(majorVersion(ctx.server)), [maxTables]);
      const { builder, changes, tableLabels } = mapUserTables(rows, ctx);
      // Forget a table after ten missed intervals: it left the top-N or was dropped.
      const { state, rates } = deriveChangeRates(history.get(datname) ?? new Map(), changes, intervalMs * 10);
      history.set(datname, state);
      for (const [relid, rate] of rates) {
        const labels = tableLabels.get(relid);
        if (!labels) continue;
        builder.add(M.changes_per_second, labels, rate.changesPerSec);
        builder.add(M.repack_seconds_until_ceiling, labels, rate.secondsUntilCeiling);
      }
      return builder.samples;
    },
  };
}
