/**
 * The incident report of a past window as the store holds it: the alerts that were firing in
 * it, their transitions, the window's events, the charted series and the log report's stored
 * minutes, handed to buildIncidentReport. Shared by
 * `pgvigil report` and GET /api/report so both say the same.
 */
import type { StoreQueries } from '../store/queries.js';
import { TooManySeriesError } from '../store/store-reads.js';
import { buildIncidentReport, type IncidentReport } from './incident-report.js';
import { LOG_REPORT_SECTIONS } from './log-report/index.js';
import { DEFAULT_REPORT_LIMITS } from './log-report/section.js';
import { mergeStoredMinutes } from './log-report/stored-log-report.js';

/** Alerts read for one report: far more than one window's incidents. */
const MAX_ALERTS = 1_000;
/** Points per chart line: finer than a printed chart shows. */
const POINTS_PER_LINE = 400;

export interface ReportWindow {
  fromMs: number;
  toMs: number;
  /** Only this target's alerts and events; null: every target. */
  target: string | null;
}

export function storedIncidentReport(queries: StoreQueries, { fromMs, toMs, target }: ReportWindow): IncidentReport {
  const alerts = queries.alerts({ fromMs, toMs, limit: MAX_ALERTS }).filter((a) => target === null || a.target === target);
  return buildIncidentReport({
    fromMs, toMs, target, alerts,
    transitions: queries.transitions(alerts.map((a) => a.id)).filter((t) => t.tsMs >= fromMs && t.tsMs <= toMs),
    events: queries.eventsInOrder({ fromMs, toMs, ...(target !== null ? { target } : {}) }),
    // Whole minutes: the one the window starts in, up to the one it ends in.
    logReport: mergeStoredMinutes(queries.reportMinutes({ fromMs: Math.floor(fromMs / 60_000) * 60_000, toMs, ...(target !== null ? { target } : {}) }), LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS),
    sampled: (name) => {
      try {
        return queries.series({
          name, labels: {}, ...(target !== null ? { target } : {}), fromMs, toMs, stepMs: Math.max(1_000, Math.ceil((toMs - fromMs) / POINTS_PER_LINE)),
        });
      } catch (err) {
        // A long window of a busy server: the chart says so, the rest of the report stands.
        if (err instanceof TooManySeriesError) return { unread: `not drawn: ${err.message}` };
        throw err;
      }
    },
  });
}
