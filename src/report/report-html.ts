/**
 * The incident report as one self-contained HTML file: inline CSS and SVG, no script, no font
 * or image from the network, so it reads offline and can be attached to a ticket. Alerts link
 * to their evidence on the timeline and the timeline links back. Pure: report in, HTML out.
 */
import { DateTime } from 'luxon';
import { renderSummarySections } from './analyze-text.js';
import { citedSeriesText, shownFacts } from './evidence-text.js';
import type { IncidentReport, ReportAlert, TimelineEntry } from './incident-report.js';
import { logReportHeading, sectionsHtml } from './log-report/section-render.js';
import { sectionViews } from './log-report/section-view.js';
import { escapeXml as esc, LINE_COLOURS, renderChartSvg, type AlertPeriod } from './report-svg.js';

/** The look every pgvigil HTML report shares (this one and analyze's log report). */
export const REPORT_STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:8px 0 2px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.window{color:#57606a;margin:0 0 12px}
.alert{border:1px solid #d0d7de;border-left:6px solid #bf8700;border-radius:6px;padding:8px 12px;margin:8px 0}
.alert.critical,.alert.error{border-left-color:#cf222e}.alert.info{border-left-color:#0969da}.alert.resolved{opacity:.85}
.alert .head{font-weight:600}.badge{display:inline-block;font-size:12px;padding:0 6px;border-radius:10px;background:#eaeef2;margin-right:4px}
.badge.firing{background:#ffebe9;color:#a40e26}.badge.resolved{background:#dafbe1;color:#116329}
.lifecycle,.facts,.evidence{color:#424a53;font-size:13px;margin:4px 0}.facts td{padding:0 12px 0 0}
a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(640px,1fr));gap:12px}.chart-box{border:1px solid #d0d7de;border-radius:6px;padding:8px 12px}
.chart-box h3{font-size:14px;margin:0 0 4px}.legend{font-size:12px;color:#424a53;margin:2px 0 0}.legend span{display:inline-block;margin-right:14px;overflow-wrap:anywhere}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
svg.chart{width:100%;height:auto;display:block}svg .grid{stroke:#eaeef2}svg .axis{stroke:#8c959f}
svg .tick{font-size:11px;fill:#57606a}svg .alert-period{fill:#cf222e;fill-opacity:.12}svg .alert-label{font-size:11px;fill:#a40e26}
p.empty{color:#8c959f;font-style:italic;margin:4px 0}
table.timeline{border-collapse:collapse;width:100%;font-size:13px}table.timeline td{border-top:1px solid #eaeef2;padding:3px 6px;vertical-align:top}
table.timeline td.ts{white-space:nowrap;color:#57606a;font-variant-numeric:tabular-nums}table.timeline td.what{white-space:nowrap;font-weight:600}
tr.alert_firing td{background:#fff1f0}tr.alert_resolved td{background:#effaf1}tr.evidence td.what{color:#a40e26}
tr:target td,.alert:target{outline:2px solid #0969da;background:#ddf4ff}
pre.summary{background:#f6f8fa;padding:8px 12px;border-radius:6px;overflow-x:auto;font-size:12px}
`;

export function renderIncidentReportHtml(report: IncidentReport): string {
  const window = { fromMs: ms(report.from), toMs: ms(report.to) };
  const periods: AlertPeriod[] = report.alerts.map((a) => ({ alertId: a.id, fromMs: ms(a.started), toMs: a.resolved === null ? window.toMs : ms(a.resolved) }));
  const inTimeline = new Set(report.timeline.flatMap((e) => ('event_id' in e.ref ? [e.ref.event_id] : [])));
  const title = `pgvigil incident report ${shortTime(report.from)} to ${shortTime(report.to)}${report.target ? `, ${report.target}` : ''}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${REPORT_STYLE}</style></head><body>
<h1>pgvigil incident report</h1>
<p class="window">${esc(report.from)} to ${esc(report.to)} (UTC)${report.target ? `, target <b>${esc(report.target)}</b>` : ', every target'}: ${report.alerts.length} alert(s), ${report.summary.events} log event(s)</p>
<h2>Alerts (${report.alerts.length})</h2>
${report.alerts.length === 0 ? '<p>None fired in this window.</p>' : report.alerts.map((a) => alertHtml(a, inTimeline)).join('\n')}
<h2>Charts</h2>
<p class="window">Shaded: alert periods. Charts from autovacuum reports and logged lock waits need only the log; the others need pgvigil's samples.</p>
<div class="charts">${report.charts.map((c) => `<section class="chart-box" id="chart-${c.id}"><h3>${esc(c.title)}</h3>${c.empty_reason === null ? renderChartSvg(c, window, periods) : `<p class="empty">${esc(c.empty_reason)}</p>`}${chartLegend(c.lines.map((l) => `${l.label}${l.source === 'log' ? '' : ' (sampled)'}`), c.lines_omitted)}</section>`).join('\n')}</div>
<h2>Timeline (${report.timeline.length} entries${report.timeline_omitted > 0 ? `, ${report.timeline_omitted} earlier ones left out` : ''})</h2>
<table class="timeline"><tbody>
${report.timeline.map(timelineRow).join('\n')}
</tbody></table>
${report.log_report ? `<h2 id="log-report">${esc(logReportHeading(report.log_report.minute_rows))}</h2>\n${sectionsHtml(sectionViews(report.log_report.sections))}` : ''}
<h2>Log summary</h2>
<pre class="summary">${esc(renderSummarySections(report.summary).join('\n').trim())}</pre>
</body></html>
`;
}

function alertHtml(a: ReportAlert, inTimeline: ReadonlySet<number>): string {
  const lifecycle = [`fired ${shortTime(a.started)}`, `updated ${shortTime(a.updated)}`, a.resolved ? `resolved ${shortTime(a.resolved)}` : 'still firing'];
  const transitions = a.transitions.length > 1 ? ` (${a.transitions.map((t) => `${t.to} ${shortTime(t.ts)}`).join(', ')})` : '';
  const facts = shownFacts(a.evidence.facts);
  const evidence = a.evidence.event_ids.map((id) => (inTimeline.has(id) ? `<a href="#event-${id}">event ${id}</a>` : `event ${id} (outside this timeline)`));
  return `<div class="alert ${esc(a.severity)} ${a.state}" id="alert-${a.id}">
<div class="head"><span class="badge ${a.state}">${a.state}</span><span class="badge">${esc(a.severity)}</span>#${a.id} ${esc(a.rule)} on ${esc(a.target)} <span class="badge">basis: ${esc(a.basis)}</span></div>
<div>${esc(a.summary)}</div>
<div class="lifecycle">${esc(lifecycle.join(', ') + transitions)}</div>
${facts.length > 0 ? `<table class="facts">${facts.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join('')}</table>` : ''}
${a.evidence.series.length > 0 ? `<div class="evidence">Series: ${esc(a.evidence.series.map((s) => citedSeriesText(s, shortTime)).join('; '))}</div>` : ''}
${evidence.length > 0 ? `<div class="evidence">Evidence: ${evidence.join(', ')}</div>` : ''}
</div>`;
}

function timelineRow(e: TimelineEntry): string {
  const id = 'event_id' in e.ref ? `event-${e.ref.event_id}` : '';
  const alertLink = 'alert_id' in e.ref ? ` <a href="#alert-${e.ref.alert_id}">#${e.ref.alert_id}</a>` : '';
  const backLinks = e.evidence_of.map((alertId) => ` <a href="#alert-${alertId}">evidence of #${alertId}</a>`).join('');
  const classes = [e.what, e.evidence_of.length > 0 ? 'evidence' : ''].filter(Boolean).join(' ');
  return `<tr${id ? ` id="${id}"` : ''} class="${classes}"><td class="ts">${esc(shortTime(e.ts))}</td><td>${esc(e.target)}</td><td class="what">${esc(e.what)}</td><td>${esc(e.text)}${alertLink}${backLinks}</td></tr>`;
}

export function chartLegend(labels: string[], omitted: number): string {
  if (labels.length === 0) return '';
  const items = labels.map((label, i) => `<span><i class="swatch" style="background:${LINE_COLOURS[i % LINE_COLOURS.length]}"></i>${esc(label)}</span>`);
  return `<p class="legend">${items.join('')}${omitted > 0 ? `<span>and ${omitted} more with lower peaks</span>` : ''}</p>`;
}

function ms(iso: string): number {
  return DateTime.fromISO(iso).toMillis();
}

/** 2026-11-30 10:04:05.123 UTC reads faster than the full ISO form in a dense table. */
export function shortTime(iso: string): string {
  return DateTime.fromISO(iso, { zone: 'utc' }).toFormat('yyyy-MM-dd HH:mm:ss.SSS');
}
