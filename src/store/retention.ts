/**
 * Retention: deletes events and samples past the configured age, then, while the store is over
 * its size budget, the oldest remaining ones; and retires the series rows left without samples
 * (a session's series once its pid is gone for the retention period, a dropped table's). Alerts
 * and transitions are kept: they are small and are the incident record. The outbox keeps what is
 * still to be delivered; rejected notifications go at the retention age (delivered ones are
 * deleted on delivery). Deletes run in bounded transactions so a large clean-up never holds the
 * write lock for long.
 *
 * With forwarding configured (`keepUnforwarded`), age never deletes an event, a sample or a log
 * report minute the forwarder has not sent (its cursors, forward_cursors): only the size budget
 * does, and those rows are counted apart (`unforwardedDeleted`) so the operator learns the central
 * copy has a hole. A report minute goes whole or not at all: the forwarder sends a minute's rows
 * as its central row, so a minute left with only its unsent rows would replace what was sent.
 *
 * Before that, per-table samples older than the full-resolution age are thinned to one per step
 * (the latest of each step, so a counter keeps its value at the step's end): per-table series at
 * the poll interval for 14 days would never fit the size budget. Server-wide series (lag, the xmin
 * horizon, slots, databases) are few and are what an incident review charts: they keep every
 * sample for the retention age. A run thins at most MAX_THIN_SPAN_MS of data, so the first run
 * over a store that was never thinned (an upgrade) does not hold the daemon's thread for minutes. Rules read at most an hour back at full
 * density (autovacuum-abnormal's growth window; the schema keeps the age above it); further back
 * they read counters (autovacuum_count over a day), which the latest sample per step keeps.
 */
import type { Db } from './open-store.js';
import type { Clock, Component } from '../domain/index.js';
import { ReportMinutesTable } from './report-minutes.js';

export interface RetentionPolicy {
  maxAgeMs: number;
  maxSizeBytes: number;
  /** Samples older than this are thinned to one per `thinnedStepMs`; null (the default) keeps every sample. */
  fullResolutionMs?: number | null;
  thinnedStepMs?: number;
  /** Forwarding is configured: rows not forwarded yet outlive the age limit, not the size budget. */
  keepUnforwarded?: boolean;
}

/** Rows deleted before the forwarder sent them (only ever over the size budget). */
export interface UnforwardedDeleted {
  events: number;
  samples: number;
  /** Minute rows of the log report (the metric's `table` label, hence snake_case). */
  report_minutes: number;
}

export interface RetentionResult {
  eventsDeleted: number;
  samplesDeleted: number;
  seriesRetired: number;
  /** Of samplesDeleted, those removed by thinning. */
  samplesThinned: number;
  /** Rows of the log report per minute (report_minutes), which go with the events of their minutes. */
  reportMinutesDeleted: number;
  /** Rejected notifications past the age limit, removed from the outbox. */
  outboxPruned: number;
  unforwardedDeleted: UnforwardedDeleted;
}

/** Where forwarding stands: events up to this id, samples and report minutes before these times were sent. */
interface ForwardedUpTo {
  eventId: number;
  samplesBeforeMs: number;
  /** The report minutes' cursor (a row id), and the start of the oldest minute with a row after it. */
  reportMinuteId: number;
  reportMinutesBeforeMs: number;
}

/** Thinning done up to (exclusive): each step is thinned once, not re-read at every run. */
export interface ThinningMark {
  thinnedBeforeMs: number | null;
}

/** Rows one transaction deletes at most (a series' old samples are never split across two). */
const CHUNK_ROWS = 50_000;
/** Series whose old samples one transaction deletes at most. */
const CHUNK_SERIES = 2_000;
const DEFAULT_THINNED_STEP_MS = 1_800_000;
/** The least share of the stored span one over-budget step deletes, so a run ends in a few dozen steps. */
const MIN_EXCESS_SHARE = 0.02;
/** Data one run thins at most: 6 h of per-table samples at the default caps is about 2 s of work. */
const MAX_THIN_SPAN_MS = 6 * 3_600_000;

