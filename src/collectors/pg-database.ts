/**
 * pg_database: how close each database is to transaction ID and multixact wraparound
 * (age(datfrozenxid), mxid_age(datminmxid)). Every database, connectable or not: template0 ages
 * too. Sizes are pg_database_size.ts's, on a slower interval: they stat() every file.
 */
import type { Collector, CollectorOptions } from './collector.js';
import { viewCollector, type ViewSpec } from './view-collector.js';

export const PG_DATABASE: ViewSpec = {
  name: 'pg_database',
  scope: 'server',
  intervalMs: 60_000,
  from: () => 'pg_database',
  labels: ['datname'],
  columns: [
    { column: 'datfrozenxid_age_xids', type: 'gauge', expr: () => 'age(datfrozenxid)', help: 'age(datfrozenxid): XIDs since the oldest unfrozen XID (wraparound at ~2^31).' },
    { column: 'datminmxid_age_mxids', type: 'gauge', expr: () => 'mxid_age(datminmxid)', help: 'mxid_age(datminmxid): multixacts since the oldest unfrozen one.' },
    { column: 'datconnlimit', type: 'gauge', help: 'Connection limit (-1: none).' },
  ],
};

export function pgDatabaseCollector(options: CollectorOptions = {}): Collector {
  return viewCollector(PG_DATABASE, options);
}
