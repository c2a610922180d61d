/**
 * Inputs that walk every rule down its paths without a scenario per rule, for the contract tests
 * (series-contract.test.ts, sample-citation.test.ts): a view that answers every series query with
 * two subjects (another table, session and slot for the second) at one value over the last hour,
 * and a set of REPACK, DROP, vacuum and crash events. The view records every series name and event
 * kind asked for, so a new rule is covered without editing the tests.
 */
import type { EventKind, GenericDetails, Labels } from '../domain/index.js';
import { eventOf } from './memory-rule-view.js';
import { countInBuckets, type EventCountQuery, type EventQuery, type LatestQuery, type LatestSample, type RuleEvent, type RuleView, type SeriesData, type SeriesQuery } from './rule-view.js';
import {
  autovacuumDetails, crashDetails, ddlDetails, lockTimeoutDetails, lockWaitDetails, recoveryWaitDetails, relationLock, restartDetails,
} from './test-events.js';

export const NOW = Date.UTC(2026, 9, 14, 8, 0, 0);
const MINUTE = 60_000;

/** Labels every series answer carries unless the query asks for others. */
const DEFAULT_LABELS: Labels = {
  slot_name: 'pg_repack_4243', slot_type: 'logical', owner: 'repack', plugin: 'pgrepack', temporary: 'true', owner_pid: '4242',
  database: 'shop', datname: 'shop', schemaname: 'public', relname: 'orders', pid: '4242', command: 'REPACK', phase: 'catch-up',
  index_name: '', application_name: 'standby1', state: 'streaming', holder: 'session', wait_event: '',
};

/** A second subject of every series: another table, session and slot than the first. */
const OTHER_LABELS: Labels = { ...DEFAULT_LABELS, slot_name: 'pg_repack_4301', owner_pid: '4300', relname: 'events', pid: '4300' };

/** Values that cross every threshold from one side or the other. */
export const SAMPLE_VALUES: ReadonlyArray<number | null> = [null, 0, 1, 0.001, 1e12];

/**
 * A view holding `events` and, unless `value` is undefined (the log alone), every series: two
 * subjects, points of `value` over the last hour, or of the value `overrides` gives its name (a
 * setting that would hide what the others cross, e.g. a replay delay as long as the stall). It
 * records what is asked.
 */
export class EveryInputView implements RuleView {
  readonly seriesNames = new Set<string>();
  readonly kinds = new Set<EventKind>();
  readonly nowMs = NOW;

  constructor(
    private readonly value: number | null | undefined,
    private readonly stored: readonly RuleEvent[],
    private readonly overrides: Readonly<Record<string, number | null>> = {},
  ) {}

  private valueOf(name: string): number | null {
    return Object.hasOwn(this.overrides, name) ? this.overrides[name]! : this.value!;
  }

  targets() {
    return [{ name: 'primary', cluster: null }, { name: 'standby1', cluster: null }];
  }

  events<K extends EventKind>(kind: K, q: EventQuery): Array<RuleEvent<K>> {
    this.kinds.add(kind);
    const targetOk = (t: string) => q.target === undefined || (typeof q.target === 'string' ? t === q.target : q.target.includes(t));
    return this.stored.filter((e) => e.kind === kind && e.tsMs >= q.sinceMs && e.tsMs <= NOW && targetOk(e.target) &&
      (q.pid === undefined || e.pid === q.pid)) as Array<RuleEvent<K>>;
  }

  eventCounts(kinds: readonly EventKind[], q: EventCountQuery): number[] {
    for (const kind of kinds) this.kinds.add(kind);
    return countInBuckets(this.stored.filter((e) => kinds.includes(e.kind) && e.target === q.target), q, NOW);
  }

  series(name: string, q: SeriesQuery): SeriesData[] {
    this.seriesNames.add(name);
    if (this.value === undefined) return [];
    const value = this.valueOf(name);
    const points = [60, 30, 15, 5, 1, 0].map((ago) => ({ tsMs: NOW - ago * MINUTE, value })).filter((p) => p.tsMs >= q.sinceMs);
    if (points.length === 0) return [];
    return [DEFAULT_LABELS, OTHER_LABELS].map((labels) => ({ name, target: q.target ?? 'primary', labels: { ...labels, ...q.labels }, points }));
  }

