/**
 * The incident report for a past window: what pgvigil concluded (alerts with their lifecycle and
 * evidence), a timeline of the notable log events around them, the charts of the window and its
 * log summary. Pure: stored alerts, transitions, events and series in; the report out.
 * `pgvigil report` and the API read the store and hand them over.
 */
import { DateTime } from 'luxon';
import { basisOf, type Alert, type AlertBasis, type AlertState, type AnyLogEvent, type Evidence } from '../domain/index.js';
import type { StoredTransition } from '../store/store-reads.js';
import { AnalyzeSummaryBuilder, type AnalyzeSummary } from './analyze-summary.js';
import { renderSummarySections } from './analyze-text.js';
import { eventLine } from './event-line.js';
import { logReportHeading, sectionsText } from './log-report/section-render.js';
import { sectionViews } from './log-report/section-view.js';
import type { StoredLogReport } from './log-report/stored-log-report.js';
import { LogChartCollector, type ChartMetric, type ReportChart, type SampledMetric } from './report-charts.js';

export interface TimelineEntry {
  ts: string;
  target: string;
  what: 'alert_firing' | 'alert_resolved' | AnyLogEvent['kind'];
  text: string;
  /** Alert id or event id, to look it up in /api. */
  ref: { alert_id: number } | { event_id: number };
  /** Alerts that name this event as evidence. */
  evidence_of: number[];
  /** An event's log language when it is not English (`message` then was in it; `text` is English). */
  language?: string;
}

export interface ReportAlert {
  id: number;
  rule: string;
  severity: string;
  state: AlertState;
  target: string;
  started: string;
  updated: string;
  resolved: string | null;
  summary: string;
  /** What the conclusion rests on: the log alone, or the log and sampled series. */
  basis: AlertBasis;
  /** Every firing and resolution in the window, oldest first. */
  transitions: Array<{ ts: string; to: AlertState }>;
  evidence: { event_ids: number[]; facts: Evidence['facts']; series: Array<{ name: string; labels: Record<string, string>; value: number | null; ts: string }> };
}

export interface IncidentReport {
  from: string;
  to: string;
  target: string | null;
  alerts: ReportAlert[];
  timeline: TimelineEntry[];
  /** Timeline entries left out past the cap (the most recent are kept). */
  timeline_omitted: number;
  summary: AnalyzeSummary;
  charts: ReportChart[];
  /**
   * The log report of the window's stored minutes (issue #26): `sections` maps each section's key
   * to its result, as `pgvigil analyze --json` gives them under `report`. Null where no minutes
   * are kept (the central store).
   */
  log_report: { minute_rows: number; unreadable_rows: number; sections: Record<string, unknown> } | null;
}

export interface IncidentReportInput {
  fromMs: number;
  toMs: number;
  target: string | null;
  alerts: readonly Alert[];
  transitions: readonly StoredTransition[];
  /** Events of the window in time order, with their store ids. */
  events: Iterable<{ id: number; event: AnyLogEvent }>;
  /** Stored series of a chart metric in the window. */
  sampled: (metric: ChartMetric) => SampledMetric;
  /** The window's stored minutes merged (stored-log-report.ts); absent where none are kept. */
  logReport?: StoredLogReport;
  maxTimelineEntries?: number;
}

export function buildIncidentReport(input: IncidentReportInput): IncidentReport {
  const maxEntries = input.maxTimelineEntries ?? 500;
  const summary = new AnalyzeSummaryBuilder();
  const charts = new LogChartCollector();
  const evidenceOf = alertsByEvidenceEvent(input.alerts);
  const timeline: TimelineEntry[] = [];
  let omitted = 0;
  const keep = (entry: TimelineEntry): void => {
    timeline.push(entry);
    // Keep the newest: an incident's end is usually what the reader came for.
    if (timeline.length > maxEntries * 2) omitted += timeline.splice(0, timeline.length - maxEntries).length;
  };
  const alertById = new Map(input.alerts.map((a) => [a.id, a]));
  const transitions = input.transitions.filter((t) => alertById.has(t.alertId)).map((t) => ({ tsMs: t.tsMs, entry: transitionEntry(t, alertById.get(t.alertId)!) }));
  let next = 0;
  for (const { id, event } of input.events) {
    summary.add(event);
    charts.add(event);
    while (next < transitions.length && transitions[next]!.tsMs <= event.tsMs) keep(transitions[next++]!.entry);
    const supports = evidenceOf.get(id) ?? [];
    if (supports.length > 0 || isNotable(event)) keep(eventEntry(id, event, supports));
  }
  while (next < transitions.length) keep(transitions[next++]!.entry);
  if (timeline.length > maxEntries) omitted += timeline.splice(0, timeline.length - maxEntries).length;
  return {
    from: iso(input.fromMs),
    to: iso(input.toMs),
    target: input.target,
    alerts: input.alerts.map((a) => reportAlert(a, input.transitions)),
    timeline,
    timeline_omitted: omitted,
    summary: summary.result(),
    charts: charts.charts(input.sampled),
    log_report: input.logReport === undefined ? null
      : { minute_rows: input.logReport.minuteRows, unreadable_rows: input.logReport.unreadableRows, sections: input.logReport.sections },
  };
}

