/**
 * The RuleView over the SQLite store (tables events, series, samples; src/store/migrations.ts).
 * One view per evaluation instant; within it every query is memoised, so rules asking the same
 * question cost one query per evaluation.
 *
 * Every query is an index range, never a scan (RULE_VIEW_SQL; a test checks each plan): events
 * by (kind, ts_ms), series by (name, seen_ms) so series that went quiet before the window are
 * never read however many accumulated, samples by their key (series_id, ts_ms). The cost of an
 * evaluation follows what is live now, not how many days the store holds (bench/rules.ts).
 * Labels come back with the series' descriptive labels merged in (src/store/series-identity.ts).
 *
 * Decoded events are kept by id (a bounded, first-in first-out cache): rules read sliding windows,
 * so each evaluation would otherwise fetch and parse the same rows again, which dominated the
 * time of an offline replay (analyze --rules). A query reads ids first and whole rows only for
 * events not in the cache. Stored events never change; a cached entry is used only if its time
 * and kind still match the row's, in case retention freed an id that was then reused.
 *
 * An offline replay evaluates every 5 s of log time, also through long stretches with no new
 * events while alerts are open: thousands of evaluations over an unchanged store. Given
 * `dataVersion` (a number that changes whenever the store does), an event query is answered from
 * the previous answer for the same kind, targets and pid when nothing changed since, it reached at
 * least as far back, and no event of that kind is later than its instant: the same rows, without
 * a statement; and while the store holds no series at all (a replay of a log alone), series and
 * latest samples are none without asking. The daemon, whose store changes all the time, does not
 * pass it.
 *
 * Rows that cannot be decoded (details or labels that are not the JSON the writer stores) are
 * skipped, counted and a few kept as examples: a bad row never stops the rules.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../store/open-store.js';
import type { EventRow } from '../store/queries.js';
import type { EventKind, Labels, LogLevel } from '../domain/index.js';
import { SEEN_STEP_MS } from '../store/series-identity.js';
import {
  DEFAULT_STALE_AFTER_MS,
  firstAtOrAfter,
  labelsMatch,
  type EventCountQuery,
  type EventQuery,
  type LatestQuery,
  type LatestSample,
  type RuleEvent,
  type RuleView,
  type RuleViewSource,
  type SeriesData,
  type SeriesQuery,
  type TargetInfo,
  valueOutside,
} from './rule-view.js';

export interface StoreRuleViewOptions {
  targets: readonly TargetInfo[];
  staleAfterMs?: number;
  /** Newest events kept per query; older ones are dropped and counted. */
  maxEventsPerQuery?: number;
  /** Decoded events kept between evaluations. */
  maxCachedEvents?: number;
  /** Changes whenever the store's events change; enables answering a query from the previous window (offline replay). */
  dataVersion?: () => number;
}

/** An event query's answer, reusable while the store's version stays the same. */
interface EventWindow {
  version: number;
  sinceMs: number;
  nowMs: number;
  events: RuleEvent[];
}

export interface StoreRuleViewStats {
  badRows: number;
  truncatedQueries: number;
  examples: string[];
}


interface SeriesRow {
  id: number;
  target: string;
  labels: string;
  info: string | null;
}

interface PointRow {
  ts_ms: number;
  value: number | null;
}

type LastPointRow = SeriesRow & PointRow;

interface LabelledRow {
  row: SeriesRow;
  labels: Labels;
}

/** Series rows read within one view, by name, seen-since and target. */
type SeriesRowsMemo = Map<string, LabelledRow[]>;

const MAX_EXAMPLES = 5;
/** Decoded label sets kept between evaluations (series live now, mostly); cleared past this. */
const MAX_DECODED_SERIES = 200_000;

