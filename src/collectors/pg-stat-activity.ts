/**
 * pg_stat_activity by who is connected: client backends counted per database, user and
 * application, with how many of them are idle in a transaction and the longest such wait. One row
 * per identity, never per session, so the series last as long as the application does and no pid
 * reaches a label; a server with thousands of connections still has a few dozen identities.
 *
 * Every client backend counts, pgvigil's own connections included (they take slots like any
 * other); pgvigil never idles in a transaction. The identities past the largest
 * `MAX_IDENTITIES` are summed into `_connections_omitted`, not dropped silently.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, num, requiredNum } from './row.js';

/** Identities kept, by connection count; the idle-in-transaction ones come first whatever their count. */
export const MAX_IDENTITIES = 50;

// 'idle in transaction (aborted)' holds its locks too, until the client rolls back.
export const ACTIVITY_SQL = `
SELECT coalesce(a.datname, '') AS datname, coalesce(a.usename, '') AS usename, a.application_name,
  count(*)::int AS connections,
  count(*) FILTER (WHERE a.state LIKE 'idle in transaction%')::int AS idle_in_transaction,
  max(extract(epoch FROM now() - a.state_change)) FILTER (WHERE a.state LIKE 'idle in transaction%')::float8 AS idle_in_transaction_max_seconds
FROM pg_stat_activity a
WHERE a.backend_type = 'client backend'
GROUP BY 1, 2, 3`;

const P = 'pg_stat_activity';
export const ACTIVITY_METRICS = metricDefs(P, {
  connections: gauge('Client backends of one database, user and application.'),
  idle_in_transaction: gauge('Of those, sessions idle in a transaction (aborted or not): they keep their locks.'),
  idle_in_transaction_max_seconds: gauge('The longest of those idle waits so far, by the server\'s clock (NULL: none idle in a transaction).'),
  connections_omitted: gauge(`Client backends of the identities past the largest ${MAX_IDENTITIES}, summed.`),
});

/** Pure: rows of ACTIVITY_SQL -> samples; the largest identities kept, the rest summed. */
export function mapActivity(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const M = ACTIVITY_METRICS;
  const identities = rows.map((row) => ({
    labels: { datname: label(row, 'datname'), usename: label(row, 'usename'), application_name: label(row, 'application_name') },
    connections: requiredNum(row, 'connections'),
    idle: requiredNum(row, 'idle_in_transaction'),
    idleMaxSeconds: num(row, 'idle_in_transaction_max_seconds'),
  })).sort((a, b) => Number(b.idle > 0) - Number(a.idle > 0) || b.connections - a.connections);
  for (const i of identities.slice(0, MAX_IDENTITIES)) {
    b.add(M.connections, i.labels, i.connections);
    b.add(M.idle_in_transaction, i.labels, i.idle);
    b.add(M.idle_in_transaction_max_seconds, i.labels, i.idleMaxSeconds);
  }
  b.add(M.connections_omitted, {}, identities.slice(MAX_IDENTITIES).reduce((sum, i) => sum + i.connections, 0));
  return b.samples;
}

export function pgStatActivityCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({ name: P, scope: 'server', intervalMs: 15_000, metrics: Object.values(ACTIVITY_METRICS), sql: () => ACTIVITY_SQL, map: mapActivity }, options);
}
