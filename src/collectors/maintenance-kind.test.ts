import { describe, expect, it } from 'vitest';
import { classifyMaintenance, type ActivityFacts } from './maintenance-kind.js';

const client = (query: string): ActivityFacts => ({ backendType: 'client backend', applicationName: 'psql', query });

describe('classifyMaintenance', () => {
  it.each([
    ['REPACK (CONCURRENTLY) orders', 'repack_concurrently'],
    ['repack (verbose, concurrently true) orders', 'repack_concurrently'],
    ['REPACK (CONCURRENTLY false) orders', 'repack'],
    ['REPACK orders USING INDEX orders_pkey', 'repack'],
    ['/* nightly */ -- job 7\n REPACK (CONCURRENTLY) t', 'repack_concurrently'],
    ['VACUUM FULL orders', 'vacuum_full'],
    ['vacuum (full, verbose) orders', 'vacuum_full'],
    ['VACUUM (FULL off) orders', null],
    ['VACUUM (VERBOSE) full_history', null],
    ['VACUUM full_history', null],
    ['VACUUM ANALYZE orders', null],
    ['CLUSTER orders USING orders_pkey', 'cluster'],
    ['SELECT * FROM repack_queue', null],
    ['autovacuum: VACUUM public.orders', null],
  ] as const)('%j', (query, kind) => {
    expect(classifyMaintenance(client(query))).toBe(kind);
  });

  it('knows REPACK\'s decoding worker, pg_squeeze\'s worker and the pg_repack client by who they are', () => {
    expect(classifyMaintenance({ backendType: 'REPACK decoding worker', applicationName: '', query: '' })).toBe('repack_decoding_worker');
    expect(classifyMaintenance({ backendType: 'squeeze worker', applicationName: '', query: null })).toBe('pg_squeeze_worker');
    expect(classifyMaintenance({ backendType: 'client backend', applicationName: 'pg_repack', query: 'SELECT repack.repack_apply($1)' })).toBe('pg_repack');
  });
});
