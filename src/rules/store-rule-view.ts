/**
 * The RuleView over the SQLite store (tables events, series, samples; src/store/migrations.ts).
 * One view per evaluation instant; within it every query is memoised, so rules asking the same
 * question cost one query per evaluation.
 *
 * Decoded events are kept by id (a bounded, first-in first-out cache): rules read sliding windows,
 * so each evaluation would otherwise fetch and parse the same rows again, which dominated the
 * time of an offline replay (analyze --rules). A query reads ids first and whole rows only for
 * events not in the cache. Stored events never change; a cached entry is used only if its time
 * and kind still match the row's, in case retention freed an id that was then reused.
 *
 * Rows that cannot be decoded (details or labels that are not the JSON the writer stores) are
 * skipped, counted and a few kept as examples: a bad row never stops the rules.
 */
import type Database from 'better-sqlite3';
import type { Db } from '../store/open-store.js';
import type { EventRow } from '../store/queries.js';
import type { EventKind, Labels, LogLevel } from '../domain/index.js';
import {
  DEFAULT_STALE_AFTER_MS,
  labelsMatch,
  type EventQuery,
  type LatestQuery,
  type LatestSample,
  type RuleEvent,
  type RuleView,
  type RuleViewSource,
  type SeriesData,
  type SeriesQuery,
  type TargetInfo,
} from './rule-view.js';

export interface StoreRuleViewOptions {
  targets: readonly TargetInfo[];
  staleAfterMs?: number;
  /** Newest events kept per query; older ones are dropped and counted. */
  maxEventsPerQuery?: number;
  /** Decoded events kept between evaluations. */
  maxCachedEvents?: number;
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
}

interface PointRow {
  ts_ms: number;
  value: number | null;
}

const MAX_EXAMPLES = 5;
/** Whole rows fetched per query for events missing from the cache (SQLite's parameter limit is far above). */
const FETCH_CHUNK = 500;
const EVENT_COLUMNS = 'id, target, ts_ms, kind, level, sqlstate, pid, database, user_name, message, details, source_file, source_offset';

export class StoreRuleViewSource implements RuleViewSource {
  private readonly staleAfterMs: number;
  private readonly maxEvents: number;
  private readonly statements = new Map<string, Database.Statement<unknown[]>>();
  private readonly counters: StoreRuleViewStats = { badRows: 0, truncatedQueries: 0, examples: [] };
  private readonly decoded = new Map<number, RuleEvent>();
  private readonly maxCached: number;

  constructor(
    private readonly db: Db,
    private readonly options: StoreRuleViewOptions,
  ) {
    this.staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    this.maxEvents = options.maxEventsPerQuery ?? 10_000;
    this.maxCached = options.maxCachedEvents ?? 10_000;
  }

  get stats(): StoreRuleViewStats {
    return { ...this.counters, examples: [...this.counters.examples] };
  }

  at(nowMs: number): RuleView {
    const memo = new Map<string, unknown>();
    const once = <T>(key: string, compute: () => T): T => {
      if (!memo.has(key)) memo.set(key, compute());
      return memo.get(key) as T;
    };
    return {
      nowMs,
      targets: () => this.options.targets,
      events: <K extends EventKind>(kind: K, q: EventQuery) =>
        once(`e\u0000${kind}\u0000${JSON.stringify(q)}`, () => this.events(kind, q, nowMs)),
      series: (name: string, q: SeriesQuery) => once(`s\u0000${name}\u0000${JSON.stringify(q)}`, () => this.series(name, q, nowMs)),
      latest: (name: string, q: LatestQuery = {}) =>
        once(`l\u0000${name}\u0000${JSON.stringify(q)}`, () => this.latest(name, q, nowMs)),
    };
  }

  private events<K extends EventKind>(kind: K, q: EventQuery, nowMs: number): Array<RuleEvent<K>> {
    const targets = q.target === undefined ? null : typeof q.target === 'string' ? [q.target] : [...q.target];
    if (targets?.length === 0) return [];
    const sql = `SELECT id, ts_ms FROM events WHERE kind = ? AND ts_ms >= ? AND ts_ms <= ?
      ${targets ? `AND target IN (${targets.map(() => '?').join(', ')})` : ''} ${q.pid !== undefined ? 'AND pid = ?' : ''}
      ORDER BY ts_ms DESC, id DESC LIMIT ?`;
    const params: unknown[] = [kind, q.sinceMs, nowMs, ...(targets ?? []), ...(q.pid !== undefined ? [q.pid] : []), this.maxEvents];
    const rows = (this.prepare(sql).all(...params) as Array<{ id: number; ts_ms: number }>).reverse();
    if (rows.length >= this.maxEvents) this.counters.truncatedQueries++;
    const cached = (r: { id: number; ts_ms: number }): RuleEvent | undefined => {
      const e = this.decoded.get(r.id);
      return e && e.tsMs === r.ts_ms && e.kind === kind ? e : undefined;
    };
    // Looked up before fetching: caching the fetched rows may evict some of the hits.
    const hits = rows.map(cached);
    const fetched = this.fetch(rows.filter((_, i) => hits[i] === undefined).map((r) => r.id));
    return rows.map((r, i) => hits[i] ?? fetched.get(r.id)).filter((e): e is RuleEvent => e !== undefined) as Array<RuleEvent<K>>;
  }

