/**
 * What the sidecar has not forwarded yet, read from its SQLite store oldest first, and the
 * durable cursors that move only once the central database has committed a batch.
 *
 * Streams: events and alert transitions by id (append-only); alerts through the queue of changed
 * alert ids (an alert row is updated in place); samples by step, the latest value of each series
 * in each step, once the step is `graceMs` in the past (samples arrive a poll late at most).
 * A crash between the central commit and `commit()` sends the batch again: the central keys make
 * that a no-op.
 */
import type { AlertRow } from '../store/alert-store.js';
import type { Db } from '../store/open-store.js';
import type { EventRow } from '../store/queries.js';
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

/** A stored event with the language it was read in (store migration 4; NULL: English). */
export type ForwardEventRow = EventRow & { language: string | null };

export type { AlertRow };

export interface ForwardBatch {
  events: ForwardEventRow[];
  transitions: TransitionRow[];
  alerts: AlertRow[];
  series: SeriesRow[];
  samples: StepSample[];
  /** Cursor positions once this batch is committed centrally; null: that stream did not move. */
  next: { eventId: number | null; transitionId: number | null; alertChangeId: number | null; samplesUntilMs: number | null };
}

export type ForwardStream = 'events' | 'alert_transitions' | 'alerts' | 'samples';

export interface ForwardQueueOptions {
  /** Rows per stream per batch. */
  batchRows: number;
  /** Downsampling step of samples. */
  stepMs: number;
  /** How long after a step ends its samples are taken as complete. */
  graceMs: number;
}

/** Windows of samples skipped per next() when they hold none. */
const MAX_EMPTY_WINDOWS = 100;

export function batchRows(batch: ForwardBatch): number {
  return batch.events.length + batch.transitions.length + batch.alerts.length + batch.samples.length;
}

export class ForwardQueue {
  readonly storeId: string;
  private readonly sql;

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
      alertChanges: db.prepare('SELECT id, alert_id FROM forward_alert_changes ORDER BY id LIMIT ?'),
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
  }

  /**
   * Creates the cursors the first time this store forwards: events and transitions from the
   * start, every existing alert queued, samples from the oldest stored step. Setting the alerts
   * cursor turns on the triggers that queue alert changes (store migration 4).
   */
  init(nowMs: number): void {
    this.db.transaction(() => {
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
    const limit = this.options.batchRows;
    const events = this.sql.events.all(this.position('events'), limit) as ForwardEventRow[];
    const transitions = this.sql.transitions.all(this.position('alert_transitions'), limit) as TransitionRow[];
    const changes = this.sql.alertChanges.all(limit) as Array<{ id: number; alert_id: number }>;
    // An alert changed twice in the batch is sent once, as it is now.
    const alertIds = [...new Set(changes.map((c) => c.alert_id))];
    const alerts = alertIds.flatMap((id) => (this.sql.alert.get(id) as AlertRow | undefined) ?? []);
    const { series, samples, untilMs } = this.nextSamples(nowMs);
    return {
      events, transitions, alerts, series, samples,
      next: {
        eventId: events.at(-1)?.id ?? null,
        transitionId: transitions.at(-1)?.id ?? null,
        alertChangeId: changes.at(-1)?.id ?? null,
        samplesUntilMs: untilMs,
      },
    };
  }

  /** Moves the cursors past a batch the central database committed. */
  commit(batch: ForwardBatch, nowMs: number): void {
    const { eventId, transitionId, alertChangeId, samplesUntilMs } = batch.next;
    this.db.transaction(() => {
      if (eventId !== null) this.sql.setCursor.run('events', eventId, nowMs);
      if (transitionId !== null) this.sql.setCursor.run('alert_transitions', transitionId, nowMs);
      if (alertChangeId !== null) this.sql.doneAlertChanges.run(alertChangeId);
      if (samplesUntilMs !== null) this.sql.setCursor.run('samples', samplesUntilMs, nowMs);
    })();
  }

  /** Rows waiting per stream; samples as steps of active series not yet forwarded. */
  pending(nowMs: number): Record<ForwardStream, number> {
    const samplesFrom = this.position('samples');
    const steps = Math.max(0, (this.completeUntil(nowMs) - samplesFrom) / this.options.stepMs);
    return {
      events: this.sql.pendingEvents.get(this.position('events')) as number,
      alert_transitions: this.sql.pendingTransitions.get(this.position('alert_transitions')) as number,
      alerts: this.sql.pendingAlerts.get() as number,
      samples: steps === 0 ? 0 : steps * this.activeSeries(samplesFrom).length,
    };
  }

  private nextSamples(nowMs: number): { series: SeriesRow[]; samples: StepSample[]; untilMs: number | null } {
    const completeMs = this.completeUntil(nowMs);
    // A window without samples (a gap while pgvigil was stopped) has nothing to send: its cursor
    // moves at once, so a long gap does not take one batch per window.
    for (let window = 0; window < MAX_EMPTY_WINDOWS; window++) {
      const fromMs = this.position('samples');
      if (completeMs <= fromMs) return { series: [], samples: [], untilMs: null };
      const read = this.samplesFrom(fromMs, completeMs);
      if (read.samples.length > 0) return read;
      this.sql.setCursor.run('samples', read.untilMs, nowMs);
    }
    return { series: [], samples: [], untilMs: null };
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
