import { describe, expect, it } from 'vitest';
import { createCollectors } from '../collectors/index.js';
import { DESCRIPTIVE_LABELS, splitLabels } from './series-identity.js';

describe('DESCRIPTIVE_LABELS', () => {
  it('names only series some collector emits', () => {
    const emitted = new Set(createCollectors().flatMap((c) => c.metrics.map((m) => m.name)));
    expect([...DESCRIPTIVE_LABELS.keys()].filter((name) => !emitted.has(name))).toEqual([]);
  });
});

describe('splitLabels', () => {
  it('moves the descriptive labels of a name to info and keeps the rest as identity', () => {
    expect(splitLabels('pg_lock_waits_session_wait_seconds', { pid: '7', query: 'LOCK t', blocking_pids: '3', mode: 'RowExclusiveLock' }))
      .toEqual({ identity: { pid: '7', mode: 'RowExclusiveLock' }, info: { query: 'LOCK t', blocking_pids: '3' } });
    expect(splitLabels('pg_lock_waits_session_wait_seconds', { pid: '7' })).toEqual({ identity: { pid: '7' }, info: null });
    expect(splitLabels('pg_up', { query: 'x' })).toEqual({ identity: { query: 'x' }, info: null });
  });
});
