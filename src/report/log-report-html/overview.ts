/**
 * The report's first section, as pgBadger's "Overview": what was read (files, their format and
 * size), the span the log covers and how much of it was understood. Pure.
 */
import { DateTime } from 'luxon';
import type { AnalyzeFileReport, AnalyzeReport } from '../analyze-text.js';
import { count, counted, mb } from '../text-format.js';
import { absent, factsTable, htmlTable, subheading, type PageSection } from './html-parts.js';

export function overviewSection(report: AnalyzeReport): PageSection {
  const s = report.summary;
  const levels = Object.entries(s.events_by_level).filter(([, n]) => (n ?? 0) > 0).map(([level, n]) => `${level} ${count(n ?? 0)}`);
  const facts: Array<[string, string]> = [
    ['span', s.first_ts === null ? 'no timestamped entry' : `${s.first_ts} to ${s.last_ts} (${spanText(s.first_ts, s.last_ts ?? s.first_ts)})`],
    ['files', counted(report.files.length, 'file')],
    ['lines', count(report.lines)],
    ['entries', count(report.entries)],
    ['events', count(s.events)],
    ['by level', levels.length > 0 ? levels.join(', ') : '-'],
    ['lines not understood', count(report.unparsed_lines)],
  ];
  const kinds = Object.entries(s.events_by_kind).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  return {
    id: 'overview',
    title: 'Overview',
    body: [
      `<div class="columns"><div>${factsTable(facts)}</div><div>`,
      kinds.length > 0 ? htmlTable<[string, number]>([
        { header: 'events by kind', align: 'left', cell: ([kind]) => kind },
        { header: 'events', align: 'right', cell: ([, n]) => count(n) },
      ], kinds, '') : absent('no event: no line was understood as a PostgreSQL log entry'),
      '</div></div>',
      subheading('Files read'),
      htmlTable<AnalyzeFileReport>([
        { header: 'file', align: 'left', cell: (f) => f.path },
        { header: 'format', align: 'left', cell: (f) => f.error ?? `${f.format ?? '?'}${f.prefix ? ` prefix '${f.prefix}'` : ''}` },
        { header: 'size', align: 'right', cell: (f) => mb(f.bytes) },
        { header: 'lines', align: 'right', cell: (f) => count(f.lines) },
      ], report.files, 'no file was read'),
    ].join('\n'),
  };
}

/** "2 h 14 min", "40 s": how long the log covers, as a reader says it. */
function spanText(fromIso: string, toIso: string): string {
  const duration = DateTime.fromISO(toIso).diff(DateTime.fromISO(fromIso), ['days', 'hours', 'minutes', 'seconds']);
  const parts: Array<[number, string]> = [[duration.days, 'd'], [duration.hours, 'h'], [duration.minutes, 'min'], [Math.round(duration.seconds), 's']];
  const shown = parts.filter(([n]) => n > 0).slice(0, 2).map(([n, unit]) => `${n} ${unit}`);
  return shown.length > 0 ? shown.join(' ') : 'under a second';
}
