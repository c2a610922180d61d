/**
 * The pieces every section of the log report is built of: a section with its heading, a table
 * whose columns are declared like the text report's (text-format.ts), a chart box, and the one
 * line a section shows instead of its data when the log cannot give it. Everything from the log
 * passes through `esc` here, so section files never write raw text. Pure.
 */
import { chartLegend } from '../report-html.js';
import type { ReportChart } from '../report-charts.js';
import { escapeXml as esc, renderChartSvg, type AlertPeriod } from '../report-svg.js';
import type { Column } from '../text-format.js';

export { esc };

/** The log's span, the x axis of every chart, and the alerts' periods shaded behind each (linked to the alert). */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
  alerts: readonly AlertPeriod[];
}

/** A titled part of the page: its heading is what a reader scans for, its id what the index links to. */
export interface PageSection {
  id: string;
  title: string;
  /** HTML: built with the helpers below. */
  body: string;
}

export function sectionHtml(section: PageSection): string {
  return `<section class="log-section" id="${esc(section.id)}"><h2>${esc(section.title)}</h2>\n${section.body}\n</section>`;
}

/** A text report column; `sql` cells (statement text) are set in a monospace font. */
export type HtmlColumn<Row> = Column<Row> & { sql?: boolean };

/**
 * A table of `rows` with the text report's column declarations; cells are text, escaped. A
 * table without rows is `whenEmpty` instead, so a reader learns why there is nothing.
 */
export function htmlTable<Row>(columns: ReadonlyArray<HtmlColumn<Row>>, rows: readonly Row[], whenEmpty: string): string {
  if (rows.length === 0) return absent(whenEmpty);
  const cell = (tag: 'th' | 'td', column: HtmlColumn<Row>, text: string): string => {
    const classes = [column.align === 'right' ? 'num' : '', tag === 'td' && column.sql ? 'sql' : ''].filter(Boolean).join(' ');
    return `<${tag}${classes ? ` class="${classes}"` : ''}>${esc(text)}</${tag}>`;
  };
  const head = columns.map((c) => cell('th', c, c.header)).join('');
  const body = rows.map((row) => `<tr>${columns.map((c) => cell('td', c, c.cell(row))).join('')}</tr>`).join('\n');
  return `<table class="data"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** A heading inside a section. */
export function subheading(text: string): string {
  return `<h3>${esc(text)}</h3>`;
}

/** One line of text (escaped). */
export function paragraph(text: string): string {
  return `<p>${esc(text)}</p>`;
}

/** Why a section or table has nothing, and what to set to have it: one line, never a vanished section. */
export function absent(reason: string): string {
  return `<p class="empty">${esc(reason)}</p>`;
}

/** Label and value pairs, the overview's way of saying a few figures. */
export function factsTable(facts: ReadonlyArray<readonly [string, string]>): string {
  return `<table class="facts">${facts.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join('')}</table>`;
}

/** A chart in the incident report's box, or its empty reason in the same place. */
export function chartBox(chart: ReportChart, window: TimeWindow): string {
  const drawn = chart.empty_reason === null ? renderChartSvg(chart, window, window.alerts) : absent(chart.empty_reason);
  return `<section class="chart-box" id="chart-${esc(chart.id)}"><h3>${esc(chart.title)}</h3>${drawn}${chartLegend(chart.lines.map((l) => l.label), chart.lines_omitted)}</section>`;
}

export function chartGrid(charts: readonly ReportChart[], window: TimeWindow): string {
  return `<div class="charts">${charts.map((c) => chartBox(c, window)).join('\n')}</div>`;
}