  /** Reads, decodes and caches the events with these ids; rows that cannot be decoded are counted and left out. */
  private fetch(ids: number[]): Map<number, RuleEvent> {
    const fetched = new Map<number, RuleEvent>();
    for (let start = 0; start < ids.length; start += FETCH_CHUNK) {
      const chunk = ids.slice(start, start + FETCH_CHUNK);
      const rows = this.prepare(`SELECT ${EVENT_COLUMNS} FROM events WHERE id IN (${chunk.map(() => '?').join(', ')})`).all(...chunk) as EventRow[];
      for (const row of rows) {
        const details = this.decode(row.details, `events.id ${row.id}: details`);
        if (details === undefined || typeof details !== 'object' || details === null) continue;
        const event = {
          id: row.id, kind: row.kind, target: row.target, tsMs: row.ts_ms, pid: row.pid, database: row.database, user: row.user_name,
          level: row.level as LogLevel, sqlstate: row.sqlstate, message: row.message, details,
          source: { file: row.source_file, offset: row.source_offset, line: null },
        } as RuleEvent;
        fetched.set(event.id, event);
        this.remember(event);
      }
    }
    return fetched;
  }

  private remember(event: RuleEvent): void {
    this.decoded.delete(event.id);
    this.decoded.set(event.id, event);
    // Oldest first: windows slide forward, so the first cached are the first no longer read.
    for (const id of this.decoded.keys()) {
      if (this.decoded.size <= this.maxCached) break;
      this.decoded.delete(id);
    }
  }

  private seriesRows(name: string, target: string | undefined, wanted: Labels | undefined): Array<{ row: SeriesRow; labels: Labels }> {
    const rows = (target === undefined
      ? this.prepare('SELECT id, target, labels FROM series WHERE name = ?').all(name)
      : this.prepare('SELECT id, target, labels FROM series WHERE name = ? AND target = ?').all(name, target)) as SeriesRow[];
    const out: Array<{ row: SeriesRow; labels: Labels }> = [];
    for (const row of rows) {
      const labels = this.decodeLabels(row);
      if (labels && labelsMatch(labels, wanted)) out.push({ row, labels });
    }
    return out;
  }

  private series(name: string, q: SeriesQuery, nowMs: number): SeriesData[] {
    const points = this.prepare('SELECT ts_ms, value FROM samples WHERE series_id = ? AND ts_ms >= ? AND ts_ms <= ? ORDER BY ts_ms');
    const out: SeriesData[] = [];
    for (const { row, labels } of this.seriesRows(name, q.target, q.labels)) {
      const rows = points.all(row.id, q.sinceMs, nowMs) as PointRow[];
      if (rows.length > 0) out.push({ name, target: row.target, labels, points: rows.map((p) => ({ tsMs: p.ts_ms, value: p.value })) });
    }
    return out;
  }

  private latest(name: string, q: LatestQuery, nowMs: number): LatestSample[] {
    const last = this.prepare('SELECT ts_ms, value FROM samples WHERE series_id = ? AND ts_ms >= ? AND ts_ms <= ? ORDER BY ts_ms DESC LIMIT 1');
    const sinceMs = nowMs - (q.maxAgeMs ?? this.staleAfterMs);
    const out: LatestSample[] = [];
    for (const { row, labels } of this.seriesRows(name, q.target, q.labels)) {
      const point = last.get(row.id, sinceMs, nowMs) as PointRow | undefined;
      if (point) out.push({ name, target: row.target, labels, tsMs: point.ts_ms, value: point.value });
    }
    return out;
  }

  /** series.labels is labelsKey(): a JSON array of [key, value] pairs. */
  private decodeLabels(row: SeriesRow): Labels | null {
    const pairs = this.decode(row.labels, `series.id ${row.id}: labels`);
    if (!Array.isArray(pairs) || !pairs.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string')) {
      if (pairs !== undefined) this.bad(`series.id ${row.id}: labels are not [key, value] pairs`);
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