export function applyRetention(db: Db, policy: RetentionPolicy, nowMs: number, mark: ThinningMark = { thinnedBeforeMs: null }): RetentionResult {
  const cutoffMs = nowMs - policy.maxAgeMs;
  const forwarded = policy.keepUnforwarded === true ? forwardedUpTo(db) : null;
  // Thinning stops where forwarding stands: the forwarder sends a value per (shorter) forward step.
  const samplesThinned = policy.fullResolutionMs === undefined || policy.fullResolutionMs === null ? 0
    : thin(db, policy.thinnedStepMs ?? DEFAULT_THINNED_STEP_MS, Math.max(cutoffMs, mark.thinnedBeforeMs ?? oldestPerTableSampleMs(db) ?? nowMs),
      Math.min(nowMs - policy.fullResolutionMs, forwarded?.samplesBeforeMs ?? Infinity), mark);
  const unforwardedDeleted: UnforwardedDeleted = { events: 0, samples: 0, report_minutes: 0 };
  const result = { ...deleteOlderThan(db, cutoffMs, forwarded), samplesThinned, outboxPruned: pruneOutbox(db, cutoffMs), unforwardedDeleted };
  result.samplesDeleted += samplesThinned;
  const add = (step: Omit<RetentionResult, 'samplesThinned' | 'outboxPruned' | 'unforwardedDeleted'>) => {
    result.eventsDeleted += step.eventsDeleted;
    result.samplesDeleted += step.samplesDeleted;
    result.seriesRetired += step.seriesRetired;
    result.reportMinutesDeleted += step.reportMinutesDeleted;
    return step.eventsDeleted + step.samplesDeleted + step.seriesRetired + step.reportMinutesDeleted;
  };
  // Over budget: move the cutoff forward from the oldest data until it fits, by about the share of
  // the span the excess is (a store that fills its budget in hours loses its oldest minutes, not
  // everything older than a day), at least a second and at most a day a time. Forwarded rows go
  // first; what the budget still needs is taken from the unforwarded ones, and counted.
  for (let guard = 0; guard < 1000; guard++) {
    const used = usedBytes(db);
    if (used <= policy.maxSizeBytes) break;
    const oldest = oldestMs(db);
    if (oldest === null) break;
    const excessShare = Math.max((used - policy.maxSizeBytes) / used, MIN_EXCESS_SHARE);
    const stepMs = Math.min(Math.max((nowMs - oldest) * excessShare, 1_000), 86_400_000);
    const stepCutoffMs = Math.min(oldest + stepMs, nowMs);
    let deleted = add(deleteOlderThan(db, stepCutoffMs, forwarded));
    if (forwarded !== null) {
      unforwardedDeleted.report_minutes += new ReportMinutesTable(db).countMinuteRowsAfter(forwarded.reportMinuteId, stepCutoffMs);
      const unforwarded = deleteOlderThan(db, stepCutoffMs, null);
      unforwardedDeleted.events += unforwarded.eventsDeleted;
      unforwardedDeleted.samples += unforwarded.samplesDeleted;
      deleted += add(unforwarded);
    }
    if (deleted === 0) break;
  }
  return result;
}

/** The forward cursors; a stream without one (forwarding not started yet) has sent nothing. */
function forwardedUpTo(db: Db): ForwardedUpTo {
  const cursor = db.prepare('SELECT position FROM forward_cursors WHERE stream = ?').pluck();
  const reportMinuteId = (cursor.get('report_minutes') as number | undefined) ?? 0;
  return {
    eventId: (cursor.get('events') as number | undefined) ?? 0,
    samplesBeforeMs: (cursor.get('samples') as number | undefined) ?? 0,
    reportMinuteId,
    reportMinutesBeforeMs: new ReportMinutesTable(db).oldestMinuteAfter(reportMinuteId) ?? Number.MAX_SAFE_INTEGER,
  };
}

/** Rejected notifications are kept for review as long as the data they were about, no longer. */
function pruneOutbox(db: Db, cutoffMs: number): number {
  return db.prepare("DELETE FROM outbox WHERE state = 'rejected' AND created_ms < ?").run(cutoffMs).changes;
}

/**
 * Keeps the latest sample of each whole step in [fromMs, beforeMs) per series. Steps are aligned
 * on the epoch and only whole ones are thinned, so a run never thins a step twice or half of one;
 * `mark` remembers where this run stopped (a restart reads the retained range once more).
 */
