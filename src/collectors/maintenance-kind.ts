/**
 * What kind of table maintenance a pg_stat_activity row is running, from its backend type,
 * application_name and query text. Pure.
 *
 * REPACK (PG 19) and its CONCURRENTLY form, VACUUM FULL and CLUSTER rewrite a table; PG 19's
 * REPACK (CONCURRENTLY) also runs a `REPACK decoding worker` whose leader_pid is the session; the
 * pg_repack extension's client connects with application_name `pg_repack` (pg-messages.md §9).
 */

export type MaintenanceKind =
  | 'repack_concurrently'
  | 'repack'
  | 'repack_decoding_worker'
  | 'vacuum_full'
  | 'cluster'
  | 'pg_repack'
  | 'pg_squeeze_worker';

export interface ActivityFacts {
  backendType: string | null;
  applicationName: string | null;
  query: string | null;
}

// Leading comments and whitespace are skipped; options may be parenthesised.
const LEADING = /^(?:\s+|--[^\n]*\n|\/\*[\s\S]*?\*\/)*/;

export function classifyMaintenance(activity: ActivityFacts): MaintenanceKind | null {
  if (activity.backendType === 'REPACK decoding worker') return 'repack_decoding_worker';
  if (activity.backendType === 'squeeze worker') return 'pg_squeeze_worker';
  if (activity.applicationName === 'pg_repack') return 'pg_repack';
  const query = (activity.query ?? '').replace(LEADING, '');
  const repack = /^repack\b\s*(?:\(([^)]*)\))?/i.exec(query);
  if (repack) return optionOn(repack[1], 'concurrently') ? 'repack_concurrently' : 'repack';
  const vacuum = /^vacuum\b\s*(?:\(([^)]*)\))?/i.exec(query);
  // The unparenthesised form takes FULL only as its first word.
  if (vacuum) return optionOn(vacuum[1], 'full') || /^vacuum\s+full\b/i.test(query) ? 'vacuum_full' : null;
  if (/^cluster\b/i.test(query)) return 'cluster';
  return null;
}

/** `(CONCURRENTLY)`, `(CONCURRENTLY true)`, but not `(CONCURRENTLY false)`. */
function optionOn(options: string | undefined, name: string): boolean {
  if (options === undefined) return false;
  return new RegExp(`\\b${name}\\b(?!\\s+(false|off|0)\\b)`, 'i').test(options);
}
