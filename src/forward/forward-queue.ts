/**
 * What the sidecar has not forwarded yet, read from its SQLite store oldest first, and the
 * durable cursors that move only once the central database has committed a batch.
 *
 * Streams: events and alert transitions by id (append-only); alerts through the queue of changed
 * alert ids (an alert row is updated in place); samples by step, the latest value of each series
 * in each step, once the step is `graceMs` in the past (samples arrive a poll late at most); the
 * log report's minutes by the ids of their stored rows (report_minutes), each minute sent whole:
 * every row it has when read, so a minute that gained a row or was merged (both give it a row
 * with a higher id) is sent again and replaces its central row, never adds to it.
 * A crash between the central commit and `commit()` sends the batch again: the central keys make
 * that a no-op.
 *
 * Pipelining: `nextAfter(batch)` reads the batch that follows one not committed yet (from where
 * that batch ends, not from the cursors), so the forwarder reads batch N+1 while the central
 * database writes N. `commit()` refuses a batch that does not start at the cursors: they move
 * batch by batch, in order, never past a batch the central database has not committed.
 */
import type { AlertRow } from '../store/alert-store.js';
import type { Db } from '../store/open-store.js';
import type { EventRow } from '../store/queries.js';
import { ReportMinutesTable } from '../store/report-minutes.js';
import { SEEN_STEP_MS } from '../store/series-identity.js';

export interface TransitionRow {
  id: number;
  alert_id: number;
  target: string;
  ts_ms: number;
  to_state: string;
}

export interface SeriesRow {
  id: number;
  target: string;
  name: string;
  labels: string;
}

/** The latest value of one series in one step, at the step's start. */
export interface StepSample {
  series_id: number;
  target: string;
  step_ms: number;
  value: number | null;
}

/** One target's minute of the log report: every stored row of it, as written. */
export interface ReportMinute {
  target: string;
  minuteMs: number;
  /** The highest store id among its rows: of two sends of a minute, the higher is the newer. */
  throughId: number;
  /** Each row's states (JSON, section key to state), oldest first. */
  states: string[];
}

/** A stored event with the language it was read in (store migration 4; NULL: English). */
export type ForwardEventRow = EventRow & { language: string | null };

export type { AlertRow };

/** Where each stream stands: at the durable cursors, or where a batch ends. */
export interface ForwardPositions {
  eventId: number;
  transitionId: number;
  /** The last forward_alert_changes id in or before the batch; 0 before any was read. */
  alertChangeId: number;
  /** The start of the first sample step not in or before the batch. */
  samplesFromMs: number;
  /** The last report_minutes row id read. */
  reportMinuteId: number;
}

export interface ForwardBatch {
  events: ForwardEventRow[];
  transitions: TransitionRow[];
  alerts: AlertRow[];
  series: SeriesRow[];
  samples: StepSample[];
  reportMinutes: ReportMinute[];
  /** Where the batch starts, and where the cursors stand once it is committed centrally. */
  from: ForwardPositions;
  to: ForwardPositions;
}

export type ForwardStream = 'events' | 'alert_transitions' | 'alerts' | 'samples' | 'report_minutes';

export interface ForwardQueueOptions {
  /** Rows per stream per batch. */
  batchRows: number;
  /** Downsampling step of samples. */
  stepMs: number;
  /** How long after a step ends its samples are taken as complete. */
  graceMs: number;
}

/** Windows of samples skipped per batch when they hold none. */
const MAX_EMPTY_WINDOWS = 100;
/**
 * Events read per statement: nextAfter() gives the event loop a turn between them, so the COPY
 * of the batch in flight keeps flowing while the next one is read (an event is ~700 bytes).
 */
const EVENT_SLICE_ROWS = 500;

export function batchRows(batch: ForwardBatch): number {
  return batch.events.length + batch.transitions.length + batch.alerts.length + batch.samples.length + batch.reportMinutes.length;
}

/** Whether committing the batch moves a cursor (a batch of empty sample windows moves one without rows). */
export function batchMovesCursors(batch: ForwardBatch): boolean {
  const { from, to } = batch;
  return from.eventId !== to.eventId || from.transitionId !== to.transitionId
    || from.alertChangeId !== to.alertChangeId || from.samplesFromMs !== to.samplesFromMs || from.reportMinuteId !== to.reportMinuteId;
}

export class ForwardQueue {
  readonly storeId: string;
  private readonly sql;
  private readonly reportMinutes: ReportMinutesTable;

