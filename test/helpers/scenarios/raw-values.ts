/**
 * Values read back from the raw PostgreSQL text by the test itself, beside the golden comparison:
 * a golden file is the pipeline's own output, so a wrong unit or two swapped fields would be
 * accepted by regenerating it. Here each event's entry (its bytes from its source offset to the
 * next event's) is read with plain regular expressions, independent of the parsers: the envelope's
 * pid and timestamp for every event, and for each kind of English message at least one value of
 * its details (a pid, an XID, a duration with its unit, an LSN).
 *
 * The patterns read stderr, csvlog and jsonlog alike: numbers and words survive CSV's doubled
 * quotes and JSON's escapes; only the envelope's pid differs by format.
 */
import { expect } from 'vitest';
import type { AnyLogEvent, EventKind } from '../../../src/domain/index.js';
import type { LogFormat } from './scenario-log.js';

/** [what, parsed by the pipeline, read from the raw text]. */
type Comparison = [field: string, parsed: unknown, raw: unknown];

const num = (text: string | undefined): number | null => (text === undefined ? null : Number(text));
const LSN = '[0-9A-F]+/[0-9A-F]+';

/** Every event's entry text: from its source offset to the next event's (or the end of the file). */
export function rawEntries(log: Buffer, events: readonly AnyLogEvent[]): Array<{ event: AnyLogEvent; text: string }> {
  const offsets = [...new Set(events.map((e) => e.source.offset))].sort((a, b) => a - b);
  const next = new Map(offsets.map((offset, i) => [offset, offsets[i + 1] ?? log.length]));
  return events.map((event) => ({ event, text: log.subarray(event.source.offset, next.get(event.source.offset)).toString('utf8') }));
}

// The envelope: %m and %p of the stderr prefix ("%m [%p] ..."), csvlog's log_time and process_id
// columns (the first and fourth), jsonlog's "timestamp" and "pid".
const TIMESTAMP = /(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?) (UTC|[+-]\d\d)/;
const CSV_FIELD = '(?:"(?:[^"]|"")*"|[^,]*)';
const PID: Record<LogFormat, RegExp> = {
  stderr: /^\S+ \S+ \S+ \[(\d+)\]/,
  csvlog: new RegExp(`^${CSV_FIELD},${CSV_FIELD},${CSV_FIELD},(\\d+),`),
  jsonlog: /"pid":(\d+)/,
};

function envelope(text: string, format: LogFormat): Comparison[] {
  const stamp = TIMESTAMP.exec(text);
  const zone = stamp?.[3] === 'UTC' ? 'Z' : `${stamp?.[3]}:00`;
  return [
    ['pid', undefined, num(PID[format].exec(text)?.[1])],
    ['tsMs', undefined, stamp ? Date.parse(`${stamp[1]}T${stamp[2]}${zone}`) : null],
  ];
}

/** `rawPid`: the envelope's pid as the raw text says it. */
type KindCheck = (text: string, event: AnyLogEvent, rawPid: unknown) => Comparison[];

function details(event: AnyLogEvent): Record<string, unknown> {
  return event.details as unknown as Record<string, unknown>;
}

/** Comparisons of details fields with regex groups; a group that did not match compares with null. */
function fields(text: string, event: AnyLogEvent, pattern: RegExp, names: ReadonlyArray<string | null>, convert: (s: string | undefined) => unknown = num): Comparison[] {
  const match = pattern.exec(text);
  return names.flatMap((name, i) => (name === null ? [] : [[name, details(event)[name], match ? convert(match[i + 1]) : `no match for ${pattern}`] as Comparison]));
}

/** A field that PostgreSQL prints only in some versions: compared when the text has it. */
function optional(text: string, event: AnyLogEvent, pattern: RegExp, name: string): Comparison[] {
  const match = pattern.exec(text);
  return match ? [[name, details(event)[name], num(match[1])]] : [];
}

/** The pid a session event names in its details is the pid of the process that logged it. */
const sessionPid: KindCheck = (_text, event, rawPid) => [['details.pid', details(event).pid, rawPid]];

