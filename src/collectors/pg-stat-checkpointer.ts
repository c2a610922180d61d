/**
 * Checkpoints: pg_stat_checkpointer from PG 17; before that the same counters lived in
 * pg_stat_bgwriter under older names. Both are exported under pg_stat_checkpointer's names so a
 * series continues across an upgrade; the background writer's own counters follow.
 */
import type { Collector, CollectorOptions } from './collector.js';
import { viewCollector, type ViewColumn, type ViewSpec } from './view-collector.js';

// PG 17+: pg_stat_checkpointer; 13-16: the pg_stat_bgwriter column named second.
const renamed = (column: string, before17: string, rest: Omit<ViewColumn, 'column' | 'expr'>): ViewColumn => ({
  column,
  ...rest,
  expr: (major) => (major >= 17 ? `c.${column}` : `b.${before17}`),
});

export const PG_STAT_CHECKPOINTER: ViewSpec = {
  name: 'pg_stat_checkpointer',
  scope: 'server',
  intervalMs: 15_000,
  from: (major) => (major >= 17 ? 'pg_stat_checkpointer c CROSS JOIN pg_stat_bgwriter b' : 'pg_stat_bgwriter b'),
  labels: [],
  columns: [
    renamed('num_timed', 'checkpoints_timed', { type: 'counter', help: 'Scheduled checkpoints (13-16: checkpoints_timed).' }),
    renamed('num_requested', 'checkpoints_req', { type: 'counter', help: 'Requested checkpoints (13-16: checkpoints_req).' }),
    { column: 'num_done', type: 'counter', since: 18, expr: () => 'c.num_done', help: 'Checkpoints completed (PG 18+).' },
    { column: 'restartpoints_timed', type: 'counter', since: 17, expr: () => 'c.restartpoints_timed', help: 'Scheduled restartpoints (PG 17+).' },
    { column: 'restartpoints_req', type: 'counter', since: 17, expr: () => 'c.restartpoints_req', help: 'Requested restartpoints (PG 17+).' },
    { column: 'restartpoints_done', type: 'counter', since: 17, expr: () => 'c.restartpoints_done', help: 'Restartpoints completed (PG 17+).' },
    renamed('write_time', 'checkpoint_write_time', { type: 'counter', unit: 'ms', help: 'Time writing checkpoint files.' }),
    renamed('sync_time', 'checkpoint_sync_time', { type: 'counter', unit: 'ms', help: 'Time syncing checkpoint files.' }),
    renamed('buffers_written', 'buffers_checkpoint', { type: 'counter', help: 'Buffers written by checkpoints (13-16: buffers_checkpoint).' }),
    { column: 'slru_written', type: 'counter', since: 18, expr: () => 'c.slru_written', help: 'SLRU buffers written by checkpoints (PG 18+).' },
    { column: 'buffers_clean', type: 'counter', expr: () => 'b.buffers_clean', help: 'Buffers written by the background writer.' },
    { column: 'maxwritten_clean', type: 'counter', expr: () => 'b.maxwritten_clean', help: 'Background writer stops for writing too many buffers.' },
    { column: 'buffers_alloc', type: 'counter', expr: () => 'b.buffers_alloc', help: 'Buffers allocated.' },
    // PG 13-16 only: gone in 17 (see pg_stat_io)
    { column: 'buffers_backend', type: 'counter', until: 16, expr: () => 'b.buffers_backend', help: 'Buffers written by backends (PG 13-16).' },
    { column: 'buffers_backend_fsync', type: 'counter', until: 16, expr: () => 'b.buffers_backend_fsync', help: 'Backend fsync calls (PG 13-16).' },
  ],
};

export function pgStatCheckpointerCollector(options: CollectorOptions = {}): Collector {
  return viewCollector(PG_STAT_CHECKPOINTER, options);
}
