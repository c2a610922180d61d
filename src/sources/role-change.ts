/**
 * A server's role changing under the poller: a standby promoted (a failover or a switchover), or
 * a primary come back as a standby (rewound to follow the new primary). Pure: the server before
 * and after a probe in, what the poller says out.
 */
import { serverRole, type ServerInfo } from '../collectors/collector.js';
import type { ChangeEvent } from '../notify/notifier.js';

export interface RoleChange {
  from_role: 'primary' | 'standby';
  to_role: 'primary' | 'standby';
  /** The timeline a promoted server writes; null on a standby (its timeline follows the primary's). */
  timeline_id: number | null;
  /** Seen at start against the role stored by the previous run: it changed while pgvigil was not running. */
  since_last_run: boolean;
}

/**
 * The change between two probes of one target, or null when its role stayed. `sinceLastRun`:
 * `before` is the role the previous run stored, not a probe of this run.
 */
export function roleChange(
  before: Pick<ServerInfo, 'inRecovery'> | null, after: Pick<ServerInfo, 'inRecovery'>, timelineId: number | null, sinceLastRun = false,
): RoleChange | null {
  if (before === null || before.inRecovery === after.inRecovery) return null;
  return { from_role: serverRole(before), to_role: serverRole(after), timeline_id: after.inRecovery ? null : timelineId, since_last_run: sinceLastRun };
}

/** The poller's log line: "role of db2 changed: standby -> primary (timeline 2): promoted; ...". */
export function describeRoleChange(target: string, change: RoleChange): string {
  const timeline = change.timeline_id === null ? '' : ` (timeline ${change.timeline_id})`;
  const meaning = change.to_role === 'primary'
    ? 'promoted (a failover or switchover); polled as a primary from now on'
    : 'now a standby (following another primary); polled as a standby from now on';
  const when = change.since_last_run ? ' since pgvigil last ran' : '';
  return `role of ${target} changed${when}: ${change.from_role} -> ${change.to_role}${timeline}: ${meaning}`;
}

/**
 * The change event sent to every notifier that takes them (PagerDuty change events, webhooks): a
 * failover informs whoever is on call, it does not page.
 */
export function roleChangeNotice(target: string, cluster: string | null, change: RoleChange, tsMs: number): ChangeEvent {
  const what = change.to_role === 'primary' ? 'promoted to primary' : 'became a standby';
  const timeline = change.timeline_id === null ? '' : ` (timeline ${change.timeline_id})`;
  return {
    target,
    summary: `${target} ${what}${timeline}${cluster === null ? '' : ` in cluster ${cluster}`}${change.since_last_run ? ' since pgvigil last ran' : ''}`,
    tsMs,
    details: { cluster, ...change },
  };
}
