/**
 * The report's `queries` section: statements grouped by fingerprint (fingerprint.ts), from the
 * duration and statement lines of postgres.c (statement-lines.ts), in generic events (and `ddl`
 * ones, which are log_statement lines too). Per fingerprint: executions, durations (total, mean,
 * p50/p95 from a sketch, max), databases, users and applications; beside them the slowest single
 * statements, and per minute the queries, their total time and their p50/p95/max (a sketch per
 * minute, so that stored minutes and hours merge into any window's percentiles).
 *
 * What is one execution:
 * - a `duration: ... statement:` or `duration: ... execute <name>:` line (log_min_duration_statement);
 * - a `statement:` or `execute <name>:` line (log_statement), completed by the next such line of
 *   its process: a `duration: N ms` alone gives its time (log_duration, or a statement over
 *   log_min_duration_statement already logged: postgres.c prints no text twice); a statement
 *   line or a timed one means it ran untimed (below the threshold);
 * - parse and bind steps are not executions: their time is totalled apart (`parse_bind`); a
 *   `duration:` line alone that follows no statement line is totalled as `statement_not_logged`.
 * Pairing across ranges or minutes keeps, per process, the statement left open at the end
 * (`open`) and what a span saw first (`heads`), which the merge joins: the same as one fold.
 * Durations are whole microseconds, so totals are exact in any grouping.
 *
 * Owns: this section's state, merge and result. Never: reading files or events' framing.
 */
import type { AnyLogEvent } from '../../domain/index.js';
import { addToDistribution, emptyDistribution, mergeDistributions, percentilesMs, type DurationDistribution, type Percentiles } from './duration-sketch.js';
import { fingerprintOf, type Fingerprint } from './fingerprint.js';
import { countersInMinute, mergePerMinute, MINUTE_MS, minuteKey, perMinuteRows, type PerMinute, type ReportLimits, type ReportSection } from './section.js';
import { readStatementLine } from './statement-lines.js';

/** Who ran a statement: an event is one (its application is absent when not logged). */
interface Who {
  database: string | null;
  user: string | null;
  application?: string | null;
}

interface Totals {
  count: number;
  timed: number;
  total_us: number;
}

interface FingerprintStats extends Totals, DurationDistribution {
  text: string;
  parsed: boolean;
  databases: Record<string, number>;
  users: Record<string, number>;
  applications: Record<string, number>;
}

interface SlowStatement extends Who {
  fingerprint: string;
  text: string;
  duration_us: number;
  ts_ms: number;
}

/** A log_statement line waiting for the next line of its process. */
interface OpenStatement extends Who {
  fingerprint: Fingerprint;
  ts_ms: number;
}

/** A `duration:` line alone: the time of the statement its process logged last. */
interface DurationAlone extends Who {
  duration_us: number;
  ts_ms: number;
}

/**
 * The first pairing line of a process in a span: what it does to a statement an earlier span
 * left open. A duration alone is its time; any other line leaves it untimed.
 */
type PidHead = { alone: DurationAlone } | { statement: true };

export interface QueriesState {
  fingerprints: Record<string, FingerprintStats>;
  /** Keys of `fingerprints` (kept so that add need not count them). */
  fingerprint_count: number;
  /** Executions of fingerprints past `limits.maxKeys`. */
  other: Totals;
  statement_not_logged: Totals;
  parse_bind: Totals;
  /** The slowest executions, slowest first, at most `limits.topN`. */
  slowest: SlowStatement[];
  per_minute: PerMinute;
  /**
   * The durations of each minute with a timed execution (same keys as `per_minute`). A sketch
   * has at most ~1,400 buckets (1 µs to a week at 2% each), so a minute's size is bounded
   * whatever its traffic. null: some of the minute was stored by a pgvigil without them, so its
   * percentiles are unknown. Absent in such stored states (see minuteDurationsOf).
   */
  minute_durations?: MinuteDurations;
  heads: Record<string, PidHead>;
  open: Record<string, OpenStatement>;
}

type MinuteDurations = Record<string, DurationDistribution | null>;

/** Shared by every process whose first pairing line named its statement: it is never changed. */
const LINE_WITH_STATEMENT: PidHead = Object.freeze({ statement: true as const });

