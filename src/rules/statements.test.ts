import { describe, expect, it } from 'vitest';
import { tableCommandOf } from './statements.js';

describe('tableCommandOf', () => {
  const cases: Array<[string, { command: string; relation: string | null; concurrently?: boolean } | null]> = [
    ['DROP TABLE build_logs;', { command: 'DROP TABLE', relation: 'build_logs' }],
    ['drop table if exists "Build Logs", other', { command: 'DROP TABLE', relation: 'Build Logs' }],
    ['DROP TABLE ci.public.build_logs', { command: 'DROP TABLE', relation: 'ci.public.build_logs' }],
    ['TRUNCATE TABLE ONLY archive.logs', { command: 'TRUNCATE', relation: 'archive.logs' }],
    ['truncate logs', { command: 'TRUNCATE', relation: 'logs' }],
    ['ALTER TABLE orders ADD COLUMN x int', { command: 'ALTER TABLE', relation: 'orders' }],
    ['/* migration 42 */ -- step 1\n  ALTER TABLE IF EXISTS ONLY Orders DROP COLUMN y', { command: 'ALTER TABLE', relation: 'orders' }],
    ['LOCK TABLE orders IN ACCESS EXCLUSIVE MODE', { command: 'LOCK TABLE', relation: 'orders' }],
    ['REPACK (CONCURRENTLY) orders;', { command: 'REPACK', relation: 'orders', concurrently: true }],
    ['repack (verbose, concurrently true) public.orders using index orders_pkey', { command: 'REPACK', relation: 'public.orders', concurrently: true }],
    ['REPACK (CONCURRENTLY false) orders', { command: 'REPACK', relation: 'orders', concurrently: false }],
    ['REPACK orders', { command: 'REPACK', relation: 'orders', concurrently: false }],
    ['REPACK USING INDEX', { command: 'REPACK', relation: null, concurrently: false }],
    ['REPACK', { command: 'REPACK', relation: null, concurrently: false }],
    ['VACUUM FULL VERBOSE orders', { command: 'VACUUM FULL', relation: 'orders' }],
    ['VACUUM (FULL, ANALYZE) orders', { command: 'VACUUM FULL', relation: 'orders' }],
    ['CLUSTER VERBOSE orders USING orders_pkey', { command: 'CLUSTER', relation: 'orders' }],
    ['VACUUM orders', null],
    ['SELECT * FROM orders', null],
    ['UPDATE orders SET x = 1', null],
    ['DROP INDEX CONCURRENTLY IF EXISTS orders_idx', { command: 'DROP INDEX', relation: 'orders_idx' }],
    ['CREATE INDEX orders_kind ON orders (kind)', { command: 'CREATE INDEX', relation: 'orders' }],
    ['create unique index if not exists orders_ref on only public.orders using btree (ref)', { command: 'CREATE INDEX', relation: 'public.orders' }],
    ['CREATE INDEX ON orders (kind)', { command: 'CREATE INDEX', relation: 'orders' }],
    ['CREATE TRIGGER audit AFTER INSERT OR UPDATE OF amount ON ledger.entries FOR EACH ROW EXECUTE FUNCTION audit()', { command: 'CREATE TRIGGER', relation: 'ledger.entries' }],
    ['REFRESH MATERIALIZED VIEW CONCURRENTLY daily_totals', { command: 'REFRESH MATERIALIZED VIEW', relation: 'daily_totals' }],
  ];
  for (const [sql, expected] of cases) {
    it(sql.replace(/\s+/g, ' '), () => {
      const got = tableCommandOf(sql);
      if (expected === null) expect(got).toBeNull();
      else expect(got).toEqual({ concurrently: false, ...expected });
    });
  }

  it('returns null without a statement', () => expect(tableCommandOf(null)).toBeNull());
});
