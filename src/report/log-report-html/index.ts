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
import { REPORT_STYLE } from '../report-html.js';
import { alertsSection } from './alerts.js';
import { checkpointsSection, tempFilesSection } from './checkpoints.js';
import { errorsSection } from './errors.js';
import { esc, sectionHtml, type PageSection } from './html-parts.js';
import { locksSection } from './locks.js';
import { maintenanceSection } from './maintenance.js';
import { overviewSection } from './overview.js';

/** What the log report adds to the incident report's look: data tables and the section index. */
const LOG_REPORT_STYLE = `
table.data{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px}table.data th{text-align:left;border-bottom:1px solid #d0d7de;padding:3px 6px;white-space:nowrap}
table.data td{border-top:1px solid #eaeef2;padding:3px 6px;vertical-align:top;overflow-wrap:anywhere}table.data .num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.data td.sql,.sql{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
nav.index{font-size:13px;margin:4px 0 12px}nav.index a{margin-right:12px}
.log-section h3{font-size:14px;margin:14px 0 4px}.facts td:first-child{color:#57606a}
`;

export function renderLogReportHtml(report: AnalyzeReport): string {
  const s = report.summary;
  const title = `pgvigil log report${s.first_ts ? ` ${s.first_ts} to ${s.last_ts}` : ''}`;
  const sections: PageSection[] = [
    overviewSection(report),
    alertsSection(report.alerts, () => ''),
    errorsSection(s, ''),
    checkpointsSection(s, ''),
    tempFilesSection(s, ''),
    maintenanceSection(s, ''),
    locksSection(s, ''),
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
