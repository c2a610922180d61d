/**
 * Autovacuum reports (vacuumlazy.c heap_vacuum_rel(), LOG, one entry with many lines).
 * The header picks the entry; every continuation line is parsed on its own by a matcher keyed
 * on its leading words, and a line no matcher knows goes to unknown_lines: the report shape
 * changed in every release 13-19 and will change again, so nothing here is all-or-nothing.
 * Manual `VACUUM (VERBOSE)` reports (`finished vacuuming ...`, INFO) are not autovacuum.
 */
import type { AutovacuumDetails, IndexScanState, LogEntry, UsageFields, VacuumIndexStats } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { matchPieces, splitQualifiedName, toFloat, toInt, type PieceSpec } from './fields.js';
import { emptyUsage, lineKey, piecesAfter, USAGE_LINES, wholeLine, type LineParser } from './usage-lines.js';

const HEADER = /^automatic (aggressive )?vacuum (to prevent wraparound )?of table "(.+)": index scans: (\d+)$/;

export function classifyAutovacuum(entry: LogEntry, message: string): Classification | null {
  const lines = message.split('\n');
  const header = HEADER.exec(lines[0] ?? '');
  const name = header?.[3] === undefined ? null : splitQualifiedName(header[3]);
  if (!header || !name) return null;
  const details = newDetails(name, header[1] !== undefined, header[2] !== undefined, toInt(header[4]));
  for (let i = 1; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    if (!parseVacuumLine(line, details)) details.unknown_lines.push(line);
  }
  return { kind: 'autovacuum', details, message: lines[0] ?? message, database: name.database };
}

function parseVacuumLine(line: string, d: AutovacuumDetails): boolean {
  if (line.startsWith('index "')) return parseIndexLine(line, d);
  const key = lineKey(line);
  const parser = VACUUM_LINES.get(key) ?? USAGE_LINES.get(key);
  return parser !== undefined && parser(line, d);
}

/**
 * A report with nothing read yet. Built without leading object spreads: in V8 (Node 20) a large
 * literal that starts with a spread takes a slow path costing hundreds of microseconds.
 */
function newDetails(
  name: { database: string; schema: string; table: string },
  aggressive: boolean,
  wraparound: boolean,
  indexScans: number | null,
): AutovacuumDetails {
  const vacuum: Omit<AutovacuumDetails, keyof UsageFields> = {
    database: name.database,
    schema: name.schema,
    table: name.table,
    aggressive,
    wraparound,
    index_scans: indexScans,
    pages_removed: null,
    pages_remain: null,
    pages_scanned: null,
    pages_scanned_pct: null,
    pages_eagerly_scanned: null,
    pages_skipped_pins: null,
    pages_skipped_frozen: null,
    tuples_removed: null,
    tuples_remain: null,
    tuples_dead_not_removable: null,
    tuples_missed_dead: null,
    tuples_missed_dead_pages: null,
    removable_cutoff_xid: null,
    removable_cutoff_age_xids: null,
    new_relfrozenxid: null,
    new_relfrozenxid_advance_xids: null,
    new_relminmxid: null,
    new_relminmxid_advance_mxids: null,
    frozen_pages: null,
    frozen_pages_pct: null,
    tuples_frozen: null,
    vm_pages_all_visible: null,
    vm_pages_all_frozen: null,
    vm_pages_were_all_visible: null,
    index_scan: null,
    parallel_workers_planned: null,
    parallel_workers_launched: null,
    parallel_cleanup_workers_planned: null,
    parallel_cleanup_workers_launched: null,
    indexes: [],
    dead_item_storage_mb: null,
    dead_item_storage_resets: null,
    dead_item_storage_limit_mb: null,
    unknown_lines: [],
  };
  return Object.assign(vacuum, emptyUsage());
}

const INDEX_PAGES: readonly PieceSpec<VacuumIndexStats>[] = [
  [/^(\d+) in total$/, (g, i) => (i.pages_total = toInt(g[1]))],
  [/^(\d+) newly deleted$/, (g, i) => (i.pages_newly_deleted = toInt(g[1]))],
  [/^(\d+) currently deleted$/, (g, i) => (i.pages_deleted = toInt(g[1]))],
  [/^(\d+) reusable$/, (g, i) => (i.pages_free = toInt(g[1]))],
];

/** `index "x": pages: N in total, N newly deleted, N currently deleted, N reusable` (14+). */
function parseIndexLine(line: string, d: AutovacuumDetails): boolean {
  const end = line.lastIndexOf('": pages: ');
  if (end < 0) return false;
  const index: VacuumIndexStats = { name: line.slice('index "'.length, end), pages_total: null, pages_newly_deleted: null, pages_deleted: null, pages_free: null };
  d.indexes.push(index);
  return matchPieces(line.slice(end + '": pages: '.length), ', ', INDEX_PAGES, index);
}

/** `index scan <state>: N pages from table (X% of total) had N dead item identifiers removed` / `have N dead item identifiers`. */
const INDEX_SCAN = /: (\d+) pages from table \(([\d.]+)% of total\) (?:had (\d+) dead item identifiers removed|have (\d+) dead item identifiers)$/;

function indexScanLine(state: IndexScanState): LineParser<AutovacuumDetails> {
  return wholeLine(INDEX_SCAN, (g, d) => {
    d.index_scan = { state, pages: toInt(g[1]), pages_pct: toFloat(g[2]), dead_item_ids: toInt(g[3] ?? g[4]) };
  });
}