  constructor(
    private readonly db: Db,
    private readonly options: ForwardQueueOptions,
  ) {
    this.storeId = (db.prepare('SELECT store_id FROM store_identity').pluck().get() as string | undefined) ?? '';
    if (!/^[0-9a-f]{32}$/.test(this.storeId)) throw new Error(`${db.name}: the store has no identity (store_identity); was it opened by this pgvigil?`);
    this.sql = {
      cursor: db.prepare('SELECT position FROM forward_cursors WHERE stream = ?').pluck(),
      setCursor: db.prepare(`INSERT INTO forward_cursors (stream, position, updated_ms) VALUES (?, ?, ?)
        ON CONFLICT (stream) DO UPDATE SET position = excluded.position, updated_ms = excluded.updated_ms`),
      events: db.prepare(`SELECT id, target, ts_ms, kind, level, sqlstate, pid, database, user_name, message, details, source_file, source_offset, language
        FROM events WHERE id > ? ORDER BY id LIMIT ?`),
      transitions: db.prepare(`SELECT t.id, t.alert_id, a.target, t.ts_ms, t.to_state
        FROM alert_transitions t JOIN alerts a ON a.id = t.alert_id WHERE t.id > ? ORDER BY t.id LIMIT ?`),
      alertChanges: db.prepare('SELECT id, alert_id FROM forward_alert_changes WHERE id > ? ORDER BY id LIMIT ?'),
      alertChangesUpTo: db.prepare('SELECT EXISTS (SELECT 1 FROM forward_alert_changes WHERE id <= ?)').pluck(),
      alert: db.prepare(`SELECT id, target, rule_id, dedup_key, severity, state, labels, summary, evidence, started_ms, updated_ms, resolved_ms, incident_id
        FROM alerts WHERE id = ?`),
      queueAllAlerts: db.prepare('INSERT INTO forward_alert_changes (alert_id) SELECT id FROM alerts ORDER BY id'),
      doneAlertChanges: db.prepare('DELETE FROM forward_alert_changes WHERE id <= ?'),
      oldestSampleMs: db.prepare('SELECT min((SELECT min(ts_ms) FROM samples WHERE series_id = series.id)) FROM series').pluck(),
      activeSeries: db.prepare('SELECT id, target, name, labels FROM series WHERE seen_ms > ? ORDER BY id'),
      // The step bound as INTEGER: better-sqlite3 binds a JS number as REAL, and REAL division does not truncate.
      // max() picks the row whose value is returned (SQLite's bare-column rule): the step's latest.
      stepSamples: db.prepare(`SELECT (ts_ms / CAST(@step AS INTEGER)) * CAST(@step AS INTEGER) AS step_ms, max(ts_ms) AS newest_ms, value
        FROM samples WHERE series_id = @series AND ts_ms >= @from AND ts_ms < @until GROUP BY step_ms ORDER BY step_ms`),
      // Ids above the cursor rather than count(*): counting reads every waiting row, after every
      // batch of a long backlog. Exact but for rows that retention deleted before they were sent.
      pendingEvents: db.prepare('SELECT max(0, coalesce(max(id), 0) - ?) FROM events').pluck(),
      pendingTransitions: db.prepare('SELECT max(0, coalesce(max(id), 0) - ?) FROM alert_transitions').pluck(),
      pendingAlerts: db.prepare('SELECT count(DISTINCT alert_id) FROM forward_alert_changes').pluck(),
    };
    this.reportMinutes = new ReportMinutesTable(db);
  }

  /**
   * Creates the cursors the first time this store forwards: events and transitions from the
   * start, every existing alert queued, samples from the oldest stored step. Setting the alerts
   * cursor turns on the triggers that queue alert changes (store migration 4). The log report's
   * minutes from the first stored row, also for a store that forwarded before they were.
   */
  init(nowMs: number): void {
    this.db.transaction(() => {
      if (this.sql.cursor.get('report_minutes') === undefined) this.sql.setCursor.run('report_minutes', 0, nowMs);
      if (this.sql.cursor.get('alerts') !== undefined) return;
      this.sql.setCursor.run('events', 0, nowMs);
      this.sql.setCursor.run('alert_transitions', 0, nowMs);
      this.sql.queueAllAlerts.run();
      this.sql.setCursor.run('alerts', 0, nowMs);
      const oldest = this.sql.oldestSampleMs.get() as number | null;
      this.sql.setCursor.run('samples', this.stepStart(oldest ?? nowMs), nowMs);
    })();
  }

