/**
 * The contract between rules and their inputs: every series a rule reads is one some collector
 * declares, and every event kind a rule reads is one the classifiers produce. A rule reading a
 * name nothing writes can never fire (repack-change-ceiling once read `..._hours_until_ceiling`
 * while the collector wrote `..._seconds_until_ceiling`).
 *
 * The names are found by running the rules, not by reading their source: every rule of the
 * catalog evaluates over a recording view that answers every series query with a matching series
 * (at several values, so thresholds on both sides are crossed) and every event query from a set of
 * REPACK, DROP and vacuum events; the view records each name and kind asked for. A new rule is
 * covered without editing this test. Exported `pg_*` string constants of the rule modules (shared
 * names such as SLOT_INFO) are checked too, for names only a branch this run does not reach reads.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { caseName, FIXTURES_DIR, listCases, readCase } from '../../test/helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../../test/helpers/scenarios/parse-log.js';
import { createCollectors } from '../collectors/index.js';
import { settingMetric, WATCHED_SETTINGS } from '../collectors/pg-settings.js';
import { EVENT_KINDS, type EventKind, type GenericDetails, type Labels } from '../domain/index.js';
import { SCHEDULER_METRICS } from '../sources/poll-scheduler.js';
import { buildRules } from './catalog.js';
import { eventOf } from './memory-rule-view.js';
import type { EventQuery, LatestQuery, LatestSample, RuleEvent, RuleView, SeriesData, SeriesQuery } from './rule-view.js';
import {
  autovacuumDetails, crashDetails, ddlDetails, lockTimeoutDetails, lockWaitDetails, recoveryWaitDetails, relationLock, restartDetails,
} from './test-events.js';

const NOW = Date.UTC(2026, 9, 14, 8, 0, 0);
const MINUTE = 60_000;

/** Labels every series answer carries unless the query asks for others. */
const DEFAULT_LABELS: Labels = {
  slot_name: 'pg_repack_4243', slot_type: 'logical', owner: 'repack', plugin: 'pgrepack', temporary: 'true', owner_pid: '4242',
  database: 'shop', datname: 'shop', schemaname: 'public', relname: 'orders', pid: '4242', command: 'REPACK', phase: 'catch-up',
  index_name: '', application_name: 'standby1', state: 'streaming', holder: 'session', wait_event: '',
};

/** A second subject of every series: another table, session and slot than the first. */
const OTHER_LABELS: Labels = { ...DEFAULT_LABELS, slot_name: 'pg_repack_4301', owner_pid: '4300', relname: 'events', pid: '4300' };

/** A view that has every series (two subjects, points of one value over the last hour) and records what is asked. */
class RecordingView implements RuleView {
  readonly seriesNames = new Set<string>();
  readonly kinds = new Set<EventKind>();
  readonly nowMs = NOW;

  constructor(private readonly value: number | null, private readonly stored: RuleEvent[]) {}

  targets() {
    return [{ name: 'primary', cluster: null }, { name: 'standby1', cluster: null }];
  }

  events<K extends EventKind>(kind: K, q: EventQuery): Array<RuleEvent<K>> {
    this.kinds.add(kind);
    return this.stored.filter((e) => e.kind === kind && e.tsMs >= q.sinceMs && e.tsMs <= NOW && (q.pid === undefined || e.pid === q.pid)) as Array<RuleEvent<K>>;
  }

  series(name: string, q: SeriesQuery): SeriesData[] {
    this.seriesNames.add(name);
    const points = [60, 30, 15, 5, 1, 0].map((ago) => ({ tsMs: NOW - ago * MINUTE, value: this.value })).filter((p) => p.tsMs >= q.sinceMs);
    if (points.length === 0) return [];
    return [DEFAULT_LABELS, OTHER_LABELS].map((labels) => ({ name, target: q.target ?? 'primary', labels: { ...labels, ...q.labels }, points }));
  }

  latest(name: string, q: LatestQuery = {}): LatestSample[] {
    this.seriesNames.add(name);
    return [DEFAULT_LABELS, OTHER_LABELS].map((labels) => ({ name, target: q.target ?? 'primary', labels: { ...labels, ...q.labels }, tsMs: NOW, value: this.value }));
  }
}

const REPACK = 'REPACK (CONCURRENTLY) orders';
const DROP = 'DROP TABLE build_logs';
const at = (minutesAgo: number) => NOW - minutesAgo * MINUTE;
const generic = (minutesAgo: number, pid: number, message: string, level: 'LOG' | 'ERROR' = 'ERROR') =>
  eventOf('generic', { classified: false } satisfies GenericDetails, { tsMs: at(minutesAgo), pid, level, message });

/** Events that walk the REPACK, DROP and vacuum rules down their longer paths. */
const EVENTS: RuleEvent[] = [
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
  eventOf('statement_timeout', { pid: 4242, database: 'shop', user: 'dba', statement: REPACK }, { tsMs: at(1), pid: 4242, level: 'ERROR' }),
  generic(1, 4242, 'canceling statement due to user request'),
  generic(1, 4242, 'out of memory'),
  generic(1, 4242, 'invalid memory alloc request size 1677721600'),
  generic(40, 4242, 'duration: 600000.000 ms  statement: REPACK (CONCURRENTLY) orders', 'LOG'),
  eventOf('server_crash', crashDetails({ pid: 4242, signal: 9, signal_name: 'Killed', statement: REPACK }), { tsMs: at(1) }),
  eventOf('server_restart', restartDetails('reinitializing'), { tsMs: at(1) }),
  eventOf('recovery_conflict_wait', recoveryWaitDetails({ conflicting_pids: [52311], redo_description: 'rels: base/16384/16402' }), { tsMs: at(2), target: 'standby1' }),
];