function reportAlert(a: Alert, transitions: readonly StoredTransition[]): ReportAlert {
  return {
    id: a.id, rule: a.ruleId, severity: a.severity, state: a.state, target: a.target,
    started: iso(a.startedMs), updated: iso(a.updatedMs), resolved: a.resolvedMs === null ? null : iso(a.resolvedMs), summary: a.summary,
    basis: basisOf(a.evidence),
    transitions: transitions.filter((t) => t.alertId === a.id).map((t) => ({ ts: iso(t.tsMs), to: t.toState })),
    evidence: {
      event_ids: a.evidence.eventIds,
      facts: a.evidence.facts,
      series: a.evidence.series.map((s) => ({ name: s.name, labels: s.labels, value: s.value, ts: iso(s.tsMs) })),
    },
  };
}

function alertsByEvidenceEvent(alerts: readonly Alert[]): Map<number, number[]> {
  const byEvent = new Map<number, number[]>();
  for (const a of alerts) {
    for (const id of a.evidence.eventIds) byEvent.set(id, [...(byEvent.get(id) ?? []), a.id]);
  }
  return byEvent;
}

/** Classified events, and anything at ERROR or worse; plain statement lines are not notable. */
export function isNotable(event: AnyLogEvent): boolean {
  return event.kind !== 'generic' || event.level === 'ERROR' || event.level === 'FATAL' || event.level === 'PANIC';
}

function eventEntry(id: number, event: AnyLogEvent, evidenceOf: number[]): TimelineEntry {
  return {
    ts: iso(event.tsMs), target: event.target, what: event.kind, text: eventLine(event), ref: { event_id: id }, evidence_of: evidenceOf,
    ...(event.language !== undefined ? { language: event.language } : {}),
  };
}

function transitionEntry(t: StoredTransition, alert: Alert): TimelineEntry {
  const verb = t.toState === 'firing' ? `FIRING ${alert.severity}` : 'RESOLVED';
  return { ts: iso(t.tsMs), target: alert.target, what: t.toState === 'firing' ? 'alert_firing' : 'alert_resolved', text: `${verb} ${alert.ruleId}: ${alert.summary}`, ref: { alert_id: alert.id }, evidence_of: [] };
}

export function iso(ms: number): string {
  return DateTime.fromMillis(ms, { zone: 'utc' }).toISO()!;
}

export function renderIncidentReportText(report: IncidentReport): string {
  const out = [`pgvigil report: ${report.from} to ${report.to}${report.target ? `, target ${report.target}` : ''}`];
  out.push('', `Alerts (${report.alerts.length})`);
  if (report.alerts.length === 0) out.push('  none fired in this window');
  for (const a of report.alerts) {
    out.push(`  #${a.id} ${a.severity.toUpperCase()} ${a.rule} on ${a.target}: ${a.summary}`);
    out.push(`      fired ${a.started}, updated ${a.updated}${a.resolved ? `, resolved ${a.resolved}` : ', still firing'}; basis: ${a.basis}`);
    if (a.evidence.event_ids.length > 0) out.push(`      evidence: events ${a.evidence.event_ids.join(', ')}`);
  }
  out.push('', `Timeline (${report.timeline.length} entries${report.timeline_omitted > 0 ? `, ${report.timeline_omitted} earlier ones left out` : ''})`);
  for (const e of report.timeline) out.push(`  ${e.ts} ${e.target} ${e.what.padEnd(22)} ${e.text}`);
  if (report.log_report) out.push('', logReportHeading(report.log_report.minute_rows), ...sectionsText(sectionViews(report.log_report.sections)));
  out.push(...renderSummarySections(report.summary));
  return `${out.join('\n')}\n`;
}