/** Every statement the view runs, by what it reads; `?` parameters in the order given. */
export const RULE_VIEW_SQL = {
  /** name, seen since (ms) */
  seriesOfName: 'SELECT id, target, labels, info FROM series WHERE name = ? AND seen_ms >= ?',
  /** name, seen since (ms), target */
  seriesOfNameOnTarget: 'SELECT id, target, labels, info FROM series WHERE name = ? AND seen_ms >= ? AND target = ?',
  /** series id, from, to */
  points: 'SELECT ts_ms, value FROM samples WHERE series_id = ? AND ts_ms >= ? AND ts_ms <= ? ORDER BY ts_ms',
  /** series id, from, to */
  lastPoint: 'SELECT ts_ms, value FROM samples WHERE series_id = ? AND ts_ms >= ? AND ts_ms <= ? ORDER BY ts_ms DESC LIMIT 1',
  /**
   * from, to, name, seen since (ms), target?, below?, at least?: every series of a name with its
   * last point, in one statement; a series whose last value is out of bounds is left out before
   * its labels are read.
   */
  lastPointOfName(onTarget: boolean, bounds: { below: boolean; atLeast: boolean } = { below: false, atLeast: false }): string {
    return `SELECT s.id, s.target, s.labels, s.info, p.ts_ms, p.value FROM series s
      JOIN samples p ON p.series_id = s.id AND p.ts_ms = (SELECT max(ts_ms) FROM samples WHERE series_id = s.id AND ts_ms >= ? AND ts_ms <= ?)
      WHERE s.name = ? AND s.seen_ms >= ?${onTarget ? ' AND s.target = ?' : ''}` +
      `${bounds.below ? ' AND (p.value IS NULL OR p.value >= ?)' : ''}${bounds.atLeast ? ' AND (p.value IS NULL OR p.value < ?)' : ''}`;
  },
  /** whether any series is stored */
  anySeries: 'SELECT 1 AS found FROM series LIMIT 1',
  /** until, bucket (ms), kinds..., target, from, until: events per bucket back from `until` */
  eventCounts(kinds: number): string {
    // Parameters bind as REAL: the cast makes the division whole (the operands are never negative).
    // `+target`: through (kind, ts_ms), the few rows of these kinds, not every event of the target.
    return `SELECT CAST((? - 1 - ts_ms) / ? AS INTEGER) AS back, count(*) AS n FROM events
      WHERE kind IN (${Array.from({ length: kinds }, () => '?').join(', ')}) AND +target = ? AND ts_ms >= ? AND ts_ms < ? GROUP BY back`;
  },
  /** kind: the latest event time of a kind, to know a window holds every event up to now */
  latestOfKind: 'SELECT max(ts_ms) AS ts_ms FROM events WHERE kind = ?',
  /** kind, from, to, targets..., pid?, limit: the ids, newest first (whole rows come from eventsById or the cache) */
  events(targets: number | null, byPid: boolean): string {
    return `SELECT id, ts_ms FROM events WHERE kind = ? AND ts_ms >= ? AND ts_ms <= ?
      ${targets === null ? '' : `AND target IN (${Array.from({ length: targets }, () => '?').join(', ')})`} ${byPid ? 'AND pid = ?' : ''}
      ORDER BY ts_ms DESC, id DESC LIMIT ?`;
  },
  /** ids...: whole rows of the events not in the cache */
  eventsById(count: number): string {
    return `SELECT id, target, ts_ms, kind, level, sqlstate, pid, database, user_name, message, details, source_file, source_offset
      FROM events WHERE id IN (${Array.from({ length: count }, () => '?').join(', ')})`;
  },
};
/** Whole rows fetched per query for events missing from the cache (SQLite's parameter limit is far above). */
const FETCH_CHUNK = 500;

export class StoreRuleViewSource implements RuleViewSource {
  private readonly staleAfterMs: number;
  private readonly maxEvents: number;
  private readonly statements = new Map<string, Database.Statement<unknown[]>>();
  private readonly counters: StoreRuleViewStats = { badRows: 0, truncatedQueries: 0, examples: [] };
  private readonly decoded = new Map<number, { labels: string; info: string | null; decoded: Labels | null }>();
  private readonly decodedEvents = new Map<number, RuleEvent>();
  private readonly maxCachedEvents: number;
  private readonly windows = new Map<string, EventWindow>();
  private readonly latestByKind = new Map<string, { version: number; tsMs: number | null }>();
  private seriesKnown: { version: number; none: boolean } | null = null;

