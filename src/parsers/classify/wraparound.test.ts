import { describe, expect, it } from 'vitest';
import type { WraparoundWarningDetails } from '../../domain/index.js';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 05:10:00.010 UTC [3001] app@shop ';

// Message texts as varsup.c and multixact.c print them (PostgreSQL 13-19 sources).
describe('wraparound_warning', () => {
  it.each<[string, Partial<WraparoundWarningDetails>]>([
    ['WARNING:  database "shop" must be vacuumed within 39999868 transactions',
      { counter: 'xid', datname: 'shop', database_oid: null, remaining: 39_999_868, refusing: false }],
    ['WARNING:  database with OID 16401 must be vacuumed within 177 transactions',
      { counter: 'xid', datname: null, database_oid: 16401, remaining: 177 }],
    ['WARNING:  database "billing" must be vacuumed before 9999999 more MultiXactIds are used',
      { counter: 'multixact', datname: 'billing', remaining: 9_999_999 }],
    ['WARNING:  database "billing" must be vacuumed before 1 more MultiXactId is used',
      { counter: 'multixact', datname: 'billing', remaining: 1 }],
    ['WARNING:  database with OID 16401 must be vacuumed before 9216 more multixact members are used',
      { counter: 'multixact_member', datname: null, database_oid: 16401, remaining: 9216, refusing: false }],
    ['WARNING:  database with OID 5 must be vacuumed before 1 more multixact member is used',
      { counter: 'multixact_member', database_oid: 5, remaining: 1 }],
    ['ERROR:  database is not accepting commands that assign new transaction IDs to avoid wraparound data loss in database "shop"',
      { counter: 'xid', datname: 'shop', remaining: null, refusing: true }],
    ['ERROR:  database is not accepting commands to avoid wraparound data loss in database "shop"',
      { counter: 'xid', datname: 'shop', refusing: true }],
    ['ERROR:  database is not accepting commands that generate new MultiXactIds to avoid wraparound data loss in database with OID 16401',
      { counter: 'multixact', datname: null, database_oid: 16401, refusing: true }],
  ])('%s', (line, expected) => {
    const event = classifyEntry(stderrEntry(`${AT}${line}`), 't1');
    expect(detailsOf(event, 'wraparound_warning')).toMatchObject(expected);
  });

  it('keeps the session\'s database on the event: the one to vacuum is in the details', () => {
    const event = classifyEntry(stderrEntry(`${AT}WARNING:  database "billing" must be vacuumed within 5 transactions`), 't1');
    expect(event.database).toBe('shop');
  });

  it('leaves other "database ..." messages alone', () => {
    for (const line of ['FATAL:  database "nope" does not exist', 'LOG:  database system is ready to accept connections']) {
      expect(classifyEntry(stderrEntry(`${AT}${line}`), 't1').kind).not.toBe('wraparound_warning');
    }
  });
});
