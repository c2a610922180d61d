/**
 * The log report's sections (section-view.ts) in the incident report's three printed forms:
 * text, Markdown and HTML, one compact table per ranked list. Pure.
 */
import { escapeXml as esc } from '../report-svg.js';
import type { SectionTable, SectionView } from './section-view.js';

/** Rows of a table the text and Markdown forms print: the top of each list; HTML and JSON have all. */
const PRINTED_ROWS = 10;

function printedTitle(table: SectionTable): string {
  return table.rows.length > PRINTED_ROWS ? `${table.title} (top ${PRINTED_ROWS} of ${table.rows.length})` : `${table.title} (${table.rows.length})`;
}

/** What every form says first: where the numbers come from. */
export function logReportHeading(minuteRows: number): string {
  return minuteRows === 0
    ? 'What the database was doing: no stored minutes in this window (the log report is stored by `pgvigil run` and `analyze --db` from schema 10 on)'
    : `What the database was doing: the log report of the window's ${minuteRows} stored minute row(s), whole minutes`;
}

export function sectionsText(views: readonly SectionView[]): string[] {
  const out: string[] = [];
  for (const view of views) {
    out.push('', view.title);
    for (const [name, value] of view.facts) out.push(`  ${name}: ${value}`);
    for (const table of view.tables) out.push(`  ${printedTitle(table)}`, ...alignedRows(table).map((line) => `    ${line}`));
    for (const [name, rows] of view.notShown) out.push(`  ${name.replace(/_/g, ' ')}: ${rows} minutes (in --json)`);
  }
  return out;
}

function alignedRows(table: SectionTable): string[] {
  if (table.rows.length === 0) return ['none'];
  const all = [table.columns, ...table.rows.slice(0, PRINTED_ROWS)];
  const widths = table.columns.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return all.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}

export function sectionsMarkdown(views: readonly SectionView[]): string[] {
  const out: string[] = [];
  for (const view of views) {
    out.push('', `### ${view.title}`, '');
    for (const [name, value] of view.facts) out.push(`- ${name}: ${mdCell(value)}`);
    for (const table of view.tables) {
      out.push('', `**${printedTitle(table)}**`, '');
      if (table.rows.length === 0) out.push('None.');
      else out.push(`| ${table.columns.join(' | ')} |`, `|${' --- |'.repeat(table.columns.length)}`, ...table.rows.slice(0, PRINTED_ROWS).map((row) => `| ${row.map(mdCell).join(' | ')} |`));
    }
    for (const [name, rows] of view.notShown) out.push(`- ${name.replace(/_/g, ' ')}: ${rows} minutes (in the JSON form)`);
  }
  return out;
}

function mdCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function sectionsHtml(views: readonly SectionView[]): string {
  return views.map((view) => `<section class="log-section" id="log-${esc(view.key)}"><h3>${esc(view.title)}</h3>
${view.facts.length === 0 ? '' : `<table class="facts"><tbody>${view.facts.map(([name, value]) => `<tr><td>${esc(name)}</td><td>${esc(value)}</td></tr>`).join('')}</tbody></table>`}
${view.tables.map((table) => `<h4>${esc(table.title)} (${table.rows.length})</h4>${table.rows.length === 0 ? '<p class="empty">none</p>'
    : `<table class="timeline"><thead><tr>${table.columns.map((c) => `<th>${esc(c.replace(/_/g, ' '))}</th>`).join('')}</tr></thead><tbody>${table.rows.map((row) => `<tr>${row.map((cell) => `<td>${esc(cell)}</td>`).join('')}</tr>`).join('\n')}</tbody></table>`}`).join('\n')}
${view.notShown.map(([name, rows]) => `<p class="empty">${esc(name.replace(/_/g, ' '))}: ${rows} minutes (in the JSON form)</p>`).join('')}
</section>`).join('\n');
}