  constructor(
    private readonly db: Db,
    private readonly options: StoreRuleViewOptions,
  ) {
    this.staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    this.maxEvents = options.maxEventsPerQuery ?? 10_000;
    this.maxCachedEvents = options.maxCachedEvents ?? 10_000;
  }

  get stats(): StoreRuleViewStats {
    return { ...this.counters, examples: [...this.counters.examples] };
  }

  at(nowMs: number): RuleView {
    const memo = new Map<string, unknown>();
    const rows: SeriesRowsMemo = new Map();
    const once = <T>(key: string, compute: () => T): T => {
      if (!memo.has(key)) memo.set(key, compute());
      return memo.get(key) as T;
    };
    return {
      nowMs,
      targets: () => this.options.targets,
      events: <K extends EventKind>(kind: K, q: EventQuery) =>
        once(`e\u0000${kind}\u0000${JSON.stringify(q)}`, () => this.events(kind, q, nowMs)),
      eventCounts: (kinds: readonly EventKind[], q: EventCountQuery) =>
        once(`c\u0000${JSON.stringify([kinds, q])}`, () => this.eventCounts(kinds, q, nowMs)),
      series: (name: string, q: SeriesQuery) =>
        this.noSeries() ? [] : once(`s\u0000${name}\u0000${JSON.stringify(q)}`, () => this.series(name, q, nowMs, rows)),
      latest: (name: string, q: LatestQuery = {}) =>
        this.noSeries() ? [] : once(`l\u0000${name}\u0000${JSON.stringify(q)}`, () => this.latest(name, q, nowMs, rows)),
    };
  }

  private eventCounts(kinds: readonly EventKind[], q: EventCountQuery, nowMs: number): number[] {
    const untilMs = Math.min(q.untilMs, nowMs + 1);
    const rows = this.prepare(RULE_VIEW_SQL.eventCounts(kinds.length))
      .all(untilMs, q.bucketMs, ...kinds, q.target, untilMs - q.buckets * q.bucketMs, untilMs) as Array<{ back: number; n: number }>;
    const counts = new Array<number>(q.buckets).fill(0);
    for (const { back, n } of rows) counts[back] = n;
    return counts;
  }

  private events<K extends EventKind>(kind: K, q: EventQuery, nowMs: number): Array<RuleEvent<K>> {
    const targets = q.target === undefined ? null : typeof q.target === 'string' ? [q.target] : [...q.target];
    if (targets?.length === 0) return [];
    const version = this.options.dataVersion?.();
    if (version === undefined) return this.queryEvents(kind, q, targets, nowMs).events;
    const key = `${kind}\u0000${targets?.join('\u0000') ?? ''}\u0000${q.pid ?? ''}`;
    const known = this.windows.get(key);
    if (known && known.version === version && q.sinceMs >= known.sinceMs && nowMs >= known.nowMs && this.nothingLaterOfKind(kind, version, known.nowMs)) {
      return known.events.slice(firstAtOrAfter(known.events, q.sinceMs)) as Array<RuleEvent<K>>;
    }
    const { events, truncated } = this.queryEvents(kind, q, targets, nowMs);
    // A truncated answer lacks its oldest rows: not a window to narrow later.
    if (truncated) this.windows.delete(key);
    else this.windows.set(key, { version, sinceMs: q.sinceMs, nowMs, events });
    return events;
  }

  /** The store holds no series at all, as far as its version tells (never without dataVersion). */
  private noSeries(): boolean {
    const version = this.options.dataVersion?.();
    if (version === undefined) return false;
    if (this.seriesKnown?.version !== version) {
      this.seriesKnown = { version, none: this.prepare(RULE_VIEW_SQL.anySeries).get() === undefined };
    }
    return this.seriesKnown.none;
  }

  /** No stored event of `kind` is later than `atMs` (read once per kind and store version). */
  private nothingLaterOfKind(kind: EventKind, version: number, atMs: number): boolean {
    let latest = this.latestByKind.get(kind);
    if (latest?.version !== version) {
      const row = this.prepare(RULE_VIEW_SQL.latestOfKind).get(kind) as { ts_ms: number | null } | undefined;
      latest = { version, tsMs: row?.ts_ms ?? null };
      this.latestByKind.set(kind, latest);
    }
    return latest.tsMs === null || latest.tsMs <= atMs;
  }

