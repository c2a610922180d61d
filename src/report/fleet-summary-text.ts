/**
 * The fleet summary (src/central/central-report.ts fleetSummary: per target, the window's alerts,
 * worst vacuum hold, longest replay stall, crashes) as the text `pgvigil report --store
 * postgres://...` prints above the incident report. Pure.
 */
import type { CentralWindow, FleetTargetSummary } from '../central/central-report.js';

export function renderFleetSummaryText(summary: readonly FleetTargetSummary[], window: CentralWindow): string {
  const out = [`pgvigil fleet summary: ${new Date(window.fromMs).toISOString()} to ${new Date(window.toMs).toISOString()}, ${summary.length} target${summary.length === 1 ? '' : 's'}`];
  for (const t of summary) {
    out.push('', `${t.target}${t.cluster ? ` (cluster ${t.cluster})` : ''}`);
    const rules = Object.entries(t.alerts_by_rule);
    out.push(`  alerts:               ${rules.length === 0 ? 'none' : rules.map(([rule, n]) => `${rule} ${n}`).join(', ')}`);
    out.push(`  worst vacuum hold:    ${t.worst_vacuum_hold ? `${t.worst_vacuum_hold.removable_cutoff_age_xids} xids behind on ${t.worst_vacuum_hold.table} at ${t.worst_vacuum_hold.ts}` : 'none logged'}`);
    out.push(`  longest replay stall: ${t.longest_replay_stall ? `${t.longest_replay_stall.standing_still_seconds} s (${t.longest_replay_stall.rule}) at ${t.longest_replay_stall.ts}` : 'none'}`);
    out.push(`  crashes:              ${t.crashes}`);
  }
  return `${out.join('\n')}\n`;
}
