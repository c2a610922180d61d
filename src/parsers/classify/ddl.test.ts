import { describe, expect, it } from 'vitest';
import type { DdlDetails } from '../../domain/index.js';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 08:00:00.000 UTC [71000] dba@shop LOG:  ';

describe('ddl (log_statement, §6.2)', () => {
  it.each<[string, Partial<DdlDetails>]>([
    ['statement: DROP TABLE orders;', { command: 'DROP TABLE', relation: 'orders', relations: ['orders'], concurrently: false }],
    ['statement: drop table if exists public.orders, "Audit"."Log 2026" cascade', { command: 'DROP TABLE', relation: 'public.orders', relations: ['public.orders', 'Audit.Log 2026'] }],
    ['statement: TRUNCATE TABLE ONLY orders RESTART IDENTITY', { command: 'TRUNCATE', relations: ['orders'] }],
    ['statement: truncate a, b*', { command: 'TRUNCATE', relations: ['a', 'b'] }],
    ['statement: REPACK (CONCURRENTLY) orders;', { command: 'REPACK', relation: 'orders', concurrently: true }],
    ['statement: REPACK (VERBOSE, CONCURRENTLY false) Shop.Orders USING INDEX orders_pkey', { command: 'REPACK', relation: 'shop.orders', concurrently: false }],
    ['statement: REPACK USING INDEX', { command: 'REPACK', relation: null, relations: [] }],
    ['statement: VACUUM FULL VERBOSE orders', { command: 'VACUUM FULL', relation: 'orders' }],
    ['statement: vacuum (full, analyze) orders (id, total)', { command: 'VACUUM FULL', relations: ['orders'] }],
    ['statement: VACUUM FULL', { command: 'VACUUM FULL', relation: null }],
    ['statement: CLUSTER VERBOSE orders USING orders_pkey', { command: 'CLUSTER', relation: 'orders' }],
    ['statement: CLUSTER', { command: 'CLUSTER', relation: null }],
    ['statement: /* migration 42 */\n\t  DROP TABLE legacy_events', { command: 'DROP TABLE', relation: 'legacy_events' }],
    ['statement: \n\tTRUNCATE staging', { command: 'TRUNCATE', relation: 'staging' }],
    ['execute <unnamed>: DROP TABLE t1', { command: 'DROP TABLE', relation: 't1' }],
  ])('%s', (message, expected) => {
    expect(detailsOf(classifyEntry(stderrEntry(AT + message), 't1'), 'ddl')).toMatchObject(expected);
  });

  it.each([
    'statement: SELECT * FROM orders',
    'statement: VACUUM orders',
    'statement: VACUUM (FULL false) orders',
    'statement: DROP INDEX orders_idx',
    'statement: CREATE TABLE t (id int)',
    'statement: COMMIT',
    'duration: 1532.114 ms  statement: DROP TABLE orders;',
    'execute <unnamed>: SELECT * FROM orders WHERE id = $1',
  ])('leaves %s generic', (message) => {
    expect(classifyEntry(stderrEntry(AT + message), 't1').kind).toBe('generic');
  });
});