  latest(name: string, q: LatestQuery = {}): LatestSample[] {
    this.seriesNames.add(name);
    if (this.value === undefined) return [];
    const value = this.valueOf(name);
    return [DEFAULT_LABELS, OTHER_LABELS].map((labels) => ({ name, target: q.target ?? 'primary', labels: { ...labels, ...q.labels }, tsMs: NOW, value }));
  }
}

const REPACK = 'REPACK (CONCURRENTLY) orders';
const DROP = 'DROP TABLE build_logs';
const at = (minutesAgo: number) => NOW - minutesAgo * MINUTE;
const generic = (minutesAgo: number, pid: number, message: string, level: 'LOG' | 'ERROR' = 'ERROR') =>
  eventOf('generic', { classified: false } satisfies GenericDetails, { tsMs: at(minutesAgo), pid, level, message });

/** Events that walk the REPACK, DROP and vacuum rules down their longer paths. */
export const EVENTS: readonly RuleEvent[] = [
  eventOf('ddl', ddlDetails('REPACK', 'orders', true), { tsMs: at(50), pid: 4242, database: 'shop' }),
  eventOf('ddl', ddlDetails('DROP TABLE', 'build_logs'), { tsMs: at(3), pid: 5000, database: 'shop' }),
  ...[20, 10].map((ago) => eventOf('autovacuum', autovacuumDetails({
    database: 'other', table: 'hot', removable_cutoff_xid: 771, removable_cutoff_age_xids: 5000, tuples_dead_not_removable: 100,
    dead_item_storage_mb: 1, parallel_workers_planned: 3, parallel_workers_launched: 1,
  }), { tsMs: at(ago), database: 'other' })),
  eventOf('lock_wait', lockWaitDetails({ waiting_pid: 4242, lock_mode: 'AccessExclusiveLock', holder_pids: [70990], queue_pids: [4242, 4300], statement: REPACK }), { tsMs: at(2), pid: 4242 }),
  eventOf('lock_wait', lockWaitDetails({ waiting_pid: 5000, lock_mode: 'AccessExclusiveLock', holder_pids: [70990], queue_pids: [5000, 5001], statement: DROP }), { tsMs: at(2), pid: 5000 }),
  eventOf('lock_timeout', lockTimeoutDetails({ pid: 4242, statement: REPACK, lock_mode: 'AccessExclusiveLock', lock_object: relationLock(16402, 16384) }), { tsMs: at(1), pid: 4242, level: 'ERROR' }),
  eventOf('deadlock', {
    pid: 4242, database: 'shop', user: 'dba', statement: REPACK, context: null,
    processes: [{ pid: 4242, lock_mode: 'AccessExclusiveLock', lock_object: relationLock(16402, 16384), blocked_by_pid: 70990, query: REPACK }],
  }, { tsMs: at(1), pid: 4242, level: 'ERROR' }),
  eventOf('statement_timeout', { pid: 4242, database: 'shop', user: 'dba', statement: REPACK, context: null }, { tsMs: at(1), pid: 4242, level: 'ERROR' }),
  generic(1, 4242, 'canceling statement due to user request'),
  generic(1, 4242, 'out of memory'),
  generic(1, 4242, 'invalid memory alloc request size 1677721600'),
  generic(40, 4242, 'duration: 600000.000 ms  statement: REPACK (CONCURRENTLY) orders', 'LOG'),
  // The second sampled session's REPACK is in no statement: only its slot shows the run it failed.
  generic(1, 4300, 'out of memory'),
  eventOf('server_crash', crashDetails({ pid: 4242, signal: 9, signal_name: 'Killed', statement: REPACK }), { tsMs: at(1) }),
  eventOf('server_restart', restartDetails('reinitializing'), { tsMs: at(1) }),
  eventOf('recovery_conflict_wait', recoveryWaitDetails({ conflicting_pids: [52311], redo_description: 'rels: base/16384/16402' }), { tsMs: at(2), target: 'standby1' }),
];
