import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../domain/index.js';
import { parseModeOn } from '../parsers/classify/lock-object.js';
import { lockWaitDetails } from '../rules/test-events.js';
import { eventLine } from './event-line.js';

function lockWait(names: { database_name?: string; relation_name?: string }): AnyLogEvent {
  const { lock_mode, lock_object } = parseModeOn('AccessExclusiveLock on relation 16394 of database 5')!;
  return {
    kind: 'lock_wait', target: 'primary', tsMs: 0, pid: 4242, database: 'appdb', user: 'app', level: 'LOG', sqlstate: null,
    message: 'process 4242 still waiting for AccessExclusiveLock on relation 16394 of database 5 after 1000.0 ms',
    details: lockWaitDetails({ waiting_pid: 4242, lock_mode, lock_object: { ...lock_object, ...names }, wait_ms: 1000, holder_pids: [4100] }),
    source: { file: 'postgresql.log', offset: 0, line: null },
  };
}

describe('eventLine: locks', () => {
  it('prints the OIDs as logged when nothing resolved them (offline)', () => {
    expect(eventLine(lockWait({}))).toBe('[appdb pid 4242] lock wait waiting: pid 4242 AccessExclusiveLock on relation 16394 of database 5 ' +
      'after 1.0 s, held by 4100 | LOG: process 4242 still waiting for AccessExclusiveLock on relation 16394 of database 5 after 1000.0 ms');
  });

  it('prints database.schema.table first when the daemon named them, the OIDs beside', () => {
    expect(eventLine(lockWait({ database_name: 'appdb', relation_name: 'public.orders' })))
      .toMatch(/^\[appdb pid 4242\] lock wait waiting: pid 4242 AccessExclusiveLock on appdb\.public\.orders \(relation 16394 of database 5\) after 1\.0 s,/);
  });
});