const CHECKS: Partial<Record<EventKind, KindCheck>> = {
  autovacuum: (text, e) => [
    ...fields(text, e, /(?:removable cutoff|oldest xmin): (\d+)/, ['removable_cutoff_xid']),
    ...fields(text, e, /tuples: (\d+) removed, (\d+) remain, (\d+) are dead but not yet removable/, ['tuples_removed', 'tuples_remain', 'tuples_dead_not_removable']),
    ...fields(text, e, /elapsed: ([\d.]+) s/, ['elapsed_s']),
    ...optional(text, e, /avg read rate: ([\d.]+) MB\/s/, 'read_rate_mbs'),
  ],
  autoanalyze: (text, e) => [...fields(text, e, /elapsed: ([\d.]+) s/, ['elapsed_s']), ...optional(text, e, /avg write rate: ([\d.]+) MB\/s/, 'write_rate_mbs')],
  checkpoint: (text, e) => (details(e).phase === 'complete'
    ? [
        ...fields(text, e, /wrote (\d+) buffers/, ['buffers_written']),
        ...fields(text, e, /write=([\d.]+) s, sync=([\d.]+) s, total=([\d.]+) s/, ['write_s', 'sync_s', 'total_s']),
        ...fields(text, e, /distance=(\d+) kB, estimate=(\d+) kB/, ['distance_kb', 'estimate_kb']),
      ]
    : fields(text, e, /(?:checkpoint|restartpoint) starting: ([a-z\- ]+)/, ['reasons'], (s) => s?.trim().split(' '))),
  ddl: (text, e) => [['command and relation in the statement', true, new RegExp(`statement: ${details(e).command as string}\\b.*\\b${details(e).relation as string}\\b`).test(text)]],
  deadlock: (text, e) => {
    const raw = [...text.matchAll(/Process (\d+) waits for (\w+) on transaction \d+; blocked by process (\d+)/g)]
      .map((m) => ({ pid: num(m[1]), lock_mode: m[2], blocked_by_pid: num(m[3]) }));
    const parsed = (details(e).processes as Array<Record<string, unknown>>).map((p) => ({ pid: p.pid, lock_mode: p.lock_mode, blocked_by_pid: p.blocked_by_pid }));
    return [['processes (pid, lock mode, blocked by)', parsed, raw]];
  },
  lock_wait: (text, e) => fields(text, e, /process (\d+) (?:still waiting for|acquired|detected deadlock while waiting for) (\w+) on .*? after ([\d.]+) ms/, ['waiting_pid', 'lock_mode', 'wait_ms'],
    (s) => (s !== undefined && /^\d/.test(s) ? Number(s) : s)),
  lock_timeout: sessionPid,
  statement_timeout: sessionPid,
  idle_in_transaction_timeout: sessionPid,
  transaction_timeout: sessionPid,
  recovery_conflict: sessionPid,
  recovery_conflict_wait: (text, e) => [
    ...fields(text, e, /recovery (?:still|finished) waiting after ([\d.]+) ms/, ['wait_ms']),
    ...fields(text, e, new RegExp(`WAL redo at (${LSN})`), ['redo_lsn'], (s) => s),
  ],
  server_crash: (text, e) => fields(text, e, /\(PID (\d+)\) was terminated by signal (\d+)/, ['pid', 'signal']),
  server_restart: (text, e) => {
    if (details(e).phase === 'redo_start') return fields(text, e, new RegExp(`redo starts at (${LSN})`), ['lsn'], (s) => s);
    // PG 14+: "system usage: ... elapsed: N s" after the LSN.
    if (details(e).phase === 'redo_done') return [...fields(text, e, new RegExp(`redo done at (${LSN})`), ['lsn'], (s) => s), ...optional(text, e, /elapsed: ([\d.]+) s/, 'elapsed_s')];
    if (details(e).phase === 'shutdown_requested') return fields(text, e, /received (\w+) shutdown request/, ['shutdown_mode'], (s) => s);
    return [];
  },
  wraparound_warning: (text, e) => (details(e).refusing
    ? []
    : fields(text, e, /must be vacuumed (?:within|before) (\d+)/, ['remaining'])),
  slot_invalidated: (text, e) => [
    ...fields(text, e, /slot \\?"+(\w+)/, ['slot'], (s) => s),
    ...fields(text, e, new RegExp(`restart_lsn (${LSN})`), ['restart_lsn'], (s) => s),
  ],
  temp_file: (text, e) => fields(text, e, /temporary file: path .*?, size (\d+)/, ['size_bytes']),
};

/**
 * Asserts the envelope of every event, and with `english` the details each kind's check reads;
 * fails when a kind present in `events` read no value of its details from the text (a kind with
 * no check here: generic, and the server_restart phases without a number).
 */
export function expectRawValues(log: Buffer, events: readonly AnyLogEvent[], format: LogFormat, where: string, { english }: { english: boolean }): void {
  const mismatches: string[] = [];
  const checkedKinds = new Set<string>();
  for (const { event, text } of rawEntries(log, events)) {
    const [pid, ts] = envelope(text, format);
    const compared: Comparison[] = [['pid', event.pid, pid![2]], ['tsMs', event.tsMs, ts![2]]];
    const check = english ? CHECKS[event.kind] : undefined;
    const own = check ? check(text, event, pid![2]) : [];
    if (own.length > 0) checkedKinds.add(event.kind);
    for (const [field, parsed, raw] of [...compared, ...own]) {
      if (JSON.stringify(parsed) !== JSON.stringify(raw)) {
        mismatches.push(`line ${event.source.line} ${event.kind} ${field}: parsed ${JSON.stringify(parsed)}, raw text says ${JSON.stringify(raw)}`);
      }
    }
  }
  expect(mismatches, `${where}: values the pipeline parsed differ from the raw text`).toEqual([]);
  if (!english) return;
  const unchecked = [...new Set(events.map((e) => e.kind))].filter((kind) => kind in CHECKS && !checkedKinds.has(kind));
  expect(unchecked, `${where}: kinds whose details no event was checked against the raw text`).toEqual([]);
}
