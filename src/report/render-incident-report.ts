/** The incident report in the form asked for; one switch shared by `pgvigil report` and /api/report. */
import { renderIncidentReportText, type IncidentReport } from './incident-report.js';
import { renderIncidentReportHtml } from './report-html.js';
import { renderIncidentReportMarkdown } from './report-markdown.js';

export function renderIncidentReport(report: IncidentReport, format: 'text' | 'json' | 'md' | 'html'): string {
  switch (format) {
    case 'json': return `${JSON.stringify(report)}\n`;
    case 'md': return renderIncidentReportMarkdown(report);
    case 'html': return renderIncidentReportHtml(report);
    case 'text': return renderIncidentReportText(report);
  }
}
