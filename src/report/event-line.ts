/**
 * One line per notable event for the report's timeline: what a DBA wants from each kind
 * (autovacuum's elapsed, dead rows it could not remove and its cutoff; the reason of a recovery
 * conflict; the lock a session waited for or gave up on), then the log message's first line.
 * Pure.
 */
import type { AnyLogEvent } from '../domain/index.js';
import { lockObjectName } from '../domain/index.js';

export function eventLine(event: AnyLogEvent): string {
  const where = [event.database, event.pid === null ? null : `pid ${event.pid}`].filter(Boolean).join(' ');
  const facts = kindFacts(event);
  const firstLine = event.message.split('\n', 1)[0]!;
  return `${where ? `[${where}] ` : ''}${facts ? `${facts} | ` : ''}${event.level}: ${firstLine}`;
}

function kindFacts(event: AnyLogEvent): string | null {
  switch (event.kind) {
    case 'autovacuum': {
      const d = event.details;
      const parts = [
        `${d.database}.${d.schema}.${d.table}`,
        d.elapsed_s === null ? null : `elapsed ${d.elapsed_s} s`,
        d.tuples_dead_not_removable === null ? null : `${d.tuples_dead_not_removable} dead not removable`,
        d.removable_cutoff_xid === null ? null : `removable cutoff ${d.removable_cutoff_xid}${d.removable_cutoff_age_xids === null ? '' : ` (${d.removable_cutoff_age_xids} xids old)`}`,
        d.parallel_workers_planned === null ? null : `parallel workers ${d.parallel_workers_launched ?? '?'} launched of ${d.parallel_workers_planned} planned`,
      ];
      return `autovacuum ${parts.filter(Boolean).join(', ')}`;
    }
    case 'recovery_conflict':
      return `recovery conflict, reason ${event.details.reason ?? 'unknown'}${event.details.fatal ? ' (session ended)' : ''}`;
    case 'recovery_conflict_wait':
      return `recovery ${event.details.phase} on a conflict, reason ${event.details.reason ?? 'unknown'}${waited(event.details.wait_ms)}`;
    case 'lock_wait':
      return `lock wait ${event.details.phase}: pid ${event.details.waiting_pid} ${event.details.lock_mode} on ${lockObjectName(event.details.lock_object)}${waited(event.details.wait_ms)}${event.details.holder_pids?.length ? `, held by ${event.details.holder_pids.join(', ')}` : ''}`;
    case 'lock_timeout':
      return `lock timeout${event.details.lock_mode ? `: ${event.details.lock_mode}` : ''}${event.details.lock_object ? ` on ${lockObjectName(event.details.lock_object)}` : ''}${event.details.statement ? ` in ${oneLine(event.details.statement)}` : ''}`;
    case 'server_crash':
      return `crash: ${event.details.process_type} pid ${event.details.pid}${event.details.signal_name ? ` killed by signal ${event.details.signal ?? '?'} (${event.details.signal_name})` : ''}${event.details.exit_code === null ? '' : ` exit code ${event.details.exit_code}`}`;
    case 'checkpoint':
      return `checkpoint ${event.details.phase}${event.details.total_s === null ? '' : `, ${event.details.total_s} s`}${event.details.reasons?.length ? ` (${event.details.reasons.join(', ')})` : ''}`;
    case 'ddl':
      return `${event.details.command}${event.details.concurrently ? ' CONCURRENTLY' : ''}${event.details.relations.length ? ` ${event.details.relations.join(', ')}` : ''}`;
    case 'data_corruption':
      return event.details.problem === 'checksum_mismatch'
        ? `checksum mismatch: calculated ${event.details.calculated_checksum ?? '?'}, expected ${event.details.expected_checksum ?? '?'}`
        : `invalid page: block ${event.details.block ?? '?'} of ${event.details.relation_path ?? '?'}${event.details.zeroed ? ' (zeroed)' : ''}`;
    case 'slot_invalidated':
      return `slot ${event.details.slot} ${event.details.phase}${event.details.reason ? `, reason ${event.details.reason}` : ''}`;
    default:
      return null;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function waited(waitMs: number | null): string {
  return waitMs === null ? '' : ` after ${(waitMs / 1_000).toFixed(1)} s`;
}
