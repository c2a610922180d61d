import { describe, expect, it } from 'vitest';
import { lockFromContext, parseLockObject } from './lock-object.js';

// DescribeLockTag() texts, pg-messages.md §3.4.
describe('parseLockObject', () => {
  it.each([
    ['relation 16402 of database 16384', { type: 'relation', relation_oid: 16402, database_oid: 16384 }],
    ['extension of relation 16402 of database 16384', { type: 'extend', relation_oid: 16402, database_oid: 16384 }],
    ['pg_database.datfrozenxid of database 16384', { type: 'frozenid', database_oid: 16384 }],
    ['page 12 of relation 16402 of database 16384', { type: 'page', block: 12, relation_oid: 16402, database_oid: 16384 }],
    ['tuple (12,7) of relation 16402 of database 16384', { type: 'tuple', block: 12, offset: 7, relation_oid: 16402 }],
    ['transaction 1873501', { type: 'transactionid', transaction_id: 1873501 }],
    ['virtual transaction 5/1234', { type: 'virtualxid', virtual_transaction: '5/1234' }],
    ['speculative token 3 of transaction 1873501', { type: 'spectoken', keys: [3], transaction_id: 1873501 }],
    ['object 16500 of class 1262 of database 0', { type: 'object', object_id: 16500, class_oid: 1262, database_oid: 0 }],
    ['user lock [1,2,3]', { type: 'userlock', keys: [1, 2, 3] }],
    ['advisory lock [16384,16185446,2147483647,1]', { type: 'advisory', keys: [16384, 16185446, 2147483647, 1] }],
    ['remote transaction 900 of subscription 16600 of database 16384', { type: 'applytransaction', transaction_id: 900, subscription_oid: 16600 }],
    ['unrecognized locktag type 42', { type: 'unknown', relation_oid: null, database_oid: null }],
  ])('%s', (description, expected) => {
    expect(parseLockObject(description)).toMatchObject({ ...expected, description });
  });

  it('leaves the fields a type lacks null', () => {
    expect(parseLockObject('transaction 7')).toEqual({
      type: 'transactionid', description: 'transaction 7', relation_oid: null, database_oid: null, block: null, offset: null,
      transaction_id: 7, virtual_transaction: null, class_oid: null, object_id: null, subscription_oid: null, keys: null,
    });
  });
});

describe('lockFromContext (PG 19+)', () => {
  it('finds `waiting for` on any line of a CONTEXT', () => {
    expect(lockFromContext('while updating tuple (12,7) in relation "orders"\nwaiting for ShareLock on transaction 1873501')).toMatchObject({
      lock_mode: 'ShareLock', lock_object: { type: 'transactionid', transaction_id: 1873501 },
    });
  });

  it('is null without one', () => {
    expect(lockFromContext(null)).toBeNull();
    expect(lockFromContext('while updating tuple (12,7) in relation "orders"')).toBeNull();
  });
});
