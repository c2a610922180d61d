/**
 * pgvigil's own section, which pgBadger cannot have: the alerts the rules found when replayed over
 * the log (`--rules`), each with the cause its summary names and the evidence's places in the
 * files. Without --rules the section says how to get it. Pure.
 */
import { shownFacts } from '../evidence-text.js';
import { shortTime } from '../report-html.js';
import type { OfflineAlert } from '../alerts-text.js';
import { absent, esc, type PageSection } from './html-parts.js';

/** Evidence positions shown per alert; the JSON has them all. */
const MAX_POSITIONS = 5;

export function alertsSection(alerts: readonly OfflineAlert[] | undefined, queriesOfWindow: (alert: OfflineAlert) => string): PageSection {
  const title = alerts === undefined ? 'Alerts (causes)' : `Alerts (causes): ${alerts.length}`;
  if (alerts === undefined) return { id: 'alerts', title, body: absent("not judged: run analyze with --rules to have pgvigil's rules name the causes (replayed on the log's own time)") };
  if (alerts.length === 0) return { id: 'alerts', title, body: absent('none: no rule fired on this log') };
  return { id: 'alerts', title, body: alerts.map((a, i) => alertHtml(a, i + 1, queriesOfWindow(a))).join('\n') };
}

function alertHtml(a: OfflineAlert, n: number, queries: string): string {
  const state = a.ended_at === null ? 'firing' : 'resolved';
  const until = a.ended_at === null ? 'still open at the end of the log' : `to ${shortTime(a.ended_at)}`;
  const facts = shownFacts(a.evidence.facts);
  const positions = a.evidence.events.map((e) => (e.line === null ? e.file : `${e.file}:${e.line}`));
  const more = positions.length > MAX_POSITIONS ? ` (+${positions.length - MAX_POSITIONS} more)` : '';
  return `<div class="alert ${esc(a.severity)} ${state}" id="alert-${n}">
<div class="head"><span class="badge ${state}">${state}</span><span class="badge">${esc(a.severity)}</span>${esc(a.rule)} on ${esc(a.target)} <span class="badge">basis: ${esc(a.basis)}</span></div>
<div>${esc(a.summary)}</div>
<div class="lifecycle">${esc(`from ${shortTime(a.started_at)} ${until}`)}</div>
${facts.length > 0 ? `<table class="facts">${facts.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join('')}</table>` : ''}
${positions.length > 0 ? `<div class="evidence">Evidence: ${esc(positions.slice(0, MAX_POSITIONS).join(', ') + more)}</div>` : ''}
${queries}
</div>`;
}
