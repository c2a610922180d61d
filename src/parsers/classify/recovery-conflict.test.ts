import { describe, expect, it } from 'vitest';
import type { RecoveryConflictReason } from '../../domain/index.js';
import { detailsOf, stderrEntries, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 03:20:01.456 UTC [52311] report@shop ';

describe('recovery_conflict: the victim backend (§2.1)', () => {
  it('reads the §2.1 example: a cancelled statement, reason snapshot', () => {
    const text = [
      `${AT}ERROR:  canceling statement due to conflict with recovery`,
      `${AT}DETAIL:  User query might have needed to see row versions that must be removed.`,
      `${AT}STATEMENT:  SELECT count(*) FROM orders WHERE created_at > now() - interval '1 day';`,
    ].join('\n');
    const event = classifyEntry(stderrEntry(text), 'standby1');
    expect(detailsOf(event, 'recovery_conflict')).toEqual({
      reason: 'snapshot',
      fatal: false,
      detail: 'User query might have needed to see row versions that must be removed.',
      pid: 52311,
      database: 'shop',
      user: 'report',
      statement: "SELECT count(*) FROM orders WHERE created_at > now() - interval '1 day';",
    });
  });

  it.each<[string, RecoveryConflictReason]>([
    ['User was holding shared buffer pin for too long.', 'bufferpin'],
    ['User was holding a relation lock for too long.', 'lock'],
    ['User was or might have been using tablespace that must be dropped.', 'tablespace'],
    ['User query might have needed to see row versions that must be removed.', 'snapshot'],
    ['User was using a logical replication slot that must be invalidated.', 'logical_slot'],
    ['User transaction caused buffer deadlock with recovery.', 'startup_deadlock'],
    ['User transaction caused deadlock with recovery.', 'deadlock'],
    ['User was connected to a database that must be dropped.', 'database'],
  ])('DETAIL %j -> %s', (detail, reason) => {
    const text = `${AT}ERROR:  canceling statement due to conflict with recovery\n${AT}DETAIL:  ${detail}`;
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'recovery_conflict').reason).toBe(reason);
  });

  it('marks a terminated connection as fatal (the HINT is optional)', () => {
    const text = [
      `${AT}FATAL:  terminating connection due to conflict with recovery`,
      `${AT}DETAIL:  User was holding a relation lock for too long.`,
      `${AT}HINT:  In a moment you should be able to reconnect to the database and repeat your command.`,
    ].join('\n');
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'recovery_conflict')).toMatchObject({ reason: 'lock', fatal: true, statement: null });
  });

  it('leaves the reason null without a DETAIL or with one no version prints', () => {
    const bare = `${AT}FATAL:  terminating connection due to conflict with recovery`;
    const odd = `${bare}\n${AT}DETAIL:  Something else entirely.`;
    expect(detailsOf(classifyEntry(stderrEntry(bare), 't1'), 'recovery_conflict').reason).toBeNull();
    expect(detailsOf(classifyEntry(stderrEntry(odd), 't1'), 'recovery_conflict')).toMatchObject({ reason: null, detail: 'Something else entirely.' });
  });
});

describe('recovery_conflict_wait: log_recovery_conflict_waits (§2.2, 14+)', () => {
  it('reads the §2.2 example: still waiting, then finished', () => {
    const [waiting, finished] = stderrEntries([
      '2026-10-14 03:19:31.402 UTC [4011] LOG:  recovery still waiting after 1000.123 ms: recovery conflict on snapshot',
      '2026-10-14 03:19:31.402 UTC [4011] DETAIL:  Conflicting process: 52311.',
      '2026-10-14 03:19:31.402 UTC [4011] CONTEXT:  WAL redo at 3/5A0012F8 for Heap2/PRUNE_VACUUM_SCAN: snapshotConflictHorizon: 1873421, ...',
      '2026-10-14 03:20:01.460 UTC [4011] LOG:  recovery finished waiting after 30058.710 ms: recovery conflict on snapshot',
    ].join('\n')).map((entry) => detailsOf(classifyEntry(entry, 'standby1'), 'recovery_conflict_wait'));
    expect(waiting).toEqual({
      phase: 'waiting',
      wait_ms: 1000.123,
      reason: 'snapshot',
      conflicting_pids: [52311],
      redo_lsn: '3/5A0012F8',
      redo_record: 'Heap2/PRUNE_VACUUM_SCAN',
      redo_description: 'snapshotConflictHorizon: 1873421, ...',
      lock_mode: null,
      lock_object: null,
    });
    expect(finished).toMatchObject({
      phase: 'finished', wait_ms: 30058.71, reason: 'snapshot', conflicting_pids: null, redo_lsn: null,
    });
  });

  it('reads the PG 19 shape: CONTEXT `waiting for` first, the redo text on its continuation line (§13.1)', () => {
    const text = [
      '2026-10-14 03:19:31.402 UTC [4011] LOG:  recovery still waiting after 1000.050 ms: recovery conflict on lock',
      '2026-10-14 03:19:31.402 UTC [4011] DETAIL:  Conflicting processes: 52311, 52318.',
      '2026-10-14 03:19:31.402 UTC [4011] CONTEXT:  waiting for AccessExclusiveLock on relation 16402 of database 16384',
      '\tWAL redo at 0/0160A3F8 for Standby/LOCK: xid 1873502 db 16384 rel 16402 ',
    ].join('\n');
    const d = detailsOf(classifyEntry(stderrEntry(text), 't1'), 'recovery_conflict_wait');
    expect(d).toMatchObject({
      reason: 'lock',
      conflicting_pids: [52311, 52318],
      redo_lsn: '0/0160A3F8',
      redo_record: 'Standby/LOCK',
      lock_mode: 'AccessExclusiveLock',
      lock_object: { type: 'relation', relation_oid: 16402, database_oid: 16384 },
    });
  });

  it.each<[string, RecoveryConflictReason | null]>([
    ['recovery conflict on buffer pin', 'bufferpin'],
    ['recovery conflict on tablespace', 'tablespace'],
    ['recovery conflict on replication slot', 'logical_slot'],
    ['recovery conflict on buffer deadlock', 'startup_deadlock'],
    ['recovery conflict on deadlock', 'deadlock'],
    ['recovery conflict on database', 'database'],
    ['unknown reason', null],
  ])('reason text %j -> %s', (text, reason) => {
    const line = `2026-10-14 03:19:31.402 UTC [4011] LOG:  recovery finished waiting after 5.000 ms: ${text}`;
    expect(detailsOf(classifyEntry(stderrEntry(line), 't1'), 'recovery_conflict_wait').reason).toBe(reason);
  });

  it('does not take other `recovery ...` lines', () => {
    const line = '2026-10-14 03:19:31.402 UTC [4011] LOG:  recovery restart point at 3/5A0012F8';
    expect(classifyEntry(stderrEntry(line), 't1').kind).toBe('generic');
  });
});
