/**
 * Autovacuum reports (vacuumlazy.c heap_vacuum_rel(), LOG, one entry with many lines).
 * The header picks the entry; every continuation line is parsed on its own by a matcher keyed
 * on its leading words, and a line no matcher knows goes to unknown_lines: the report shape
 * changed in every release 13-19 and will change again, so nothing here is all-or-nothing.
 * (ReportBody reads a report of a shape it has seen with one regex, to the same result.)
 * Manual `VACUUM (VERBOSE)` reports (`finished vacuuming ...`, INFO) are not autovacuum. Managed
 * services' one-line reports are unfolded first (one-line-report.ts).
 */
import type { AutovacuumDetails, IndexScanState, LogEntry, UsageFields, VacuumIndexStats } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { applyShape, escapeRegExp, partTable, readParts, splitQualifiedName, toFloat, toInt } from './fields.js';
import { unfoldOneLineReport } from './one-line-report.js';
import { ReportBody } from './report-body.js';
import { emptyUsage, firstLine, lineShape, lineShapesOf, LineTable, partsAfter, USAGE_LINES, wholeLine, type LineParser, type LineShape } from './usage-lines.js';

const HEADER = /^automatic (aggressive )?vacuum (to prevent wraparound )?of table "(.+)": index scans: (\d+)$/;

export function classifyAutovacuum(entry: LogEntry, message: string): Classification | null {
  const first = firstLine(message);
  const header = HEADER.exec(first);
  if (!header) {
    // A managed service's one-line report: read as the multi-line report it stands for.
    const unfolded = unfoldOneLineReport(message);
    return unfolded === null ? null : classifyAutovacuum(entry, unfolded);
  }
  const qualifiedName = header?.[3];
  const name = qualifiedName === undefined ? null : splitQualifiedName(qualifiedName);
  if (!header || !name || qualifiedName === undefined) return null;
  const details = newDetails(name, header[1] !== undefined, header[2] !== undefined, toInt(header[4]));
  BODY.read(message, qualifiedName, details, details.unknown_lines);
  return { kind: 'autovacuum', details, message: first, database: name.database };
}

/**
 * Every field of a report, unread; each report starts as a copy. A spread of a template keeps
 * V8's fast object-cloning path (adding the usage fields to a 40-field literal with Object.assign
 * cost four times as much, and an object literal that starts with a spread takes a slow path).
 */
const UNREAD: AutovacuumDetails = Object.assign({
  database: '',
  schema: '',
  table: '',
  aggressive: false,
  wraparound: false,
  index_scans: null,
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
} satisfies Omit<AutovacuumDetails, keyof UsageFields>, emptyUsage());

/** A report with nothing read yet (its arrays its own). */
function newDetails(
  name: { database: string; schema: string; table: string },
  aggressive: boolean,
  wraparound: boolean,
  indexScans: number | null,
): AutovacuumDetails {
  const details = { ...UNREAD };
  details.database = name.database;
  details.schema = name.schema;
  details.table = name.table;
  details.aggressive = aggressive;
  details.wraparound = wraparound;
  details.index_scans = indexScans;
  details.indexes = [];
  details.unknown_lines = [];
  return details;
}

const INDEX_PAGES = partTable<VacuumIndexStats>([
  ['{int} in total', (v, i) => (i.pages_total = v[0] ?? null)],
  ['{int} newly deleted', (v, i) => (i.pages_newly_deleted = v[0] ?? null)],
  ['{int} currently deleted', (v, i) => (i.pages_deleted = v[0] ?? null)],
  ['{int} reusable', (v, i) => (i.pages_free = v[0] ?? null)],
]);

/** `index "x": pages: N in total, N newly deleted, N currently deleted, N reusable` (14+). */
const INDEX_PAGES_AFTER = '": pages: ';

// The greedy name ends at the last '": pages: ' of the line, as lastIndexOf does: the parts after
// it hold no quote.
const indexLineShape = lineShapesOf<VacuumIndexStats, AutovacuumDetails>((parts) =>
  lineShape(`index "(.*)${escapeRegExp(INDEX_PAGES_AFTER)}${parts.source}`, 1 + parts.groups, (groups, first, into) => {
    const index = newIndex(groups[first] as string);
    into.indexes.push(index);
    applyShape(parts, groups, first + 1, index);
  }));

function parseIndexLine(line: string, d: AutovacuumDetails): LineShape<AutovacuumDetails> | boolean {
  const end = line.lastIndexOf(INDEX_PAGES_AFTER);
  if (end < 0) return false;
  const index = newIndex(line.slice('index "'.length, end));
  d.indexes.push(index);
  return readParts(line, end + INDEX_PAGES_AFTER.length, INDEX_PAGES, index) && indexLineShape(INDEX_PAGES.last);
}