  private queryEvents<K extends EventKind>(kind: K, q: EventQuery, targets: string[] | null, nowMs: number): { events: Array<RuleEvent<K>>; truncated: boolean } {
    const sql = RULE_VIEW_SQL.events(targets?.length ?? null, q.pid !== undefined);
    const params: unknown[] = [kind, q.sinceMs, nowMs, ...(targets ?? []), ...(q.pid !== undefined ? [q.pid] : []), this.maxEvents];
    const rows = (this.prepare(sql).all(...params) as Array<{ id: number; ts_ms: number }>).reverse();
    const truncated = rows.length >= this.maxEvents;
    if (truncated) this.counters.truncatedQueries++;
    const cached = (r: { id: number; ts_ms: number }): RuleEvent | undefined => {
      const e = this.decodedEvents.get(r.id);
      return e && e.tsMs === r.ts_ms && e.kind === kind ? e : undefined;
    };
    // Looked up before fetching: caching the fetched rows may evict some of the hits.
    const hits = rows.map(cached);
    const fetched = this.fetch(rows.filter((_, i) => hits[i] === undefined).map((r) => r.id));
    const events = rows.map((r, i) => hits[i] ?? fetched.get(r.id)).filter((e): e is RuleEvent => e !== undefined) as Array<RuleEvent<K>>;
    return { events, truncated };
  }

  /** Reads, decodes and caches the events with these ids; rows that cannot be decoded are counted and left out. */
  private fetch(ids: number[]): Map<number, RuleEvent> {
    const fetched = new Map<number, RuleEvent>();
    for (let start = 0; start < ids.length; start += FETCH_CHUNK) {
      const chunk = ids.slice(start, start + FETCH_CHUNK);
      const rows = this.prepare(RULE_VIEW_SQL.eventsById(chunk.length)).all(...chunk) as EventRow[];
      for (const row of rows) {
        const details = this.decode(row.details, `events.id ${row.id}: details`);
        if (details === undefined || typeof details !== 'object' || details === null) continue;
        const event = {
          id: row.id, kind: row.kind, target: row.target, tsMs: row.ts_ms, pid: row.pid, database: row.database, user: row.user_name,
          level: row.level as LogLevel, sqlstate: row.sqlstate, message: row.message, details,
          source: { file: row.source_file, offset: row.source_offset, line: null },
        } as RuleEvent;
        fetched.set(event.id, event);
        this.rememberEvent(event);
      }
    }
    return fetched;
  }

  private rememberEvent(event: RuleEvent): void {
    this.decodedEvents.delete(event.id);
    this.decodedEvents.set(event.id, event);
    // Oldest first: windows slide forward, so the first cached are the first no longer read.
    for (const id of this.decodedEvents.keys()) {
      if (this.decodedEvents.size <= this.maxCachedEvents) break;
      this.decodedEvents.delete(id);
    }
  }

  /**
   * Series of a name that may have a sample at or after sinceMs (seen_ms is coarse: SEEN_STEP_MS).
   * Read once per view for each name, window and target: a rule asking for one table after another
   * (autovacuum-abnormal's candidates) reads 2,000 series rows once, not once per table.
   */
  private seriesRows(name: string, sinceMs: number, target: string | undefined, wanted: Labels | undefined, memo: SeriesRowsMemo): LabelledRow[] {
    const seenSinceMs = sinceMs - SEEN_STEP_MS;
    const key = `${name}\u0000${seenSinceMs}\u0000${target ?? ''}`;
    let all = memo.get(key);
    if (all === undefined) {
      const rows = (target === undefined
        ? this.prepare(RULE_VIEW_SQL.seriesOfName).all(name, seenSinceMs)
        : this.prepare(RULE_VIEW_SQL.seriesOfNameOnTarget).all(name, seenSinceMs, target)) as SeriesRow[];
      all = [];
      for (const row of rows) {
        const labels = this.labelsOf(row);
        if (labels) all.push({ row, labels });
      }
      memo.set(key, all);
    }
    return wanted === undefined ? all : all.filter((r) => labelsMatch(r.labels, wanted));
  }

