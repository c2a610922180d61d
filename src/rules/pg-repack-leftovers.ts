/**
 * pg-repack-leftovers: the pg_repack extension's objects left behind on a table after its client
 * died mid-run (killed, disconnected, cancelled): the trigger `repack_trigger` (`z_repack_trigger`
 * before 1.4) that copies every insert, update and delete of the table into the log table
 * `repack.log_<oid>`, the log table itself, and the half-built copy `repack.table_<oid>`. Nothing
 * ever reads the log again, so it grows with every write and every change is written twice (seed
 * 000_ddfba2eacd9de59b.txt: pg_repack "keeps its record with a trigger", and a killed client leaves
 * it "installed on your table"); the next pg_repack of the table refuses to start until they are
 * dropped (pg-messages.md §9.6).
 *
 * From pg_repack_leftovers (src/collectors/pg-repack-leftovers.ts: an object whose table no live
 * pg_repack holds by its advisory lock); the cost from the table's write counters and the log
 * table's size when those collectors sampled them. Nothing reaches the server log: samples only.
 */
import type { LatestSample, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, SLOW_COLLECTOR_MAX_AGE_MS, standbyTargets } from './sample-evidence.js';
import { formatBytes, formatCount, formatDuration } from './summary-format.js';

export const ID = 'pg-repack-leftovers';

const LEFT_BEHIND = 'pg_repack_leftovers_object_left_behind';
const WRITE_COUNTERS = ['pg_stat_user_tables_n_tup_ins_total', 'pg_stat_user_tables_n_tup_upd_total', 'pg_stat_user_tables_n_tup_del_total'];
const TOTAL_SIZE = 'pg_total_relation_size_bytes';
const LIVE_ROWS = 'pg_stat_user_tables_n_live_tup';

export interface PgRepackLeftoversOptions {
  /** Left behind in every sample for this long (two polls): a run starting up is not a leftover. */
  minLeftMs: number;
  /** Over how long the table's write rate (the rows the trigger copies) is measured. */
  rateWindowMs: number;
}

export const DEFAULTS: PgRepackLeftoversOptions = { minLeftMs: 120_000, rateWindowMs: 600_000 };

const KIND_NAMES: Record<string, string> = { trigger: 'trigger', log_table: 'log table', work_table: 'work table' };

export function pgRepackLeftovers(options: PgRepackLeftoversOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'pg_repack\'s trigger and log table left on a table after its client died: every write to the table is written twice, the log grows forever.',
    evaluate(view, nowMs) {
      const byTable = new Map<string, LatestSample[]>();
      // A standby sees the objects but not the advisory lock of a pg_repack running on the primary.
      const standbys = standbyTargets(view);
      for (const s of view.latest(LEFT_BEHIND, { maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })) {
        if (s.value !== 1 || standbys.has(s.target) || !leftSince(view, s, nowMs - options.minLeftMs)) continue;
        const key = [s.target, s.labels.datname, s.labels.for_table].join('\u0000');
        byTable.set(key, [...(byTable.get(key) ?? []), s]);
      }
      const findings: Finding[] = [];
      for (const objects of byTable.values()) {
        const first = objects[0]!;
        const { target } = first;
        const datname = first.labels.datname ?? '';
        const table = first.labels.for_table ?? '';
        const trigger = objects.find((o) => o.labels.kind === 'trigger');
        const log = objects.find((o) => o.labels.kind === 'log_table');
        const logSize = log ? logTableSize(view, log) : null;
        const writesPerSecond = writeRate(view, target, datname, table, options.rateWindowMs);
        const names = objects.map((o) => `${KIND_NAMES[o.labels.kind ?? ''] ?? o.labels.kind} ${o.labels.kind === 'trigger' ? o.labels.trigger_name : `${o.labels.schemaname}.${o.labels.relname}`}`);
        const cost = trigger
          ? `: its trigger copies every insert, update and delete into ${log ? `${log.labels.schemaname}.${log.labels.relname}` : 'a log table'}, ` +
            `so every write is done twice${writesPerSecond !== null ? ` (${formatCount(writesPerSecond)} rows/s over the last ${formatDuration(options.rateWindowMs)})` : ''}` +
            ' and the log is never read again'
          : ': nothing copies writes any more, but the next pg_repack of the table refuses to start until they are dropped';
        findings.push({
          dedupKey: findingKey(ID, target, datname, table),
          target,
          labels: { datname, for_table: table },
          summary: `pg_repack left ${names.join(', ')} on ${datname}.${table} after its client died${cost}` +
            `${logSize ? `; the log table holds ${logSize}` : ''}`,
          evidence: evidenceOf({
            series: objects.map(citeSample),
            facts: { datname, table, trigger: trigger?.labels.trigger_name ?? null, log_table: log ? `${log.labels.schemaname}.${log.labels.relname}` : null, writes_per_second: writesPerSecond },
          }),
        });
      }
      return findings;
    },
  };
}

/** Left behind in every sample since `sinceMs`, and sampled at or before it (a missed poll does not reset it). */
function leftSince(view: RuleView, s: LatestSample, sinceMs: number): boolean {
  const history = view.series(LEFT_BEHIND, { sinceMs: sinceMs - SLOW_COLLECTOR_MAX_AGE_MS, target: s.target, labels: s.labels })[0]?.points ?? [];
  return history.length > 0 && history[0]!.tsMs <= sinceMs && history.every((p) => p.value === 1);
}

/** Rows per second inserted + updated + deleted in the table, from the counters' first and last sample in the window. */
function writeRate(view: RuleView, target: string, datname: string, table: string, windowMs: number): number | null {
  const dot = table.indexOf('.');
  if (dot < 0) return null;
  const labels = { datname, schemaname: table.slice(0, dot), relname: table.slice(dot + 1) };
  let rows = 0;
  let seconds = 0;
  for (const name of WRITE_COUNTERS) {
    const points = (view.series(name, { sinceMs: view.nowMs - windowMs, target, labels })[0]?.points ?? []).filter((p) => p.value !== null);
    const first = points[0];
    const last = points[points.length - 1];
    if (!first || !last || last.tsMs === first.tsMs || last.value! < first.value!) return null;
    rows += last.value! - first.value!;
    seconds = (last.tsMs - first.tsMs) / 1000;
  }
  return rows / seconds;
}

function logTableSize(view: RuleView, log: LatestSample): string | null {
  const labels = { datname: log.labels.datname ?? '', schemaname: log.labels.schemaname ?? '', relname: log.labels.relname ?? '' };
  const rows = view.latest(LIVE_ROWS, { target: log.target, labels, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0]?.value ?? null;
  const bytes = view.latest(TOTAL_SIZE, { target: log.target, labels, maxAgeMs: 10 * 60_000 })[0]?.value ?? null;
  const parts = [rows !== null ? `${formatCount(rows)} rows` : '', bytes !== null ? formatBytes(bytes) : ''].filter(Boolean);
  return parts.length === 0 ? null : parts.join(', ');
}