  /** The oldest rows not forwarded yet, up to batchRows per stream. */
  next(nowMs: number): ForwardBatch {
    const reading = this.read(nowMs, this.cursors());
    for (;;) {
      const step = reading.next();
      if (step.done) return step.value;
    }
  }

  /**
   * The batch that follows `batch`, which need not be committed yet. Awaits `pause` between
   * statements, so a caller can keep other I/O going while it reads.
   */
  async nextAfter(batch: ForwardBatch, nowMs: number, pause: () => Promise<unknown>): Promise<ForwardBatch> {
    const reading = this.read(nowMs, batch.to);
    for (;;) {
      await pause();
      const step = reading.next();
      if (step.done) return step.value;
    }
  }

  /** Moves the cursors past a batch the central database committed; it must start at the cursors. */
  commit(batch: ForwardBatch, nowMs: number): void {
    const { from, to } = batch;
    this.db.transaction(() => {
      const cursors = this.cursors();
      const earlierChangesLeft = this.sql.alertChangesUpTo.get(from.alertChangeId) === 1;
      if (cursors.eventId !== from.eventId || cursors.transitionId !== from.transitionId || cursors.samplesFromMs !== from.samplesFromMs
        || cursors.reportMinuteId !== from.reportMinuteId || earlierChangesLeft) {
        throw new Error(`${this.db.name}: forward batch starts at ${JSON.stringify(from)}, not at the cursors ${JSON.stringify(cursors)}${earlierChangesLeft ? ' (alert changes of an earlier batch not committed)' : ''}: an earlier batch was not committed`);
      }
      if (to.eventId !== from.eventId) this.sql.setCursor.run('events', to.eventId, nowMs);
      if (to.transitionId !== from.transitionId) this.sql.setCursor.run('alert_transitions', to.transitionId, nowMs);
      if (to.alertChangeId !== from.alertChangeId) this.sql.doneAlertChanges.run(to.alertChangeId);
      if (to.samplesFromMs !== from.samplesFromMs) this.sql.setCursor.run('samples', to.samplesFromMs, nowMs);
      if (to.reportMinuteId !== from.reportMinuteId) this.sql.setCursor.run('report_minutes', to.reportMinuteId, nowMs);
    })();
  }

  /** Rows waiting per stream; samples as steps of active series not yet forwarded; report minutes as stored rows. */
  pending(nowMs: number): Record<ForwardStream, number> {
    const samplesFrom = this.position('samples');
    const steps = Math.max(0, (this.completeUntil(nowMs) - samplesFrom) / this.options.stepMs);
    return {
      events: this.sql.pendingEvents.get(this.position('events')) as number,
      alert_transitions: this.sql.pendingTransitions.get(this.position('alert_transitions')) as number,
      alerts: this.sql.pendingAlerts.get() as number,
      samples: steps === 0 ? 0 : steps * this.activeSeries(samplesFrom).length,
      report_minutes: this.reportMinutes.countMinuteRowsAfter(this.position('report_minutes')),
    };
  }

  /** Reads one batch from `from`; yields between statements (see nextAfter). */
  private *read(nowMs: number, from: ForwardPositions): Generator<void, ForwardBatch> {
    const limit = this.options.batchRows;
    const events: ForwardEventRow[] = [];
    for (;;) {
      const slice = this.sql.events.all(events.at(-1)?.id ?? from.eventId, Math.min(EVENT_SLICE_ROWS, limit - events.length)) as ForwardEventRow[];
      for (const event of slice) events.push(event);
      if (slice.length < EVENT_SLICE_ROWS || events.length >= limit) break;
      yield;
    }
    yield;
    const transitions = this.sql.transitions.all(from.transitionId, limit) as TransitionRow[];
    const changes = this.sql.alertChanges.all(from.alertChangeId, limit) as Array<{ id: number; alert_id: number }>;
    // An alert changed twice in the batch is sent once, as it is now. In id order: batches written
    // at once on two connections then lock the central rows of alerts in both in the same order.
    const alertIds = [...new Set(changes.map((c) => c.alert_id))].sort((a, b) => a - b);
    const alerts = alertIds.flatMap((id) => (this.sql.alert.get(id) as AlertRow | undefined) ?? []);
    yield;
    const { series, samples, untilMs } = this.nextSamples(nowMs, from.samplesFromMs);
    yield;
    const { reportMinutes, lastRowId } = this.nextReportMinutes(from.reportMinuteId);
    return {
      events, transitions, alerts, series, samples, reportMinutes, from,
      to: {
        eventId: events.at(-1)?.id ?? from.eventId,
        transitionId: transitions.at(-1)?.id ?? from.transitionId,
        alertChangeId: changes.at(-1)?.id ?? from.alertChangeId,
        samplesFromMs: untilMs,
        reportMinuteId: lastRowId,
      },
    };
  }