function newIndex(name: string): VacuumIndexStats {
  return { name, pages_total: null, pages_newly_deleted: null, pages_deleted: null, pages_free: null };
}

/** `index scan <state>: N pages from table (X% of total) had N dead item identifiers removed` / `have N dead item identifiers`. */
function indexScanLine(key: string, state: IndexScanState): LineParser<AutovacuumDetails> {
  const pattern = new RegExp(`^${key}: (\\d+) pages from table \\(([\\d.]+)% of total\\) (?:had (\\d+) dead item identifiers removed|have (\\d+) dead item identifiers)$`);
  return wholeLine(pattern, (g, d) => {
    d.index_scan = { state, pages: toInt(g[1]), pages_pct: toFloat(g[2]), dead_item_ids: toInt(g[3] ?? g[4]) };
  });
}

/** `<key>: N, which was|is N XIDs|MXIDs old when operation ended|ahead of previous value` (15+). */
function xidAndAge(key: string): RegExp {
  return new RegExp(`^${key}: (\\d+), which (?:was|is) (-?\\d+) M?XIDs (?:old when operation ended|ahead of previous value)$`);
}

const PAGES = partTable<AutovacuumDetails>([
  ['{int} removed', (v, d) => (d.pages_removed = v[0] ?? null)],
  ['{int} remain', (v, d) => (d.pages_remain = v[0] ?? null)],
  // PG 15+.
  ['{int} scanned ({dec}% of total)', (v, d) => {
    d.pages_scanned = v[0] ?? null;
    d.pages_scanned_pct = v[1] ?? null;
  }],
  // PG 18+.
  ['{int} eagerly scanned', (v, d) => (d.pages_eagerly_scanned = v[0] ?? null)],
  // PG 13/14.
  ['{int} skipped due to pins', (v, d) => (d.pages_skipped_pins = v[0] ?? null)],
  ['{int} skipped frozen', (v, d) => (d.pages_skipped_frozen = v[0] ?? null)],
]);

const TUPLES = partTable<AutovacuumDetails>([
  ['{int} removed', (v, d) => (d.tuples_removed = v[0] ?? null)],
  ['{int} remain', (v, d) => (d.tuples_remain = v[0] ?? null)],
  ['{int} are dead but not yet removable', (v, d) => (d.tuples_dead_not_removable = v[0] ?? null)],
  // PG 13/14: the same horizon 15+ prints as "removable cutoff".
  ['oldest xmin: {int}', (v, d) => (d.removable_cutoff_xid = v[0] ?? null)],
]);

const VACUUM_LINES: ReadonlyMap<string, LineParser<AutovacuumDetails>> = new Map<string, LineParser<AutovacuumDetails>>([
  ['pages', partsAfter('pages: ', PAGES)],
  ['tuples', partsAfter('tuples: ', TUPLES)],
  // PG 15+, only when some dead tuples could not be removed for cleanup-lock contention.
  ['tuples missed', wholeLine(/^tuples missed: (\d+) dead from (\d+) pages not removed due to cleanup lock contention$/, (g, d) => {
    d.tuples_missed_dead = toInt(g[1]);
    d.tuples_missed_dead_pages = toInt(g[2]);
  })],
  // PG 15+.
  ['removable cutoff', wholeLine(xidAndAge('removable cutoff'), (g, d) => {
    d.removable_cutoff_xid = toInt(g[1]);
    d.removable_cutoff_age_xids = toInt(g[2]);
  })],
  ['new relfrozenxid', wholeLine(xidAndAge('new relfrozenxid'), (g, d) => {
    d.new_relfrozenxid = toInt(g[1]);
    d.new_relfrozenxid_advance_xids = toInt(g[2]);
  })],
  ['new relminmxid', wholeLine(xidAndAge('new relminmxid'), (g, d) => {
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
  ['index scan needed', indexScanLine('index scan needed', 'needed')],
  ['index scan not needed', indexScanLine('index scan not needed', 'not_needed')],
  ['index scan bypassed', indexScanLine('index scan bypassed', 'bypassed')],
  ['index scan bypassed by failsafe', indexScanLine('index scan bypassed by failsafe', 'bypassed_by_failsafe')],
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

/** Vacuum's own lines and the usage lines in one table (one lookup per line); vacuum's win a clash. */
const LINES = new LineTable<AutovacuumDetails>(new Map([...USAGE_LINES, ...VACUUM_LINES]));

/** The parser of a report line after the header. */
export function vacuumLineParser(line: string): LineParser<AutovacuumDetails> | undefined {
  return line.startsWith('index "') ? parseIndexLine : LINES.get(line);
}

const BODY = new ReportBody(vacuumLineParser);
