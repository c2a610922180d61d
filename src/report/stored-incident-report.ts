/**
 * The incident report of a past window as a store holds it: the report asks the store's reads
 * for the window (with the series its charts draw) and composes what comes back with
 * buildIncidentReport. One composition for `pgvigil report`, GET /api/report and the central
 * store's report, so all say the same. Never: SQL or a store's ids (src/store/, src/central/).
 */
import type { StoreQueries } from '../store/queries.js';
import { TooManySeriesError, type Awaitable, type ReportWindow, type StoredWindow, type WindowQuery } from '../store/store-reads.js';
import { buildIncidentReport, type IncidentReport } from './incident-report.js';
import { LOG_REPORT_SECTIONS } from './log-report/index.js';
import { DEFAULT_REPORT_LIMITS } from './log-report/section.js';
import { mergeStoredMinutes } from './log-report/stored-log-report.js';
import { CHART_METRICS } from './report-charts.js';

/** Points per chart line: finer than a printed chart shows. */
const POINTS_PER_LINE = 400;

/** What the report asks of a store for `window`. */
function windowQuery({ fromMs, toMs, target }: ReportWindow): WindowQuery {
  return { fromMs, toMs, target, seriesNames: Object.values(CHART_METRICS), stepMs: Math.max(1_000, Math.ceil((toMs - fromMs) / POINTS_PER_LINE)) };
}

/** Pure: the store's answer to windowQuery(window) in, the report out. */
function incidentReportOf({ fromMs, toMs, target }: ReportWindow, stored: StoredWindow): IncidentReport {
  return buildIncidentReport({
    fromMs, toMs, target, alerts: stored.alerts, transitions: stored.transitions, events: stored.events,
    logReport: mergeStoredMinutes(stored.reportMinutes, LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS),
    sampled: (name) => {
      try {
        return stored.series(name);
      } catch (err) {
        // A long window of a busy server: the chart says so, the rest of the report stands.
        if (err instanceof TooManySeriesError) return { unread: `not drawn: ${err.message}` };
        throw err;
      }
    },
  });
}

/** From a sidecar's store file, at once (`pgvigil report`). */
export function storedIncidentReport(queries: Pick<StoreQueries, 'reportWindow'>, window: ReportWindow): IncidentReport {
  return incidentReportOf(window, queries.reportWindow(windowQuery(window)));
}

/**
 * From reads that may answer later (StoreReads.reportWindow, the central store's window): GET
 * /api/report and `pgvigil report --store postgres://...`, which says how many events the
 * store left out.
 */
export async function readIncidentReport(read: (query: WindowQuery) => Awaitable<StoredWindow>, window: ReportWindow): Promise<{ report: IncidentReport; eventsLeftOut: number }> {
  const stored = await read(windowQuery(window));
  return { report: incidentReportOf(window, stored), eventsLeftOut: stored.eventsLeftOut };
}