/** Names per fingerprint in each of databases, users and applications; more are counted under OTHER_NAME. */
const MAX_NAMES = 50;
const OTHER_NAME = '(other)';
/** Names shown per fingerprint in the result. */
const TOP_NAMES = 5;

function emptyTotals(): Totals {
  return { count: 0, timed: 0, total_us: 0 };
}

function whoOf(event: AnyLogEvent): Who {
  return { database: event.database, user: event.user, application: event.application ?? null };
}

export const queriesSection: ReportSection<QueriesState, QueriesResult> = {
  key: 'queries',
  empty: () => ({
    fingerprints: {}, fingerprint_count: 0, other: emptyTotals(), statement_not_logged: emptyTotals(), parse_bind: emptyTotals(),
    slowest: [], per_minute: {}, minute_durations: {}, heads: {}, open: {},
  }),
  add: addEvent,
  merge: mergeStates,
  result: resultOf,
};

function addEvent(state: QueriesState, event: AnyLogEvent, limits: ReportLimits): void {
  if (event.kind !== 'generic' && event.kind !== 'ddl') return;
  const line = readStatementLine(event.message);
  if (line === null) return;
  const pid = event.pid;
  const durationUs = line.durationUs;
  if (line.step === 'parse' || line.step === 'bind') {
    addTotals(state.parse_bind, durationUs);
    return;
  }
  if (line.text === null) {
    durationAlone(state, pid, { ...whoOf(event), duration_us: durationUs!, ts_ms: event.tsMs }, limits);
    return;
  }
  const fingerprint = fingerprintOf(line.text);
  const open = pid === null ? undefined : state.open[pid];
  if (durationUs === null) {
    // A log_statement line: an earlier one of the process got no time.
    if (open !== undefined) record(state, open.fingerprint, null, open.ts_ms, open, limits, false);
    if (pid === null) {
      record(state, fingerprint, null, event.tsMs, event, limits, true);
      return;
    }
    state.heads[pid] ??= LINE_WITH_STATEMENT;
    state.open[pid] = { ...whoOf(event), fingerprint, ts_ms: event.tsMs };
    // Created now, so that the first statement of a fingerprint names it in any grouping.
    statsOf(state, fingerprint, state.fingerprint_count < limits.maxKeys);
    return;
  }
  if (pid !== null) {
    if (open !== undefined) {
      record(state, open.fingerprint, null, open.ts_ms, open, limits, false);
      delete state.open[pid];
    }
    state.heads[pid] ??= LINE_WITH_STATEMENT;
  }
  record(state, fingerprint, durationUs, event.tsMs, event, limits, true);
}

function durationAlone(state: QueriesState, pid: number | null, alone: DurationAlone, limits: ReportLimits): void {
  const open = pid === null ? undefined : state.open[pid];
  if (open !== undefined) {
    delete state.open[pid!];
    record(state, open.fingerprint, alone.duration_us, alone.ts_ms, open, limits, false);
  } else if (pid !== null && state.heads[pid] === undefined) {
    // Its statement may be the one an earlier span left open: the merge decides.
    state.heads[pid] = { alone };
  } else {
    addTotals(state.statement_not_logged, alone.duration_us);
  }
}

function addTotals(totals: Totals, durationUs: number | null): void {
  totals.count++;
  if (durationUs === null) return;
  totals.timed++;
  totals.total_us += durationUs;
}

/** The fingerprint's statistics, created if `room` allows; null when it is not kept (past `limits.maxKeys`). */
function statsOf(state: QueriesState, fingerprint: Fingerprint, room: boolean): FingerprintStats | null {
  const known = state.fingerprints[fingerprint.id];
  if (known !== undefined) return known;
  if (!room) return null;
  state.fingerprint_count++;
  return (state.fingerprints[fingerprint.id] = {
    text: fingerprint.text, parsed: fingerprint.parsed, count: 0, timed: 0, total_us: 0, ...emptyDistribution(), databases: {}, users: {}, applications: {},
  });
}

