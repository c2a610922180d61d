/**
 * Merges each closed minute's stored rows of the log report into one, and each closed hour's
 * minutes into an hour row beside them. Every commit of the log adds a row per target and minute
 * it read (minute-folds.ts), so a busy minute gets dozens; once it is closed (its target's rows
 * have reached 2 minutes past it, or the wall clock has) they become one row, and once its hour
 * is closed the hour row is (re)written, so a week's report reads 168 rows. A late row of a merged
 * minute is merged again at the next run and its hour rewritten; until then `pgvigil report`
 * reads that hour's minutes (report-minutes.ts), so nothing waits on this.
 *
 * Owns: when minutes are merged. Never: folding events (the commits do) or a section's logic.
 */
import type { Clock, Component } from '../../domain/index.js';
import type { Db } from '../../store/open-store.js';
import { HOUR_SPAN_MS, ReportMinutesTable } from '../../store/report-minutes.js';
import { LOG_REPORT_SECTIONS } from './index.js';
import { MINUTE_MS, mergeStates, statesByKey, type AnySection } from './minute-folds.js';
import { DEFAULT_REPORT_LIMITS, type ReportLimits } from './section.js';

export interface ReportMinutesCompactorOptions {
  sections?: readonly AnySection[];
  limits?: ReportLimits;
  intervalMs?: number;
  /** Rows this much past a minute's end close it. */
  closeAfterMs?: number;
}

interface Logger {
  error(obj: object, msg: string): void;
}

export class ReportMinutesCompactor implements Component {
  readonly name = 'report-minutes';
  readonly stats = { minutesMerged: 0, hoursWritten: 0, failures: 0 };
  private readonly table: ReportMinutesTable;
  private readonly sections: readonly AnySection[];
  private readonly limits: ReportLimits;
  private readonly closeAfterMs: number;
  private readonly intervalMs: number;
  private timer: { cancel(): void } | null = null;
  /** Rows before this id belong to merged minutes: each run reads only what came since. */
  private scanFromId = 0;

  constructor(private readonly db: Db, private readonly clock: Clock, private readonly log: Logger, options: ReportMinutesCompactorOptions = {}) {
    this.table = new ReportMinutesTable(db);
    this.sections = options.sections ?? LOG_REPORT_SECTIONS;
    this.limits = options.limits ?? DEFAULT_REPORT_LIMITS;
    this.intervalMs = options.intervalMs ?? 30_000;
    this.closeAfterMs = options.closeAfterMs ?? 2 * MINUTE_MS;
  }

  async start(): Promise<void> {
    this.timer = this.clock.setInterval(() => this.runOnce(), this.intervalMs);
  }

  /** Merges every minute with several rows: the log stopped being read before this runs. */
  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = null;
    this.runOnce(true);
  }

  runOnce(all = false): void {
    try {
      const groups = this.table.groupsSince(this.scanFromId);
      const newestByTarget = new Map<string, number>();
      for (const g of groups) newestByTarget.set(g.target, Math.max(newestByTarget.get(g.target) ?? -Infinity, g.minuteMs));
      const nowMs = this.clock.nowMs();
      const merge = (texts: string[]) => JSON.stringify(statesByKey(this.sections, mergeStates(texts, this.sections, this.limits).states));
      const hours = new Map<string, { target: string; hourMs: number }>();
      let nextScan = Infinity;
      let lastId = this.scanFromId - 1;
      for (const g of groups) {
        lastId = Math.max(lastId, g.lastId);
        const closedBy = Math.max(newestByTarget.get(g.target)!, nowMs) - this.closeAfterMs;
        const hourMs = Math.floor(g.minuteMs / HOUR_SPAN_MS) * HOUR_SPAN_MS;
        const minuteClosed = all || g.minuteMs + MINUTE_MS <= closedBy;
        const hourClosed = all || hourMs + HOUR_SPAN_MS <= closedBy;
        if (minuteClosed && g.rows > 1) {
          this.table.mergeMinute(g.target, g.minuteMs, merge);
          this.stats.minutesMerged++;
        }
        if (hourClosed) hours.set(`${g.target}\u0000${hourMs}`, { target: g.target, hourMs });
        else nextScan = Math.min(nextScan, g.firstId);
      }
      for (const { target, hourMs } of hours.values()) {
        this.table.writeHour(target, hourMs, merge);
        this.stats.hoursWritten++;
      }
      this.scanFromId = nextScan === Infinity ? lastId + 1 : nextScan;
    } catch (err) {
      this.stats.failures++;
      this.log.error({ err, file: this.db.name }, 'merging the log report minutes failed; will retry');
    }
  }
}
