/**
 * `pgvigil analyze --format html`: the log report a pgBadger user opens, as one self-contained
 * HTML file in the incident report's style (report-html.ts): inline CSS and SVG charts, no script,
 * nothing from the network. Sections in pgBadger's order (overview, queries, errors, sessions,
 * checkpoints, temp files, vacuums, locks), with pgvigil's alerts after the overview. A section
 * the log cannot fill says why in one line and what to set, rather than vanishing.
 *
 * Owns: the page. Never: computing statistics (the sections in ../log-report/ do) or writing
 * files (the CLI does). Pure: analyze's JSON result in, HTML out.
 */
import type { AnalyzeReport } from '../analyze-text.js';
import type { CheckpointsResult } from '../log-report/checkpoints.js';
import type { ErrorsResult } from '../log-report/errors.js';
import type { LocksResult } from '../log-report/locks.js';
import type { MaintenanceResult } from '../log-report/maintenance.js';
import type { QueriesResult } from '../log-report/queries.js';
import type { SessionsResult } from '../log-report/sessions.js';
import type { TempFilesResult } from '../log-report/temp-files.js';
import { REPORT_STYLE } from '../report-html.js';
import { queriesOfAlertWindow } from './alert-queries.js';
import { alertsSection } from './alerts.js';
import { checkpointsSection } from './checkpoints.js';
import { errorsSection } from './errors.js';
import { absent, esc, sectionHtml, type PageSection, type TimeWindow } from './html-parts.js';
import { locksSection } from './locks.js';
import { maintenanceSection } from './maintenance.js';
import { overviewSection } from './overview.js';
import { queriesSection } from './queries.js';
import { sessionsSection } from './sessions.js';
import { tempFilesSection } from './temp-files.js';

/** What the log report adds to the incident report's look: data tables and the section index. */
const LOG_REPORT_STYLE = `
table.data{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px}table.data th{text-align:left;border-bottom:1px solid #d0d7de;padding:3px 6px;white-space:nowrap}
table.data td{border-top:1px solid #eaeef2;padding:3px 6px;vertical-align:top;overflow-wrap:break-word}table.data .num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.data td.sql,.sql{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
nav.index{font-size:13px;margin:4px 0 12px}nav.index a{margin-right:12px}
.log-section h3{font-size:14px;margin:14px 0 4px}.log-section .chart-box{max-width:800px}.columns{display:grid;grid-template-columns:1fr 1fr;gap:24px;align-items:start}.facts td:first-child{color:#57606a}
`;

/** The sections' results under `report` in analyze's JSON (src/report/log-report/index.ts registers them). */
interface SectionResults {
  queries: QueriesResult;
  errors: ErrorsResult;
  sessions: SessionsResult;
  checkpoints: CheckpointsResult;
  temp_files: TempFilesResult;
  maintenance: MaintenanceResult;
  locks: LocksResult;
}

/** The sections after the overview and the alerts, in pgBadger's order, with the title said when a result lacks one. */
const PAGE_SECTIONS: { [K in keyof SectionResults]: { title: string; render: (result: SectionResults[K], window: TimeWindow) => PageSection } } = {
  queries: { title: 'Queries', render: queriesSection },
  errors: { title: 'Errors', render: errorsSection },
  sessions: { title: 'Sessions and connections', render: sessionsSection },
  checkpoints: { title: 'Checkpoints', render: checkpointsSection },
  temp_files: { title: 'Temporary files', render: tempFilesSection },
  maintenance: { title: 'Autovacuum and autoanalyze', render: maintenanceSection },
  locks: { title: 'Locks, deadlocks and cancellations', render: locksSection },
};

const MINUTE_MS = 60_000;

export function renderLogReportHtml(report: AnalyzeReport): string {
  const s = report.summary;
  const results = report.report as Partial<SectionResults>;
  const title = `pgvigil log report${s.first_ts ? ` ${s.first_ts} to ${s.last_ts}` : ''}`;
  // Per-minute points sit at their minute's start: the axis runs from the first one to the end of the last.
  const span = s.first_ts === null
    ? { fromMs: 0, toMs: MINUTE_MS }
    : { fromMs: Math.floor(Date.parse(s.first_ts) / MINUTE_MS) * MINUTE_MS, toMs: (Math.floor(Date.parse(s.last_ts ?? s.first_ts) / MINUTE_MS) + 1) * MINUTE_MS };
  // Numbered as the alerts section numbers them (#alert-1, ...), open ones to the end of the log. Info
  // alerts explain rather than warn, and often stay open over the whole log: shading them all
  // stacks into a red wall that hides the lines.
  const alerts = (report.alerts ?? [])
    .map((a, i) => ({ alertId: i + 1, severity: a.severity, fromMs: Date.parse(a.started_at), toMs: a.ended_at === null ? span.toMs : Date.parse(a.ended_at) }))
    .filter((a) => a.severity !== 'info');
  const window: TimeWindow = { ...span, alerts };
  const sections: PageSection[] = [
    overviewSection(report),
    alertsSection(report.alerts, (alert) => queriesOfAlertWindow(results.queries, alert, s.last_ts)),
    ...(Object.keys(PAGE_SECTIONS) as Array<keyof SectionResults>).map((key) => pageSection(key, results, window)),
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${REPORT_STYLE}${LOG_REPORT_STYLE}</style></head><body>
<h1>pgvigil log report</h1>
<p class="window">${esc(s.first_ts === null ? 'no timestamped entry' : `${s.first_ts} to ${s.last_ts} (UTC)`)}: ${esc(report.files.map((f) => f.path).join(', '))}</p>
<nav class="index">${sections.map((section) => `<a href="#${esc(section.id)}">${esc(section.title)}</a>`).join('')}</nav>
${sections.map(sectionHtml).join('\n')}
</body></html>
`;
}

/** A section from its result; one the result has no entry for (a JSON from an older pgvigil) is said, not left out. */
function pageSection<K extends keyof SectionResults>(key: K, results: Partial<SectionResults>, window: TimeWindow): PageSection {
  const { title, render } = PAGE_SECTIONS[key];
  const result = results[key];
  return result === undefined
    ? { id: key, title, body: absent(`not in this result: made by a pgvigil without the ${key} section; run analyze again`) }
    : render(result, window);
}
