/**
 * An in-memory RuleView for rule tests: events and series held in arrays, no database. Same
 * semantics as store-rule-view.ts (the window ends at `nowMs`, latest() returns fresh series only),
 * so a table-driven test can step one data set through time with `view.at(t)`.
 */
import type { EventDetailsByKind, EventKind, LogLevel } from '../domain/index.js';
import {
  countInBuckets,
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
  valueOutside,
} from './rule-view.js';

export interface MemoryData {
  events?: RuleEvent[];
  series?: SeriesData[];
  targets?: TargetInfo[];
  staleAfterMs?: number;
}

export class MemoryRuleView implements RuleViewSource {
  private readonly events: RuleEvent[];
  private readonly series: SeriesData[];
  private readonly targetList: TargetInfo[];
  private readonly staleAfterMs: number;

  constructor(data: MemoryData = {}) {
    this.events = [...(data.events ?? [])].sort((a, b) => a.tsMs - b.tsMs || a.id - b.id);
    this.series = data.series ?? [];
    this.targetList = data.targets ?? targetsOf(this.events, this.series);
    this.staleAfterMs = data.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  }

  at(nowMs: number): RuleView {
    const { events, series, targetList, staleAfterMs } = this;
    const targetOk = (t: string, wanted: EventQuery['target']): boolean =>
      wanted === undefined || (typeof wanted === 'string' ? t === wanted : wanted.includes(t));
    const window = (q: SeriesQuery): SeriesData[] =>
      series
        .filter((s) => (q.target === undefined || s.target === q.target) && labelsMatch(s.labels, q.labels))
        .map((s) => ({ ...s, points: s.points.filter((p) => p.tsMs >= q.sinceMs && p.tsMs <= nowMs) }))
        .filter((s) => s.points.length > 0);
    return {
      nowMs,
      targets: () => targetList,
      events<K extends EventKind>(kind: K, q: EventQuery): Array<RuleEvent<K>> {
        return events.filter(
          (e) => e.kind === kind && e.tsMs >= q.sinceMs && e.tsMs <= nowMs && targetOk(e.target, q.target) &&
            (q.pid === undefined || e.pid === q.pid),
        ) as Array<RuleEvent<K>>;
      },
      eventCounts(kinds, q) {
        return countInBuckets(events.filter((e) => kinds.includes(e.kind) && e.target === q.target), q, nowMs);
      },
      series: (name, q) => window({ ...q }).filter((s) => s.name === name),
      latest(name: string, q: LatestQuery = {}): LatestSample[] {
        const sinceMs = nowMs - (q.maxAgeMs ?? staleAfterMs);
        return window({ sinceMs, ...(q.target !== undefined && { target: q.target }), ...(q.labels && { labels: q.labels }) })
          .filter((s) => s.name === name)
          .map((s) => {
            const last = s.points[s.points.length - 1]!;
            return { name, target: s.target, labels: s.labels, tsMs: last.tsMs, value: last.value };
          })
          .filter((s) => !valueOutside(s.value, q.unlessValue));
      },
    };
  }
}

function targetsOf(events: RuleEvent[], series: SeriesData[]): TargetInfo[] {
  const names = new Set([...events.map((e) => e.target), ...series.map((s) => s.target)]);
  return [...names].map((name) => ({ name, cluster: null }));
}

export interface EventOptions {
  tsMs: number;
  target?: string;
  pid?: number | null;
  database?: string | null;
  user?: string | null;
  level?: LogLevel;
  sqlstate?: string | null;
  message?: string;
  id?: number;
}

let nextEventId = 1;

/** A stored event for tests; ids count up unless given. */
export function eventOf<K extends EventKind>(kind: K, details: EventDetailsByKind[K], o: EventOptions): RuleEvent<K> {
  return {
    id: o.id ?? nextEventId++,
    kind,
    target: o.target ?? 'primary',
    tsMs: o.tsMs,
    pid: o.pid ?? null,
    database: o.database ?? null,
    user: o.user ?? null,
    level: o.level ?? 'LOG',
    sqlstate: o.sqlstate ?? null,
    message: o.message ?? kind,
    details,
    source: { file: 'test.log', offset: 0, line: null },
  } as RuleEvent<K>;
}
