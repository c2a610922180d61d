/**
 * Keeps the log report per minute in the store: folds the events each store commit carries
 * (minute-folds.ts) and writes the minutes that close to report_minutes, with the cursor that
 * says which events are in rows, in one transaction. A start folds again the events stored after
 * the cursor that no row holds yet (those of minutes open when pgvigil stopped or was killed),
 * so each event is in the report once. A failed write keeps its minutes and retries on the next
 * tick; the cursor never passes them.
 *
 * Owns: when minutes close and are written. Never: a section's logic, the events themselves.
 */
import type { Clock, Component } from '../../domain/index.js';
import type { Db } from '../../store/open-store.js';
import { StoreQueries } from '../../store/queries.js';
import { ReportMinutesTable } from '../../store/report-minutes.js';
import type { FlushResult } from '../../store/store-writer.js';
import { LOG_REPORT_SECTIONS } from './index.js';
import { DEFAULT_MINUTE_FOLD_OPTIONS, MinuteFolds, type ClosedMinute, type MinuteFoldOptions } from './minute-folds.js';
import { DEFAULT_REPORT_LIMITS, type ReportLimits, type ReportSection } from './section.js';

export interface ReportMinutesWriterOptions {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sections?: ReadonlyArray<ReportSection<any, unknown>>;
  limits?: ReportLimits;
  fold?: MinuteFoldOptions;
  /** How often quiet minutes are looked for and failed writes retried. */
  tickMs?: number;
  /** A minute that received nothing for this long closes. */
  idleMs?: number;
}

interface Logger {
  error(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class ReportMinutesWriter implements Component {
  readonly name = 'report-minutes';
  readonly stats = { rowsWritten: 0, writeFailures: 0, eventsRefolded: 0 };
  private readonly table: ReportMinutesTable;
  private readonly folds: MinuteFolds;
  /** Closed minutes whose write failed, oldest first. */
  private unwritten: ClosedMinute[] = [];
  private timer: { cancel(): void } | null = null;
  private listening = false;
  /** Events up to this id are folded (or were in rows when we started): a commit replayed to us is not folded twice. */
  private foldedThroughId = 0;
  private readonly tickMs: number;
  private readonly idleMs: number;

  constructor(
    private readonly db: Db,
    private readonly commits: { onFlush(listener: (result: FlushResult) => void): void },
    private readonly clock: Clock,
    private readonly log: Logger,
    options: ReportMinutesWriterOptions = {},
  ) {
    this.table = new ReportMinutesTable(db);
    this.folds = new MinuteFolds(options.sections ?? LOG_REPORT_SECTIONS, options.limits ?? DEFAULT_REPORT_LIMITS, options.fold ?? DEFAULT_MINUTE_FOLD_OPTIONS);
    this.tickMs = options.tickMs ?? 30_000;
    this.idleMs = options.idleMs ?? 120_000;
  }

  async start(): Promise<void> {
    this.refoldAfterCursor();
    if (!this.listening) {
      this.commits.onFlush((result) => this.fold(result));
      this.listening = true;
    }
    this.timer = this.clock.setInterval(() => this.persist(this.folds.takeClosed(this.clock.monotonicMs() - this.idleMs)), this.tickMs);
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = null;
    this.persist(this.folds.takeAll());
  }

  private fold(result: FlushResult): void {
    const arrivalMs = this.clock.monotonicMs();
    for (const { id, event } of result.events) {
      if (id <= this.foldedThroughId) continue;
      this.folds.add(id, event, arrivalMs);
      this.foldedThroughId = id;
    }
    if (result.events.length > 0) this.persist(this.folds.takeClosed(arrivalMs - this.idleMs));
  }

  /** The events after the cursor, each folded unless a row of its target and minute already holds it. */
  private refoldAfterCursor(): void {
    const throughIds = new Map<string, number>();
    const arrivalMs = this.clock.monotonicMs();
    for (const { id, event } of new StoreQueries(this.db).eventsAfterId(this.table.cursor())) {
      const minuteMs = Math.floor(event.tsMs / 60_000) * 60_000;
      const key = `${event.target}\u0000${minuteMs}`;
      let throughId = throughIds.get(key);
      if (throughId === undefined) throughIds.set(key, (throughId = this.table.throughId(event.target, minuteMs)));
      if (id <= throughId) this.folds.skip(id);
      else {
        this.folds.add(id, event, arrivalMs);
        this.stats.eventsRefolded++;
      }
      this.foldedThroughId = id;
    }
  }

  /** Writes `closed` and any minutes a failed write left, with the cursor; keeps them on failure. */
  private persist(closed: ClosedMinute[]): void {
    if (closed.length === 0 && this.unwritten.length === 0) return;
    const rows = [...this.unwritten, ...closed];
    try {
      // The rows written here are no longer open: the folds' cursor already counts them as stored.
      this.table.write(rows, this.folds.cursor());
    } catch (err) {
      this.stats.writeFailures++;
      if (this.unwritten.length === 0) this.log.error({ err, minutes: rows.length, file: this.db.name }, 'writing the log report minutes failed; keeping them and retrying');
      this.unwritten = rows;
      return;
    }
    if (this.unwritten.length > 0) this.log.info({ minutes: rows.length }, 'log report minutes written again');
    this.unwritten = [];
    this.stats.rowsWritten += rows.length;
  }
}