function thin(db: Db, stepMs: number, fromMs: number, beforeMs: number, mark: ThinningMark): number {
  const from = Math.floor(fromMs / stepMs) * stepMs;
  const before = Math.min(Math.floor(beforeMs / stepMs) * stepMs, from + Math.ceil(MAX_THIN_SPAN_MS / stepMs) * stepMs);
  if (before <= from) return 0;
  const thinSeries = db.prepare(`DELETE FROM samples WHERE series_id = @id AND ts_ms >= @from AND ts_ms < @before AND ts_ms NOT IN (
    SELECT max(ts_ms) FROM samples WHERE series_id = @id AND ts_ms >= @from AND ts_ms < @before GROUP BY ts_ms - ts_ms % @stepMs)`);
  const thinned = eachSeriesChunk(db, PER_TABLE_SERIES, (id) => thinSeries.run({ id, from, before, stepMs }).changes);
  mark.thinnedBeforeMs = before;
  return thinned;
}

/** Series with a table among their labels (labelsKey's canonical form: `[["datname","app"],["relname","orders"]]`). */
const PER_TABLE_SERIES = `labels LIKE '%["relname",%'`;

/** Runs `perSeries` over the series `where` selects, a chunk of series (or CHUNK_ROWS rows) per transaction. */
function eachSeriesChunk(db: Db, where: string, perSeries: (id: number) => number): number {
  const nextSeries = db.prepare(`SELECT id FROM series WHERE id > ? AND ${where} ORDER BY id LIMIT ${CHUNK_SERIES}`).pluck();
  let total = 0;
  let afterId = 0;
  const chunk = db.transaction(() => {
    const ids = nextSeries.all(afterId) as number[];
    let rows = 0;
    for (const id of ids) {
      afterId = id;
      rows += perSeries(id);
      if (rows >= CHUNK_ROWS) break;
    }
    total += rows;
    return ids.length > 0;
  });
  for (let more = true; more;) more = chunk();
  return total;
}

/** Deletes what is older than the cutoff; with `forwarded`, only what forwarding has sent. */
function deleteOlderThan(db: Db, cutoffMs: number, forwarded: ForwardedUpTo | null): Omit<RetentionResult, 'samplesThinned' | 'outboxPruned' | 'unforwardedDeleted'> {
  // The newest event stays, old or not: SQLite gives a new row max(id) + 1, so deleting every
  // event would hand out ids again that forwarding's cursor has already passed.
  const events = db.prepare(`DELETE FROM events WHERE id IN (
    SELECT id FROM events WHERE ts_ms < ? AND id <= ? AND id < (SELECT max(id) FROM events) LIMIT ${CHUNK_ROWS})`);
  let eventsDeleted = 0;
  for (let deleted = CHUNK_ROWS; deleted === CHUNK_ROWS;) {
    deleted = events.run(cutoffMs, forwarded?.eventId ?? Number.MAX_SAFE_INTEGER).changes;
    eventsDeleted += deleted;
  }
  // The log report's minutes go with the events they were folded from; with forwarding, whole
  // minutes up to the oldest one not sent yet.
  const minutes = new ReportMinutesTable(db);
  const minutesCutoffMs = forwarded === null ? cutoffMs : Math.min(cutoffMs, forwarded.reportMinutesBeforeMs);
  let reportMinutesDeleted = 0;
  for (let deleted = CHUNK_ROWS; deleted === CHUNK_ROWS;) {
    deleted = minutes.deleteBefore(minutesCutoffMs, CHUNK_ROWS);
    reportMinutesDeleted += deleted;
  }
  return { eventsDeleted, reportMinutesDeleted, ...deleteSamplesOlderThan(db, forwarded === null ? cutoffMs : Math.min(cutoffMs, forwarded.samplesBeforeMs)) };
}

/**
 * Series by series, so each delete is a range of the samples primary key (series_id, ts_ms)
 * rather than a scan of the whole table for old rows. A series whose newest sample (seen_ms) is
 * before the cutoff may be left without samples: its row goes too, in the same transaction that
 * bumps series_retirement so the writer forgets the ids it cached.
 */
