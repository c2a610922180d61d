/**
 * data-page-corrupted: a data page that failed verification when read, one alert per relation
 * file: `invalid page in block N of relation base/5/16384`, with the checksum PostgreSQL computed
 * and the one the page carried when the same process logged `page verification failed` just
 * before. Also from pg_stat_database's checksum_failures (PG 12+, with data checksums) when the
 * counter rises and the log says nothing (not tailed, or lc_messages not English): one alert per
 * database.
 *
 * Critical: the rows on that page cannot be read (every query touching it fails), and storage
 * that corrupted one page may corrupt others; a backup or a standby is the way back. It stays
 * open `activeForMs` (24 h) after the last line: corruption does not heal, and the next read of
 * the page logs again.
 *
 * Never on a normal day: a healthy server logs none of these lines, and its counter stays where
 * it is.
 */
import type { RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { formatTime, plural } from './summary-format.js';

export const ID = 'data-page-corrupted';

const CHECKSUM_FAILURES = 'pg_stat_database_checksum_failures_total';
/** A `page verification failed` line belongs to the `invalid page` line of its process this soon after. */
const CHECKSUM_LINE_BEFORE_MS = 1_000;
/** Blocks named in the summary; the evidence cites every line. */
const BLOCKS_NAMED = 5;

export interface DataPageCorruptedOptions {
  /** How long after its last line an alert stays open. */
  activeForMs: number;
  /** How far back a rise of pg_stat_database's checksum_failures counts. */
  counterWindowMs: number;
}

export const DEFAULTS: DataPageCorruptedOptions = { activeForMs: 86_400_000, counterWindowMs: 3_600_000 };

type Corruption = RuleEvent<'data_corruption'>;

export function dataPageCorrupted(options: DataPageCorruptedOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'critical',
    description: 'Data pages that failed verification (invalid page, checksum mismatch): one alert per relation file, naming the blocks.',
    evaluate(view, nowMs) {
      const lines = view.events('data_corruption', { sinceMs: nowMs - options.activeForMs });
      const byFile = new Map<string, Corruption[]>();
      for (const e of lines) {
        if (e.details.problem !== 'invalid_page' || e.details.relation_path === null) continue;
        const key = JSON.stringify([e.target, e.details.relation_path]);
        byFile.set(key, [...(byFile.get(key) ?? []), e]);
      }
      const findings = [...byFile.values()].map((invalid) => fileFinding(invalid, lines));
      const logged = new Set(findings.map((f) => f.target));
      return [...findings, ...counterFindings(view, nowMs, options, logged)];
    },
  };
}

function fileFinding(invalid: Corruption[], lines: Corruption[]): Finding {
  const last = invalid.at(-1)!;
  const { target } = last;
  const path = last.details.relation_path!;
  const checksums = invalid.map((e) => checksumLineOf(e, lines)).filter((c): c is Corruption => c !== undefined);
  const blocks = [...new Set(invalid.map((e) => e.details.block).filter((b): b is number => b !== null))].sort((a, b) => a - b);
  const database = invalid.map((e) => e.database).find((d) => d !== null) ?? null;
  const checksum = checksums.at(-1);
  const zeroed = invalid.some((e) => e.details.zeroed);
  // PG 18+: an I/O worker logs the failed read at LOG, and the backend that asked for it its ERROR: one read.
  const reads = invalid.filter((e) => e.level !== 'LOG');
  const times = reads.length > 0 ? reads.length : invalid.length;
  const named = blocks.length <= BLOCKS_NAMED ? blocks.join(', ') : `${blocks.slice(0, BLOCKS_NAMED).join(', ')} and ${blocks.length - BLOCKS_NAMED} more`;
  return {
    dedupKey: findingKey(ID, target, path),
    target,
    labels: { relation_path: path },
    summary: `data page corrupted on ${target}: ${blocks.length === 1 ? 'block' : 'blocks'} ${named} of relation file ${path}` +
      `${database === null ? '' : ` (database ${database}${last.details.relfilenode === null ? '' : `, filenode ${last.details.relfilenode}`})`} ` +
      `failed verification when read (${plural(times, 'time')} since ${formatTime(invalid[0]!.tsMs)})` +
      `${checksum ? `: calculated checksum ${checksum.details.calculated_checksum ?? '?'} but the page says ${checksum.details.expected_checksum ?? '?'}` : ''}` +
      `${zeroed ? '; zero_damaged_pages replaced it with zeros: its rows are gone' : '; every read of it fails'}: check the storage, restore from a backup or a standby`,
    evidence: evidenceOf({
      eventIds: [...checksums, ...invalid].sort((a, b) => a.tsMs - b.tsMs || a.id - b.id).map((e) => e.id),
      facts: {
        relation_path: path, blocks: blocks.join(','), database, relfilenode: last.details.relfilenode, database_oid: last.details.database_oid,
        calculated_checksum: checksum?.details.calculated_checksum ?? null, expected_checksum: checksum?.details.expected_checksum ?? null, zeroed,
      },
    }),
  };
}

/** The `page verification failed` line the same process logged just before this `invalid page` line. */
function checksumLineOf(invalid: Corruption, lines: Corruption[]): Corruption | undefined {
  return lines.filter((c) => c.details.problem === 'checksum_mismatch' && c.target === invalid.target && c.pid === invalid.pid &&
    c.tsMs <= invalid.tsMs && invalid.tsMs - c.tsMs <= CHECKSUM_LINE_BEFORE_MS).at(-1);
}

/** checksum_failures rising in a database of a target whose log named no page. */
function counterFindings(view: RuleView, nowMs: number, o: DataPageCorruptedOptions, logged: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  // Most databases never had a failure (or have no checksums: NULL): only the others' history is read.
  for (const latest of view.latest(CHECKSUM_FAILURES, { unlessValue: { below: 1 } })) {
    if (latest.value === null || logged.has(latest.target)) continue;
    const s = view.series(CHECKSUM_FAILURES, { sinceMs: nowMs - o.counterWindowMs, target: latest.target, labels: latest.labels })[0];
    const values = s?.points.filter((p) => p.value !== null) ?? [];
    const first = values[0];
    const last = values.at(-1);
    if (!s || !first || !last || last.value! <= first.value!) continue;
    const datname = s.labels.datname ?? '';
    const rise = last.value! - first.value!;
    findings.push({
      dedupKey: findingKey(ID, s.target, 'pg_stat_database', datname),
      target: s.target,
      labels: { datname },
      summary: `data page corrupted on ${s.target}: ${plural(rise, 'checksum failure')} in database ${datname} since ${formatTime(first.tsMs)} ` +
        '(pg_stat_database.checksum_failures); the server log names the pages (`invalid page in block`): check the storage, restore from a backup or a standby',
      evidence: evidenceOf({
        series: [{ name: s.name, labels: { ...s.labels }, value: last.value, tsMs: last.tsMs }],
        facts: { datname, checksum_failures: last.value, new_failures: rise },
      }),
    });
  }
  return findings;
}
