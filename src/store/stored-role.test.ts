import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { silentLogger } from '../lib/logger.js';
import { openStore } from './open-store.js';
import { StoreWriter } from './store-writer.js';
import { storedInRecovery } from './stored-role.js';

describe('storedInRecovery', () => {
  it('is the newest pg_in_recovery sample of the target, or null when none is stored', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(0), silentLogger());
    const sample = (target: string, tsMs: number, value: number | null) => ({ target, name: 'pg_in_recovery', labels: {}, tsMs, value });
    expect(storedInRecovery(db, 'replica')).toBeNull();
    writer.enqueue({ samples: [sample('replica', 2_000, 0), sample('replica', 1_000, 1), sample('other', 3_000, 1)] });
    expect(writer.flush()).toBe(true);
    expect(storedInRecovery(db, 'replica')).toBe(false);
    expect(storedInRecovery(db, 'other')).toBe(true);
    writer.enqueue({ samples: [sample('replica', 4_000, null)] });
    expect(writer.flush()).toBe(true);
    expect(storedInRecovery(db, 'replica')).toBeNull();
    expect(storedInRecovery(db, 'nobody')).toBeNull();
  });
});