function recordRules(): { seriesNames: Set<string>; kinds: Set<EventKind> } {
  const seriesNames = new Set<string>();
  const kinds = new Set<EventKind>();
  for (const value of [null, 0, 1, 0.001, 1e12]) {
    for (const rule of buildRules({ disabled: [], thresholds: {} })) {
      const view = new RecordingView(value, EVENTS);
      rule.evaluate(view, NOW);
      for (const name of view.seriesNames) seriesNames.add(name);
      for (const kind of view.kinds) kinds.add(kind);
    }
  }
  return { seriesNames, kinds };
}

/** Every `pg_*` string an exported constant of a rule module holds. */
async function exportedSeriesNames(): Promise<string[]> {
  const dir = fileURLToPath(new URL('.', import.meta.url));
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  const modules = await Promise.all(files.map((f) => import(`./${f.replace(/\.ts$/, '.js')}`) as Promise<Record<string, unknown>>));
  return modules.flatMap((m) => Object.values(m)).filter((v): v is string => typeof v === 'string' && /^pg_[a-z0-9_]+$/.test(v));
}

function declaredSeriesNames(): Set<string> {
  // pg_settings names carry the setting's unit; a unitless setting (server_version_num) has none.
  const settings = WATCHED_SETTINGS.flatMap((name) => [null, 'ms', 's', 'kB', '8kB', 'MB'].map((unit) => settingMetric(name, unit).def.name));
  return new Set([...createCollectors().flatMap((c) => c.metrics.map((m) => m.name)), ...settings, ...SCHEDULER_METRICS.map((m) => m.name)]);
}

/** Kinds the classifiers produce from the recorded real logs (every scenario, PG 15 and 18, stderr). */
async function classifiedKinds(): Promise<Set<EventKind>> {
  const kinds = new Set<EventKind>();
  const cases = listCases().filter((name) => name.startsWith(caseName(18, 'stderr', '')) || name.startsWith(caseName(15, 'stderr', '')));
  for (const name of cases) {
    const dir = path.join(FIXTURES_DIR, name);
    const fixture = readCase(dir);
    const parsed = await parseLogFile(path.join(dir, fixture.log_file), { format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone });
    for (const e of parsed.events) kinds.add(e.kind);
  }
  return kinds;
}

/**
 * Kinds no server here can be made to log in a test: the line PostgreSQL prints (from its source),
 * which must still come out as the kind through the same pipeline.
 */
const NOT_PRODUCIBLE_HERE: Record<string, string> = {
  // Needs the next XID within 40 million of wraparound (about 2.1 billion XIDs consumed).
  wraparound_warning: '2026-01-01 00:00:00.000 UTC [4711] WARNING:  database "shop" must be vacuumed within 39999868 transactions\n',
};

async function classifiedKindsOf(lines: Record<string, string>): Promise<Set<EventKind>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-contract-'));
  try {
    const kinds = new Set<EventKind>();
    for (const [expected, text] of Object.entries(lines)) {
      const file = path.join(dir, `${expected}.log`);
      fs.writeFileSync(file, text);
      const parsed = await parseLogFile(file, { format: 'stderr', prefix: '%m [%p] ', timezone: 'UTC' });
      const kind = parsed.events[0]?.kind;
      expect(kind, `the line for ${expected}`).toBe(expected);
      if (kind) kinds.add(kind);
    }
    return kinds;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('rules read only what collectors and classifiers write', () => {
  const recorded = recordRules();

  it('finds the names by running the rules (the recording reaches the REPACK rules)', () => {
    // Names read only deep inside a rule: after a run's table is resolved, after PG 19 is to be proven.
    for (const name of ['pg_replication_slots_info', 'pg_stat_user_tables_n_tup_upd_total', 'pg_settings_server_version_num']) {
      expect(recorded.seriesNames).toContain(name);
    }
    expect(recorded.kinds).toContain('lock_timeout');
    console.log([...recorded.seriesNames].sort().join('\n'), [...recorded.kinds]);
  });

  it('every series a rule reads is declared by a collector', async () => {
    const declared = declaredSeriesNames();
    const read = [...new Set([...recorded.seriesNames, ...(await exportedSeriesNames())])].sort();
    expect(read.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('every event kind a rule reads is an EVENT_KIND the classifiers produce from real logs', async () => {
    const produced = await classifiedKinds();
    for (const kind of await classifiedKindsOf(NOT_PRODUCIBLE_HERE)) produced.add(kind);
    const read = [...recorded.kinds].sort();
    expect(read.filter((kind) => !(EVENT_KINDS as readonly string[]).includes(kind))).toEqual([]);
    expect(read.filter((kind) => !produced.has(kind))).toEqual([]);
  });
});