/** `<name>: N, which was|is N XIDs|MXIDs old when operation ended|ahead of previous value` (15+). */
const XID_AND_AGE = /: (\d+), which (?:was|is) (-?\d+) M?XIDs (?:old when operation ended|ahead of previous value)$/;

const PAGES: readonly PieceSpec<AutovacuumDetails>[] = [
  [/^(\d+) removed$/, (g, d) => (d.pages_removed = toInt(g[1]))],
  [/^(\d+) remain$/, (g, d) => (d.pages_remain = toInt(g[1]))],
  // PG 15+.
  [/^(\d+) scanned \(([\d.]+)% of total\)$/, (g, d) => {
    d.pages_scanned = toInt(g[1]);
    d.pages_scanned_pct = toFloat(g[2]);
  }],
  // PG 18+.
  [/^(\d+) eagerly scanned$/, (g, d) => (d.pages_eagerly_scanned = toInt(g[1]))],
  // PG 13/14.
  [/^(\d+) skipped due to pins$/, (g, d) => (d.pages_skipped_pins = toInt(g[1]))],
  [/^(\d+) skipped frozen$/, (g, d) => (d.pages_skipped_frozen = toInt(g[1]))],
];

const TUPLES: readonly PieceSpec<AutovacuumDetails>[] = [
  [/^(\d+) removed$/, (g, d) => (d.tuples_removed = toInt(g[1]))],
  [/^(\d+) remain$/, (g, d) => (d.tuples_remain = toInt(g[1]))],
  [/^(\d+) are dead but not yet removable$/, (g, d) => (d.tuples_dead_not_removable = toInt(g[1]))],
  // PG 13/14: the same horizon 15+ prints as "removable cutoff".
  [/^oldest xmin: (\d+)$/, (g, d) => (d.removable_cutoff_xid = toInt(g[1]))],
];

const VACUUM_LINES: ReadonlyMap<string, LineParser<AutovacuumDetails>> = new Map<string, LineParser<AutovacuumDetails>>([
  ['pages', piecesAfter('pages: ', PAGES)],
  ['tuples', piecesAfter('tuples: ', TUPLES)],
  // PG 15+, only when some dead tuples could not be removed for cleanup-lock contention.
  ['tuples missed', wholeLine(/^tuples missed: (\d+) dead from (\d+) pages not removed due to cleanup lock contention$/, (g, d) => {
    d.tuples_missed_dead = toInt(g[1]);
    d.tuples_missed_dead_pages = toInt(g[2]);
  })],
  // PG 15+.
  ['removable cutoff', wholeLine(XID_AND_AGE, (g, d) => {
    d.removable_cutoff_xid = toInt(g[1]);
    d.removable_cutoff_age_xids = toInt(g[2]);
  })],
  ['new relfrozenxid', wholeLine(XID_AND_AGE, (g, d) => {
    d.new_relfrozenxid = toInt(g[1]);
    d.new_relfrozenxid_advance_xids = toInt(g[2]);
  })],
  ['new relminmxid', wholeLine(XID_AND_AGE, (g, d) => {
    d.new_relminmxid = toInt(g[1]);
    d.new_relminmxid_advance_mxids = toInt(g[2]);
  })],
  // PG 16+.
  ['frozen', wholeLine(/^frozen: (\d+) pages from table \(([\d.]+)% of total\) had (\d+) tuples frozen$/, (g, d) => {
    d.frozen_pages = toInt(g[1]);
    d.frozen_pages_pct = toFloat(g[2]);
    d.tuples_frozen = toInt(g[3]);
  })],
  // PG 18+.
  ['visibility map', wholeLine(/^visibility map: (\d+) pages set all-visible, (\d+) pages set all-frozen \((\d+) were all-visible\)$/, (g, d) => {
    d.vm_pages_all_visible = toInt(g[1]);
    d.vm_pages_all_frozen = toInt(g[2]);
    d.vm_pages_were_all_visible = toInt(g[3]);
  })],
  ['index scan needed', indexScanLine('needed')],
  ['index scan not needed', indexScanLine('not_needed')],
  ['index scan bypassed', indexScanLine('bypassed')],
  ['index scan bypassed by failsafe', indexScanLine('bypassed_by_failsafe')],
  // PG 19+: "in total" sums all index-vacuum passes; the cleanup line has no "in total".
  ['parallel workers', wholeLine(/^parallel workers: index (vacuum|cleanup): (\d+) planned, (\d+) launched( in total)?$/, (g, d) => {
    if (g[1] === 'vacuum') {
      d.parallel_workers_planned = toInt(g[2]);
      d.parallel_workers_launched = toInt(g[3]);
    } else {
      d.parallel_cleanup_workers_planned = toInt(g[2]);
      d.parallel_cleanup_workers_launched = toInt(g[3]);
    }
  })],
  // PG 19+: "reset" or "resets" (ngettext).
  ['memory usage', wholeLine(/^memory usage: dead item storage ([\d.]+) MB accumulated across (\d+) resets? \(limit ([\d.]+) MB each\)$/, (g, d) => {
    d.dead_item_storage_mb = toFloat(g[1]);
    d.dead_item_storage_resets = toInt(g[2]);
    d.dead_item_storage_limit_mb = toFloat(g[3]);
  })],
]);