function deleteSamplesOlderThan(db: Db, cutoffMs: number): { samplesDeleted: number; seriesRetired: number } {
  const nextSeries = db.prepare(`SELECT id, seen_ms AS seenMs FROM series WHERE id > ? ORDER BY id LIMIT ${CHUNK_SERIES}`);
  const deleteSamples = db.prepare('DELETE FROM samples WHERE series_id = ? AND ts_ms < ?');
  const retireIfEmpty = db.prepare('DELETE FROM series WHERE id = ? AND NOT EXISTS (SELECT 1 FROM samples WHERE series_id = ?)');
  const bumpGeneration = db.prepare('UPDATE series_retirement SET generation = generation + 1');
  let samplesDeleted = 0;
  let seriesRetired = 0;
  let afterId = 0;
  const chunk = db.transaction(() => {
    let rows = 0;
    let retired = 0;
    const series = nextSeries.all(afterId) as Array<{ id: number; seenMs: number | null }>;
    for (const { id, seenMs } of series) {
      afterId = id;
      rows += deleteSamples.run(id, cutoffMs).changes;
      if ((seenMs === null || seenMs < cutoffMs) && retireIfEmpty.run(id, id).changes > 0) retired++;
      if (rows >= CHUNK_ROWS) break;
    }
    if (retired > 0) bumpGeneration.run();
    samplesDeleted += rows;
    seriesRetired += retired;
    return series.length > 0;
  });
  for (let more = true; more;) more = chunk();
  return { samplesDeleted, seriesRetired };
}

/** Bytes in use (pages not on the free list), so deletes count before a VACUUM shrinks the file. */
export function usedBytes(db: Db): number {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  return (pages - free) * pageSize;
}

/** Where thinning starts when no run has thinned yet: a seek per per-table series. */
function oldestPerTableSampleMs(db: Db): number | null {
  return db.prepare(`SELECT min((SELECT min(ts_ms) FROM samples WHERE series_id = series.id)) FROM series WHERE ${PER_TABLE_SERIES}`).pluck().get() as number | null;
}

/** The oldest event or sample; per series a seek on the samples key, not a scan of the table. */
function oldestMs(db: Db): number | null {
  const row = db.prepare(`SELECT min(ts) AS ts FROM (
    SELECT min(ts_ms) AS ts FROM events
    UNION ALL SELECT (SELECT min(ts_ms) FROM samples WHERE series_id = series.id) FROM series)`).get() as { ts: number | null };
  return row.ts;
}

export class RetentionJob implements Component {
  readonly name = 'retention';
  /** Runs that failed (a locked, full or broken store): retried at the next interval, and counted. */
  readonly stats = { failures: 0, rowsDeleted: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 } as UnforwardedDeleted };
  private timer: { cancel(): void } | null = null;
  private readonly thinning: ThinningMark = { thinnedBeforeMs: null };

  constructor(
    private readonly db: Db,
    private readonly policy: RetentionPolicy,
    private readonly clock: Clock,
    private readonly log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void },
    private readonly intervalMs = 600_000,
  ) {}

  async start(): Promise<void> {
    this.runOnce();
    this.timer = this.clock.setInterval(() => this.runOnce(), this.intervalMs);
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
  }

  runOnce(): void {
    try {
      const result = applyRetention(this.db, this.policy, this.clock.nowMs(), this.thinning);
      this.stats.rowsDeleted += result.eventsDeleted + result.samplesDeleted + result.reportMinutesDeleted;
      const unforwarded = result.unforwardedDeleted;
      this.stats.unforwardedDeleted.events += unforwarded.events;
      this.stats.unforwardedDeleted.samples += unforwarded.samples;
      this.stats.unforwardedDeleted.report_minutes += unforwarded.report_minutes;
      if (result.eventsDeleted + result.samplesDeleted + result.seriesRetired + result.reportMinutesDeleted + result.outboxPruned > 0) this.log.info({ ...result }, 'retention removed old data');
      if (unforwarded.events + unforwarded.samples + unforwarded.report_minutes > 0) {
        this.log.warn({ ...result.unforwardedDeleted, maxSizeBytes: this.policy.maxSizeBytes }, 'retention deleted rows not forwarded yet to keep the store within its size budget: the central database will miss them');
      }
    } catch (err) {
      this.stats.failures++;
      this.log.error({ err, file: this.db.name }, 'retention failed; will retry');
    }
  }
}
