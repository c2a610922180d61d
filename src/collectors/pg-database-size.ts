/**
 * pg_database_size of every database, connectable or not, on a slow interval of its own (5 min):
 * the function stat()s every file of the database (every fork and segment of every table and
 * index), so its cost grows with the number of relations, not with anything that changes fast —
 * 32 ms for 13 databases holding 5,000 tables on the bench machine, more than a whole poll cycle
 * of everything else. Database sizes move slowly; five minutes is plenty for a disk-growth chart.
 */
import type { Collector, CollectorOptions } from './collector.js';
import { viewCollector, type ViewSpec } from './view-collector.js';

export const PG_DATABASE_SIZE: ViewSpec = {
  name: 'pg_database_size',
  scope: 'server',
  intervalMs: 300_000,
  // Rare, and every file of the cluster on a cold cache: room to finish rather than no value.
  timeoutMs: 30_000,
  from: () => 'pg_database',
  labels: ['datname'],
  columns: [
    { column: 'bytes', type: 'gauge', expr: () => 'pg_database_size(oid)', help: 'pg_database_size: all files of the database (read every 5 minutes).' },
  ],
};

export function pgDatabaseSizeCollector(options: CollectorOptions = {}): Collector {
  return viewCollector(PG_DATABASE_SIZE, options);
}