  private series(name: string, q: SeriesQuery, nowMs: number, memo: SeriesRowsMemo): SeriesData[] {
    const points = this.prepare(RULE_VIEW_SQL.points);
    const out: SeriesData[] = [];
    for (const { row, labels } of this.seriesRows(name, q.sinceMs, q.target, q.labels, memo)) {
      const rows = points.all(row.id, q.sinceMs, nowMs) as PointRow[];
      if (rows.length > 0) out.push({ name, target: row.target, labels, points: rows.map((p) => ({ tsMs: p.ts_ms, value: p.value })) });
    }
    return out;
  }

  /**
   * Asked for labels, a few series match: they are chosen first and read one by one. Asked for
   * every series of a name (2,000 tables), one statement reads them with their last points:
   * about three times faster than a statement per series (bench/rules.ts).
   */
  private latest(name: string, q: LatestQuery, nowMs: number, memo: SeriesRowsMemo): LatestSample[] {
    const sinceMs = nowMs - (q.maxAgeMs ?? this.staleAfterMs);
    const out: LatestSample[] = [];
    if (q.labels !== undefined && Object.keys(q.labels).length > 0) {
      const last = this.prepare(RULE_VIEW_SQL.lastPoint);
      for (const { row, labels } of this.seriesRows(name, sinceMs, q.target, q.labels, memo)) {
        const point = last.get(row.id, sinceMs, nowMs) as PointRow | undefined;
        if (point && !valueOutside(point.value, q.unlessValue)) out.push({ name, target: row.target, labels, tsMs: point.ts_ms, value: point.value });
      }
      return out;
    }
    const { below, atLeast } = q.unlessValue ?? {};
    const sql = RULE_VIEW_SQL.lastPointOfName(q.target !== undefined, { below: below !== undefined, atLeast: atLeast !== undefined });
    const params = [sinceMs, nowMs, name, sinceMs - SEEN_STEP_MS, ...[q.target, below, atLeast].filter((p) => p !== undefined)];
    const rows = this.prepare(sql).all(...params) as LastPointRow[];
    for (const row of rows) {
      const labels = this.labelsOf(row);
      if (labels) out.push({ name, target: row.target, labels, tsMs: row.ts_ms, value: row.value });
    }
    return out;
  }

  /** Identity labels and info merged; decoded once per series while its row does not change. */
  private labelsOf(row: SeriesRow): Labels | null {
    const known = this.decoded.get(row.id);
    if (known !== undefined && known.labels === row.labels && known.info === row.info) return known.decoded;
    const identity = this.decodePairs(row.labels, `series.id ${row.id}: labels`);
    const info = row.info === null ? {} : this.decodePairs(row.info, `series.id ${row.id}: info`);
    const decoded = identity && info ? { ...identity, ...info } : null;
    if (this.decoded.size >= MAX_DECODED_SERIES) this.decoded.clear();
    this.decoded.set(row.id, { labels: row.labels, info: row.info, decoded });
    return decoded;
  }

  /** series.labels and series.info are labelsKey(): a JSON array of [key, value] pairs. */
  private decodePairs(json: string, where: string): Labels | null {
    const pairs = this.decode(json, where);
    if (!Array.isArray(pairs) || !pairs.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string')) {
      if (pairs !== undefined) this.bad(`${where} are not [key, value] pairs`);
      return null;
    }
    return Object.fromEntries(pairs as Array<[string, string]>);
  }

  private decode(json: string, where: string): unknown {
    try {
      return JSON.parse(json) as unknown;
    } catch (err) {
      this.bad(`${where}: ${(err as Error).message}`);
      return undefined;
    }
  }

  private bad(example: string): void {
    this.counters.badRows++;
    if (this.counters.examples.length < MAX_EXAMPLES) this.counters.examples.push(example);
  }

  private prepare(sql: string): Database.Statement<unknown[]> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare<unknown[]>(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