/** What record() writes to in the minute of an execution. */
interface MinuteSlot {
  state: QueriesState;
  startMs: number;
  key: string;
  counters: Record<string, number>;
  /** The state's `minute_durations`. */
  allDurations: MinuteDurations;
  /** The minute's entry in `allDurations`: undefined until a timed execution, null when unknown. */
  durations: DurationDistribution | null | undefined;
}

/**
 * The minute of the last execution recorded. Most executions fall in the minute of the one before
 * them, so a statement's counters and durations are reached without two keyed look-ups (minute
 * keys are integer-like strings, slow keys in V8: ~15% of this section's fold on the bench's log).
 * A merge may replace a minute's durations, so it forgets the slot; a result folds into a clone.
 */
let lastMinute: MinuteSlot | null = null;

function minuteOf(state: QueriesState, tsMs: number): MinuteSlot {
  const last = lastMinute;
  if (last !== null && last.state === state && tsMs >= last.startMs && tsMs < last.startMs + MINUTE_MS) return last;
  // Before the counters: a state stored without durations marks its timed minutes unknown.
  const allDurations = minuteDurationsOf(state);
  const key = minuteKey(tsMs);
  return (lastMinute = { state, startMs: Number(key), key, counters: countersInMinute(state.per_minute, tsMs), allDurations, durations: allDurations[key] });
}

/**
 * One execution. `isNew`: its fingerprint may be let in now; false for an open statement
 * completed later, whose fingerprint was let in (or not) when its statement line was read.
 */
function record(state: QueriesState, fingerprint: Fingerprint, durationUs: number | null, tsMs: number, who: Who, limits: ReportLimits, isNew: boolean): void {
  const minute = minuteOf(state, tsMs);
  minute.counters.queries = (minute.counters.queries ?? 0) + 1;
  if (durationUs !== null) {
    minute.counters.duration_us = (minute.counters.duration_us ?? 0) + durationUs;
    if (minute.durations === undefined) addToDistribution((minute.durations = minute.allDurations[minute.key] = emptyDistribution()), durationUs);
    else if (minute.durations !== null) addToDistribution(minute.durations, durationUs);
  }
  const stats = statsOf(state, fingerprint, isNew && state.fingerprint_count < limits.maxKeys);
  if (stats === null) {
    addTotals(state.other, durationUs);
    return;
  }
  addTotals(stats, durationUs);
  countName(stats.databases, who.database);
  countName(stats.users, who.user);
  countName(stats.applications, who.application ?? null);
  if (durationUs === null) return;
  addToDistribution(stats, durationUs);
  const last = state.slowest[state.slowest.length - 1];
  // Most executions are not among the slowest: no candidate is made for them.
  if (state.slowest.length >= limits.topN && last !== undefined && durationUs < last.duration_us) return;
  keepIfSlow(state.slowest, { fingerprint: fingerprint.id, text: fingerprint.text, duration_us: durationUs, ts_ms: tsMs, database: who.database, user: who.user, application: who.application ?? null }, limits.topN);
}

function countName(names: Record<string, number>, name: string | null, n = 1): void {
  if (name === null) return;
  const known = names[name];
  if (known !== undefined) names[name] = known + n;
  else {
    const key = Object.keys(names).length < MAX_NAMES ? name : OTHER_NAME;
    names[key] = (names[key] ?? 0) + n;
  }
}

/** Slowest first; equal durations by time, then fingerprint: one order, so any grouping keeps the same ones. */
function slowerFirst(a: SlowStatement, b: SlowStatement): number {
  return b.duration_us - a.duration_us || a.ts_ms - b.ts_ms || (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0);
}

function keepIfSlow(slowest: SlowStatement[], candidate: SlowStatement, topN: number): void {
  const last = slowest[slowest.length - 1];
  if (slowest.length >= topN && last !== undefined && slowerFirst(candidate, last) >= 0) return;
  let at = slowest.length;
  while (at > 0 && slowerFirst(candidate, slowest[at - 1]!) < 0) at--;
  slowest.splice(at, 0, candidate);
  if (slowest.length > topN) slowest.length = topN;
}

