/**
 * The incident report for a past window: what pgvigil concluded (alerts and when they fired and
 * resolved), a timeline of the notable log events around them, and the log summary of the
 * window. Pure: stored alerts, transitions and events in; the report out. `pgvigil report` and
 * the API read the store and hand them over.
 */
import { DateTime } from 'luxon';
import { basisOf, type Alert, type AlertBasis, type AlertState, type AnyLogEvent } from '../domain/index.js';
import { AnalyzeSummaryBuilder, type AnalyzeSummary } from './analyze-summary.js';
import { renderSummarySections } from './analyze-text.js';

export interface StoredTransition {
  alertId: number;
  tsMs: number;
  toState: AlertState;
}

export interface TimelineEntry {
  ts: string;
  target: string;
  what: 'alert_firing' | 'alert_resolved' | AnyLogEvent['kind'];
  text: string;
  /** Alert id or event id, to look it up in /api. */
  ref: { alert_id: number } | { event_id: number };
}

export interface IncidentReport {
  from: string;
  to: string;
  target: string | null;
  alerts: Array<{ id: number; rule: string; severity: string; state: AlertState; target: string; started: string; resolved: string | null; summary: string; basis: AlertBasis }>;
  timeline: TimelineEntry[];
  /** Timeline entries left out past the cap (the most recent are kept). */
  timeline_omitted: number;
  summary: AnalyzeSummary;
}

export interface IncidentReportInput {
  fromMs: number;
  toMs: number;
  target: string | null;
  alerts: readonly Alert[];
  transitions: readonly StoredTransition[];
  /** Events of the window in time order, with their store ids. */
  events: Iterable<{ id: number; event: AnyLogEvent }>;
  maxTimelineEntries?: number;
}

export function buildIncidentReport(input: IncidentReportInput): IncidentReport {
  const maxEntries = input.maxTimelineEntries ?? 500;
  const summary = new AnalyzeSummaryBuilder();
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
    while (next < transitions.length && transitions[next]!.tsMs <= event.tsMs) keep(transitions[next++]!.entry);
    if (isNotable(event)) keep(eventEntry(id, event));
  }
  while (next < transitions.length) keep(transitions[next++]!.entry);
  if (timeline.length > maxEntries) omitted += timeline.splice(0, timeline.length - maxEntries).length;
  return {
    from: iso(input.fromMs),
    to: iso(input.toMs),
    target: input.target,
    alerts: input.alerts.map((a) => ({
      id: a.id, rule: a.ruleId, severity: a.severity, state: a.state, target: a.target,
      started: iso(a.startedMs), resolved: a.resolvedMs === null ? null : iso(a.resolvedMs), summary: a.summary, basis: basisOf(a.evidence),
    })),
    timeline,
    timeline_omitted: omitted,
    summary: summary.result(),
  };
}

/** Classified events, and anything at ERROR or worse; plain statement lines are not notable. */
export function isNotable(event: AnyLogEvent): boolean {
  return event.kind !== 'generic' || event.level === 'ERROR' || event.level === 'FATAL' || event.level === 'PANIC';
}

function eventEntry(id: number, event: AnyLogEvent): TimelineEntry {
  const where = [event.database, event.pid === null ? null : `pid ${event.pid}`].filter(Boolean).join(' ');
  const firstLine = event.message.split('\n', 1)[0]!;
  return { ts: iso(event.tsMs), target: event.target, what: event.kind, text: `${where ? `[${where}] ` : ''}${event.level}: ${firstLine}`, ref: { event_id: id } };
}

function transitionEntry(t: StoredTransition, alert: Alert): TimelineEntry {
  const verb = t.toState === 'firing' ? `FIRING ${alert.severity}` : 'RESOLVED';
  return { ts: iso(t.tsMs), target: alert.target, what: t.toState === 'firing' ? 'alert_firing' : 'alert_resolved', text: `${verb} ${alert.ruleId}: ${alert.summary}`, ref: { alert_id: alert.id } };
}

function iso(ms: number): string {
  return DateTime.fromMillis(ms, { zone: 'utc' }).toISO()!;
}

export function renderIncidentReportText(report: IncidentReport): string {
  const out = [`pgvigil report: ${report.from} to ${report.to}${report.target ? `, target ${report.target}` : ''}`];
  out.push('', `Alerts (${report.alerts.length})`);
  if (report.alerts.length === 0) out.push('  none fired in this window');
  for (const a of report.alerts) {
    out.push(`  #${a.id} ${a.severity.toUpperCase()} ${a.rule} on ${a.target}: ${a.summary}`);
    out.push(`      fired ${a.started}${a.resolved ? `, resolved ${a.resolved}` : ', still firing'}; basis: ${a.basis}`);
  }
  out.push('', `Timeline (${report.timeline.length} entries${report.timeline_omitted > 0 ? `, ${report.timeline_omitted} earlier ones left out` : ''})`);
  for (const e of report.timeline) out.push(`  ${e.ts} ${e.target} ${e.what.padEnd(22)} ${e.text}`);
  out.push(...renderSummarySections(report.summary));
  return `${out.join('\n')}\n`;
}
