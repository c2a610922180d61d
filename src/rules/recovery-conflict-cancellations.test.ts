import { describe, expect, it } from 'vitest';
import type { RecoveryConflictDetails, RecoveryConflictReason } from '../domain/index.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { DEFAULTS, recoveryConflictCancellations } from './recovery-conflict-cancellations.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0 } from './series-notation.js';
import { ddlDetails, recoveryWaitDetails } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const rule = recoveryConflictCancellations(DEFAULTS);
const STARTUP = 25521;

function cancel(step: number, pid: number, reason: RecoveryConflictReason | null, o: { fatal?: boolean; database?: string; statement?: string | null } = {}): RuleEvent<'recovery_conflict'> {
  const database = o.database ?? 'shop';
  const details: RecoveryConflictDetails = {
    pid, database, user: 'app', statement: o.statement === undefined ? 'SELECT pg_sleep(60)' : o.statement, reason, fatal: o.fatal ?? false, detail: null,
  };
  return eventOf('recovery_conflict', details, { tsMs: at(step), target: 'standby1', pid, database, level: o.fatal ? 'FATAL' : 'ERROR' });
}

function wait(step: number, reason: RecoveryConflictReason, pids: number[], record: string, description: string): RuleEvent<'recovery_conflict_wait'> {
  return eventOf('recovery_conflict_wait', recoveryWaitDetails({ reason, conflicting_pids: pids, redo_lsn: '0/747EBF8', redo_record: record, redo_description: description }),
    { tsMs: at(step), target: 'standby1', pid: STARTUP, level: 'LOG' });
}

const prune = (step: number, pid: number, rel: string, reason: RecoveryConflictReason = 'snapshot') =>
  wait(step, reason, [pid], 'Heap2/PRUNE_VACUUM_SCAN', `snapshotConflictHorizon: 811, isCatalogRel: F, nunused: 60; blkref #0: rel ${rel}, blk 0`);
const standbyLock = (step: number, pid: number) => wait(step, 'lock', [pid], 'Standby/LOCK', 'xid 812 db 5 rel 16499 ');

const targets = [{ name: 'primary', cluster: 'shop' }, { name: 'standby1', cluster: 'shop' }];
const evaluate = (events: RuleEvent[], step: number) => rule.evaluate(new MemoryRuleView({ events, targets }).at(at(step)), at(step));