function mergeStates(earlier: QueriesState, later: QueriesState, limits: ReportLimits): QueriesState {
  lastMinute = null;
  mergeMinuteDurations(minuteDurationsOf(earlier), minuteDurationsOf(later));
  for (const [id, stats] of Object.entries(later.fingerprints)) mergeFingerprint(earlier, id, stats, limits);
  mergeTotals(earlier.other, later.other);
  mergeTotals(earlier.statement_not_logged, later.statement_not_logged);
  mergeTotals(earlier.parse_bind, later.parse_bind);
  mergePerMinute(earlier.per_minute, later.per_minute);
  for (const slow of later.slowest) keepIfSlow(earlier.slowest, slow, limits.topN);
  for (const [pid, head] of Object.entries(later.heads)) {
    joinAtPid(earlier, pid, head, limits);
    earlier.heads[pid] ??= head;
  }
  Object.assign(earlier.open, later.open);
  return earlier;
}

/** What `earlier`'s open statement of `pid` becomes given `later`'s first line of the process. */
function joinAtPid(earlier: QueriesState, pid: string, head: PidHead, limits: ReportLimits): void {
  const open = earlier.open[pid];
  if (open === undefined) {
    if ('alone' in head && earlier.heads[pid] !== undefined) addTotals(earlier.statement_not_logged, head.alone.duration_us);
    return;
  }
  delete earlier.open[pid];
  if ('alone' in head) record(earlier, open.fingerprint, head.alone.duration_us, head.alone.ts_ms, open, limits, false);
  else record(earlier, open.fingerprint, null, open.ts_ms, open, limits, false);
}

function mergeTotals(into: Totals, more: Totals): void {
  into.count += more.count;
  into.timed += more.timed;
  into.total_us += more.total_us;
}

function mergeFingerprint(state: QueriesState, id: string, more: FingerprintStats, limits: ReportLimits): void {
  const stats = state.fingerprints[id];
  if (stats === undefined) {
    if (state.fingerprint_count >= limits.maxKeys) {
      mergeTotals(state.other, more);
      return;
    }
    state.fingerprints[id] = more;
    state.fingerprint_count++;
    return;
  }
  mergeTotals(stats, more);
  mergeDistributions(stats, more);
  for (const [names, moreNames] of [[stats.databases, more.databases], [stats.users, more.users], [stats.applications, more.applications]] as const) {
    for (const [name, n] of Object.entries(moreNames)) countName(names, name, n);
  }
}

/**
 * The state's minute durations. A state stored before they were kept has none: each of its
 * minutes with a duration is marked unknown, so merging it never passes for the whole minute.
 */
function minuteDurationsOf(state: QueriesState): MinuteDurations {
  if (state.minute_durations !== undefined) return state.minute_durations;
  const unknown: MinuteDurations = {};
  for (const [minute, counters] of Object.entries(state.per_minute)) if (counters.duration_us !== undefined) unknown[minute] = null;
  return (state.minute_durations = unknown);
}

/** `more`'s minutes added into `into`; an unknown part makes the whole minute unknown. */
function mergeMinuteDurations(into: MinuteDurations, more: MinuteDurations): void {
  for (const [minute, durations] of Object.entries(more)) {
    const known = into[minute];
    if (known === undefined || durations === null) into[minute] = durations;
    else if (known !== null) mergeDistributions(known, durations);
  }
}

export interface NameCount {
  name: string;
  count: number;
}

export interface FingerprintRow {
  fingerprint: string;
  /** Normalised: literals and parameters as `$n`. */
  text: string;
  /** False: PostgreSQL's parser rejected the text (cut short?), grouped by its literals blanked. */
  parsed: boolean;
  /** Executions, with or without a duration. */
  count: number;
  /** Executions with a duration. */
  timed: number;
  total_ms: number;
  mean_ms: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  max_ms: number | null;
  databases: NameCount[];
  users: NameCount[];
  applications: NameCount[];
}

export interface SlowRow {
  fingerprint: string;
  text: string;
  duration_ms: number;
  ts: string;
  database: string | null;
  user: string | null;
  application: string | null;
}

export interface TotalsRow {
  count: number;
  total_ms: number;
}

