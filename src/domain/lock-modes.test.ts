import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOCK_MODES, lockModesConflict } from './lock-modes.js';

describe('lock mode conflicts', () => {
  it('is symmetric, as PostgreSQL\'s table is', () => {
    fc.assert(fc.property(fc.constantFrom(...LOCK_MODES), fc.constantFrom(...LOCK_MODES), (a, b) => lockModesConflict(a, b) === lockModesConflict(b, a)));
  });

  it('lets readers past a queued CREATE INDEX (ShareLock) but not writers', () => {
    expect(lockModesConflict('ShareLock', 'AccessShareLock')).toBe(false);
    expect(lockModesConflict('ShareLock', 'RowExclusiveLock')).toBe(true);
    expect(lockModesConflict('ShareLock', 'ShareLock')).toBe(false);
  });

  it('blocks every mode behind ACCESS EXCLUSIVE, and nothing for an unknown mode', () => {
    expect(LOCK_MODES.every((m) => lockModesConflict('AccessExclusiveLock', m))).toBe(true);
    expect(lockModesConflict('SIReadLock', 'AccessExclusiveLock')).toBe(false);
  });
});