describe('recovery-conflict-cancellations', () => {
  it("names VACUUM's cleanup replayed, the WAL record and the relations, in one alert for the snapshot conflicts", () => {
    const events = [prune(0, 101, '1663/5/16492'), cancel(1, 101, 'snapshot'), prune(2, 102, '1663/5/16500'), cancel(3, 102, 'snapshot', { statement: 'SELECT * FROM orders WHERE id = 7' })];
    const findings = evaluate(events, 4);
    expect(findings.map((f) => f.summary)).toEqual([
      '2 queries cancelled on standby1 by recovery conflicts on snapshot since 00:00:05 UTC: ' +
      'VACUUM (or pruning) on the primary removed row versions the queries could still see ' +
      '(WAL replayed: Heap2/PRUNE_VACUUM_SCAN of rel 1663/5/16492, Heap2/PRUNE_VACUUM_SCAN of rel 1663/5/16500); ' +
      'queries: SELECT * FROM orders WHERE id = ?, SELECT pg_sleep(?)',
    ]);
    expect(findings[0]!.dedupKey).toBe('recovery-conflict-cancellations/standby1/snapshot');
    expect(new Set(findings[0]!.evidence.eventIds)).toEqual(new Set(events.map((e) => e.id)));
    expect(rule.severity).toBe('info');
  });

  it('names the DROP the primary logged for a lock conflict, and a terminated session', () => {
    const drop = eventOf('ddl', ddlDetails('DROP TABLE', 'public.build_logs'), { tsMs: at(0), target: 'primary', pid: 7, database: 'shop', level: 'LOG' });
    const [finding] = evaluate([drop, standbyLock(1, 101), cancel(2, 101, 'lock', { fatal: true, statement: null })], 3);
    expect(finding!.summary).toBe(
      '1 query cancelled on standby1 by recovery conflicts on lock since 00:00:10 UTC: replay of an ACCESS EXCLUSIVE lock taken on the primary ' +
      'by DROP, TRUNCATE, ALTER TABLE, LOCK TABLE or VACUUM truncating the table: probably DROP TABLE of public.build_logs on primary ' +
      '(WAL replayed: Standby/LOCK of rel 16499 (db 5)); sessions terminated: 1',
    );
    expect(finding!.dedupKey).toBe('recovery-conflict-cancellations/standby1/lock/5.16499');
    expect(finding!.evidence.eventIds).toContain(drop.id);
  });

  const causes: Array<[string, RuleEvent[], string[]]> = [
    ['each reason is its own cause', [cancel(0, 1, 'snapshot'), cancel(1, 2, 'bufferpin')], ['snapshot', 'bufferpin']],
    ['a DROP DATABASE is a cause per database', [cancel(0, 1, 'database', { database: 'a', fatal: true }), cancel(1, 2, 'database', { database: 'b', fatal: true })], ['database/a', 'database/b']],
    ['locks replayed on two tables are two causes', [standbyLock(0, 1), cancel(1, 1, 'lock'), wait(2, 'lock', [2], 'Standby/LOCK', 'xid 9 db 5 rel 17000'), cancel(3, 2, 'lock')], ['lock/5.16499', 'lock/5.17000']],
    ['cleanup of two relations is one cause', [prune(0, 1, '1663/5/1', 'bufferpin'), cancel(1, 1, 'bufferpin'), prune(2, 2, '1663/5/2', 'bufferpin'), cancel(3, 2, 'bufferpin')], ['bufferpin']],
    ['a reason the DETAIL did not give is taken from the wait', [standbyLock(0, 1), cancel(1, 1, null)], ['lock/5.16499']],
    ['neither says: unknown', [cancel(0, 1, null)], ['unknown']],
  ];
  for (const [name, events, keys] of causes) {
    it(name, () => expect(evaluate(events, 4).map((f) => f.dedupKey.replace('recovery-conflict-cancellations/standby1/', ''))).toEqual(keys));
  }

  it('without log_recovery_conflict_waits, says what would name the record', () => {
    expect(evaluate([cancel(0, 1, 'snapshot')], 1)[0]!.summary).toContain('could still see (log_recovery_conflict_waits = on would name the WAL record)');
  });

  it('a wait that named another process is not this query\'s cause', () => {
    expect(evaluate([prune(0, 999, '1663/5/1'), cancel(1, 1, 'snapshot')], 2)[0]!.summary).not.toContain('WAL replayed');
  });

  const pinWait = (step: number, phase: 'waiting' | 'finished') => eventOf('recovery_conflict_wait', recoveryWaitDetails({
    phase, reason: 'bufferpin', conflicting_pids: null, redo_record: 'Heap2/PRUNE_VACUUM_SCAN', redo_description: 'nunused: 50; blkref #0: rel 1663/5/16384, blk 0',
  }), { tsMs: at(step), target: 'standby1', pid: STARTUP, level: 'LOG' });

  it('a buffer pin wait names no process: the wait open when the query was cancelled is its cause', () => {
    expect(evaluate([pinWait(0, 'waiting'), cancel(1, 1, 'bufferpin'), pinWait(2, 'finished')], 3)[0]!.summary)
      .toContain('(WAL replayed: Heap2/PRUNE_VACUUM_SCAN of rel 1663/5/16384)');
    expect(evaluate([pinWait(0, 'waiting'), pinWait(1, 'finished'), cancel(2, 1, 'bufferpin')], 3)[0]!.summary).not.toContain('WAL replayed');
  });

  it('keeps one alert per cause while conflicts recur and resolves 5 min after the last', () => {
    const events = [cancel(0, 1, 'snapshot'), cancel(50, 2, 'snapshot'), cancel(100, 3, 'snapshot')];
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ events, targets }), instants(0, 170), { refireMinIntervalMs: 3_600_000 }));
    expect(steps).toEqual([['fire', 'recovery-conflict-cancellations/standby1/snapshot', 0], ['resolve', 'recovery-conflict-cancellations/standby1/snapshot', 161]]);
  });
});
