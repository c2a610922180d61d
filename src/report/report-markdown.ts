/**
 * The incident report as Markdown, for a ticket or a chat message: alerts with their lifecycle
 * and evidence, then the timeline and the log summary. Charts need the HTML form. Pure.
 */
import { renderSummarySections } from './analyze-text.js';
import { citedSeriesText, shownFacts } from './evidence-text.js';
import type { IncidentReport } from './incident-report.js';
import { logReportHeading, sectionsMarkdown } from './log-report/section-render.js';
import { sectionViews } from './log-report/section-view.js';

export function renderIncidentReportMarkdown(report: IncidentReport): string {
  const out = [`# pgvigil incident report`, '', `${report.from} to ${report.to}${report.target ? `, target \`${report.target}\`` : ''}`, '', `## Alerts (${report.alerts.length})`, ''];
  if (report.alerts.length === 0) out.push('None fired in this window.');
  for (const a of report.alerts) {
    out.push(`- **#${a.id} ${a.severity.toUpperCase()} ${a.rule}** on \`${a.target}\` (${a.state}, basis ${a.basis}): ${cell(a.summary)}`);
    out.push(`  - fired ${a.started}, updated ${a.updated}, ${a.resolved ? `resolved ${a.resolved}` : 'still firing'}`);
    const facts = shownFacts(a.evidence.facts).map(([k, v]) => `${k}=${v}`);
    if (facts.length > 0) out.push(`  - facts: ${cell(facts.join(', '))}`);
    if (a.evidence.series.length > 0) out.push(`  - series: ${cell(a.evidence.series.map((s) => citedSeriesText(s, (ts) => ts)).join('; '))}`);
    if (a.evidence.event_ids.length > 0) out.push(`  - evidence: events ${a.evidence.event_ids.join(', ')}`);
  }
  out.push('', `## Timeline (${report.timeline.length} entries${report.timeline_omitted > 0 ? `, ${report.timeline_omitted} earlier ones left out` : ''})`, '');
  out.push('| time | target | what | event | |', '| --- | --- | --- | --- | --- |');
  for (const e of report.timeline) {
    const ref = 'event_id' in e.ref ? `event ${e.ref.event_id}` : `alert #${e.ref.alert_id}`;
    const backLinks = e.evidence_of.map((id) => `evidence of #${id}`).join(', ');
    out.push(`| ${e.ts} | ${cell(e.target)} | ${e.what} | ${cell(e.text)} | ${[ref, backLinks].filter(Boolean).join('; ')} |`);
  }
  if (report.log_report) out.push('', `## ${logReportHeading(report.log_report.minute_rows)}`, ...sectionsMarkdown(sectionViews(report.log_report.sections)));
  out.push('', '## Log summary', '', '```', ...renderSummarySections(report.summary), '```', '');
  return out.join('\n');
}

/** A table cell or list item on one line: pipes escaped, newlines folded. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}