export interface QueriesResult {
  /** Executions: statements and execute steps, with or without a duration. */
  queries: number;
  timed: number;
  total_ms: number;
  /** Distinct fingerprints kept (at most `limits.maxKeys`). */
  fingerprints: number;
  by_total_time: FingerprintRow[];
  by_count: FingerprintRow[];
  slowest: SlowRow[];
  /** Executions of fingerprints past `limits.maxKeys`. */
  other_fingerprints: TotalsRow;
  /** `duration:` lines alone (log_duration) with no statement line of their process before them. */
  statement_not_logged: TotalsRow;
  /** Parse and bind steps of the extended protocol (their execution is counted at execute). */
  parse_bind: TotalsRow;
  /** Per minute with queries: p50/p95/max of its timed executions, null when none (or not stored). */
  per_minute: Array<{ minute: string; queries: number; duration_ms: number } & Percentiles>;
  /** Minutes with durations whose percentiles are unknown: stored by a pgvigil that did not keep them. */
  minutes_without_percentiles: number;
}

function resultOf(original: QueriesState, limits: ReportLimits): QueriesResult {
  // What is still open at the end of the log ran untimed; a leading duration's statement was before it.
  const state = structuredClone(original);
  for (const open of Object.values(state.open)) record(state, open.fingerprint, null, open.ts_ms, open, limits, false);
  for (const head of Object.values(state.heads)) if ('alone' in head) addTotals(state.statement_not_logged, head.alone.duration_us);
  const minuteDurations = minuteDurationsOf(state);
  const stats = Object.entries(state.fingerprints).filter(([, s]) => s.count > 0);
  const totals = stats.reduce((sum, [, s]) => ({ count: sum.count + s.count, timed: sum.timed + s.timed, total_us: sum.total_us + s.total_us }), { ...state.other });
  const top = (order: (a: FingerprintStats, b: FingerprintStats) => number): FingerprintRow[] =>
    [...stats].sort(([idA, a], [idB, b]) => order(a, b) || (idA < idB ? -1 : 1)).slice(0, limits.topN).map(([id, s]) => rowOf(id, s));
  return {
    queries: totals.count,
    timed: totals.timed,
    total_ms: ms(totals.total_us),
    fingerprints: stats.length,
    by_total_time: top((a, b) => b.total_us - a.total_us || b.count - a.count),
    by_count: top((a, b) => b.count - a.count || b.total_us - a.total_us),
    slowest: state.slowest.slice(0, limits.topN).map((s) => ({
      fingerprint: s.fingerprint, text: s.text, duration_ms: ms(s.duration_us), ts: new Date(s.ts_ms).toISOString(), database: s.database, user: s.user, application: s.application ?? null,
    })),
    other_fingerprints: totalsRow(state.other),
    statement_not_logged: totalsRow(state.statement_not_logged),
    parse_bind: totalsRow(state.parse_bind),
    per_minute: perMinuteRows(state.per_minute, ['queries', 'duration_us']).map((row) => {
      const durations = minuteDurations[String(Date.parse(row.minute))];
      return { minute: row.minute, queries: Number(row.queries), duration_ms: ms(Number(row.duration_us)), ...(durations ? percentilesMs(durations) : NO_PERCENTILES) };
    }),
    minutes_without_percentiles: Object.values(minuteDurations).filter((d) => d === null).length,
  };
}

const NO_PERCENTILES: Percentiles = { p50_ms: null, p95_ms: null, max_ms: null };

function rowOf(id: string, s: FingerprintStats): FingerprintRow {
  return {
    fingerprint: id, text: s.text, parsed: s.parsed, count: s.count, timed: s.timed, total_ms: ms(s.total_us),
    mean_ms: s.timed > 0 ? round3(s.total_us / s.timed / 1000) : null,
    ...percentilesMs(s),
    databases: topNames(s.databases), users: topNames(s.users), applications: topNames(s.applications),
  };
}

function topNames(names: Record<string, number>): NameCount[] {
  return Object.entries(names).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TOP_NAMES).map(([name, count]) => ({ name, count }));
}

function totalsRow(totals: Totals): TotalsRow {
  return { count: totals.count, total_ms: ms(totals.total_us) };
}

function ms(us: number): number {
  return us / 1000;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