  /**
   * The minutes of up to batchRows report rows after `afterId`, each read whole, in (target,
   * minute) order: batches written at once on two connections then lock their central rows in
   * the same order.
   */
  private nextReportMinutes(afterId: number): { reportMinutes: ReportMinute[]; lastRowId: number } {
    const rows = this.reportMinutes.minuteRowsAfter(afterId, this.options.batchRows);
    const touched = new Map(rows.map((r) => [`${r.target}\u0000${r.minuteMs}`, { target: r.target, minuteMs: r.minuteMs }]));
    const reportMinutes = [...touched.values()]
      .sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : a.minuteMs - b.minuteMs))
      // Listed in the same synchronous step, so never null here: flatMap keeps the type honest.
      .flatMap(({ target, minuteMs }) => {
        const minute = this.reportMinutes.minute(target, minuteMs);
        return minute === null ? [] : [{ target, minuteMs, ...minute }];
      });
    return { reportMinutes, lastRowId: rows.at(-1)?.id ?? afterId };
  }

  private cursors(): ForwardPositions {
    return {
      eventId: this.position('events'),
      transitionId: this.position('alert_transitions'),
      // Committed changes are deleted: every row left is after the cursor.
      alertChangeId: 0,
      samplesFromMs: this.position('samples'),
      reportMinuteId: this.position('report_minutes'),
    };
  }

  private nextSamples(nowMs: number, fromMs: number): { series: SeriesRow[]; samples: StepSample[]; untilMs: number } {
    const completeMs = this.completeUntil(nowMs);
    // A window without samples (a gap while pgvigil was stopped) has nothing to send: the batch
    // moves past it, so a long gap does not take one batch per window.
    let untilMs = fromMs;
    for (let window = 0; window < MAX_EMPTY_WINDOWS && untilMs < completeMs; window++) {
      const read = this.samplesFrom(untilMs, completeMs);
      if (read.samples.length > 0) return read;
      untilMs = read.untilMs;
    }
    return { series: [], samples: [], untilMs };
  }

  private samplesFrom(fromMs: number, completeMs: number): { series: SeriesRow[]; samples: StepSample[]; untilMs: number } {
    const { stepMs, batchRows: limit } = this.options;
    const active = this.activeSeries(fromMs);
    // As many whole steps as keep the batch near its row limit, at least one; all when no series is active.
    const steps = active.length === 0 ? Infinity : Math.max(1, Math.floor(limit / active.length));
    const untilMs = Math.min(completeMs, fromMs + steps * stepMs);
    const series: SeriesRow[] = [];
    const samples: StepSample[] = [];
    for (const s of active) {
      const rows = this.sql.stepSamples.all({ step: stepMs, series: s.id, from: fromMs, until: untilMs }) as Array<{ step_ms: number; value: number | null }>;
      if (rows.length === 0) continue;
      series.push(s);
      for (const row of rows) samples.push({ series_id: s.id, target: s.target, step_ms: row.step_ms, value: row.value });
    }
    return { series, samples, untilMs };
  }

  /** Series that may have a sample at or after fromMs (seen_ms is coarse: see series-identity.ts). */
  private activeSeries(fromMs: number): SeriesRow[] {
    return this.sql.activeSeries.all(fromMs - SEEN_STEP_MS) as SeriesRow[];
  }

  private completeUntil(nowMs: number): number {
    return this.stepStart(nowMs - this.options.graceMs);
  }

  private stepStart(ms: number): number {
    return Math.floor(ms / this.options.stepMs) * this.options.stepMs;
  }

  private position(stream: ForwardStream): number {
    const position = this.sql.cursor.get(stream) as number | undefined;
    if (position === undefined) throw new Error(`${this.db.name}: forward cursor "${stream}" missing; init() was not called`);
    return position;
  }
}
