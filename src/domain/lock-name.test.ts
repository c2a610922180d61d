import { describe, expect, it } from 'vitest';
import { parseLockObject } from '../parsers/classify/lock-object.js';
import { lockObjectName, resolvedLockName } from './lock-name.js';

describe('lockObjectName', () => {
  const relation = parseLockObject('relation 16394 of database 5');

  it('is the printed description when nothing was resolved (offline analyze)', () => {
    expect(lockObjectName(relation)).toBe('relation 16394 of database 5');
    expect(resolvedLockName(relation)).toBeNull();
  });

  it('puts database.schema.table first and keeps the OIDs beside it', () => {
    const named = { ...relation, database_name: 'appdb', relation_name: 'public.orders' };
    expect(lockObjectName(named)).toBe('appdb.public.orders (relation 16394 of database 5)');
    expect(resolvedLockName(named)).toBe('appdb.public.orders');
  });

  it('names the database alone when the relation is not known yet', () => {
    const tuple = { ...parseLockObject('tuple (3,7) of relation 16394 of database 5'), database_name: 'appdb' };
    expect(lockObjectName(tuple)).toBe('appdb (tuple (3,7) of relation 16394 of database 5)');
  });

  it('falls back to the type when PostgreSQL printed nothing', () => {
    expect(lockObjectName({ ...parseLockObject(''), type: 'unknown' })).toBe('unknown');
  });
});
