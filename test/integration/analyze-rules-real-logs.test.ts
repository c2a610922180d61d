/**
 * `pgvigil analyze --rules` on logs recorded by real PostgreSQL 15, 18 and 19rc1 servers
 * (test/fixtures/logs): the alerts the rules replay finds, against golden files in
 * test/fixtures/analyze-rules/ (regenerate with UPDATE_GOLDEN=1 and review the diff), plus the
 * facts each must name, read from the raw log independently of the parser. The three formats of a
 * recording must give the same alerts; the built CLI must give the same output in any time zone
 * and at any wall-clock date.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OfflineAlert } from '../../src/report/alerts-text.js';
import type { AnalyzeReport } from '../../src/report/analyze-text.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { expectGolden } from '../helpers/golden-file.js';
import { caseName, readCase } from '../helpers/scenarios/fixture-case.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const GOLDEN_DIR = path.join(ROOT, 'test/fixtures/analyze-rules');

/** The log of a recorded case, relative to the repository root (as the evidence cites it). */
function logOf(major: number, format: 'stderr' | 'csvlog' | 'jsonlog', scenario: string): string {
  const dir = path.join('test/fixtures/logs', caseName(major, format, scenario));
  return path.join(dir, readCase(path.join(ROOT, dir)).log_file);
}

async function alertsOf(file: string): Promise<OfflineAlert[]> {
  const { code, stdout, stderr } = await analyzeCaptured([file], { rules: true, json: true });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return (JSON.parse(stdout) as AnalyzeReport).alerts!;
}

function golden(name: string, alerts: OfflineAlert[]): void {
  expectGolden(path.join(GOLDEN_DIR, `${name}.json`), `${JSON.stringify(alerts, null, 2)}\n`);
}

/** What the alerts say, without where in the file (the formats differ there). */
const conclusions = (alerts: OfflineAlert[]) => alerts.map((a) => ({ rule: a.rule, summary: a.summary, started_at: a.started_at, ended_at: a.ended_at, basis: a.basis }));

const rawLog = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('analyze --rules on real PostgreSQL logs', () => {
  it('pg19 REPACK (CONCURRENTLY) holding vacuum: repack-holds-vacuum names the REPACK, its pid, the database held and the cutoff XID', async () => {
    const file = logOf(19, 'stderr', 'repack-concurrently-holds-back-vacuum');
    const alerts = await alertsOf(file);
    golden('pg19-repack-concurrently-holds-back-vacuum', alerts);
    // One incident, one alert: vacuum-held-back leaves a hold that began during the logged REPACK to it.
    expect(alerts.map((a) => a.rule)).toEqual(['repack-holds-vacuum']);
    const [held] = alerts;
    // From the raw text: the REPACK statement's pid, the reports of other.public.hot_counters and the cutoff they share.
    const repackPid = Number(/\[(\d+)\] \S+ LOG: {2}statement: REPACK \(CONCURRENTLY\)/.exec(rawLog(file))?.[1]);
    const reports = [...rawLog(file).matchAll(/\[(\d+)\] LOG: {2}automatic vacuum of table "other\.public\.hot_counters"[^]*?removable cutoff: (\d+), which was (\d+) XIDs old/g)];
    const cutoff = Number(reports[0]![2]);
    expect(new Set(reports.map((r) => Number(r[2])))).toEqual(new Set([cutoff]));
    expect(held).toMatchObject({ basis: 'log', ended_at: null });
    expect(held!.summary).toMatch(/^REPACK \(CONCURRENTLY\) of shop\.orders has probably held vacuum back/);
    expect(held!.summary).toContain(`removable cutoff stuck at XID ${cutoff}`);
    expect(held!.summary).toContain('REPACK still running at the end of the log');
    expect(held!.evidence.facts).toMatchObject({
      repack_pid: repackPid, removable_cutoff_xid: cutoff, held_databases: 'other', held_tables: 'other.public.hot_counters', seen_in: 'log',
    });
  });

  for (const major of [15, 18, 19]) {
    for (const scenario of ['standby-feedback-holds-vacuum', 'logical-slot-holds-catalogs']) {
      // The recorded holds last seconds: what a busy server does all day. Their scope, read with
      // thresholds of seconds, is vacuum-held-back-real-logs.test.ts's.
      it(`pg${major} ${scenario}: a hold of seconds raises nothing`, async () => {
        expect(await alertsOf(logOf(major, 'stderr', scenario))).toEqual([]);
      });
    }
  }

  for (const major of [15, 18, 19]) {
    it(`pg${major} backend killed by SIGKILL: server-crashed names the pid and the query`, async () => {
      const file = logOf(major, 'stderr', 'backend-killed-crash-restart');
      const alerts = await alertsOf(file);
      golden(`pg${major}-backend-killed-crash-restart`, alerts);
      const [, pid] = /\(PID (\d+)\) was terminated by signal 9/.exec(rawLog(file))!;
      expect(alerts.map((a) => a.rule)).toEqual(['server-crashed']);
      expect(alerts[0]).toMatchObject({ severity: 'critical', basis: 'log' });
      expect(alerts[0]!.summary).toContain(`pid ${pid} was killed by signal 9`);
    });
  }

  it('pg19 REPACK lost at the swap: repack-lost-at-swap names the table and the blocking pid', async () => {
    const file = logOf(19, 'stderr', 'repack-lock-timeout-at-swap');
    const alerts = await alertsOf(file);
    golden('pg19-repack-lock-timeout-at-swap', alerts);
    const [, blocker] = /Process holding the lock: (\d+)\./.exec(rawLog(file))!;
    expect(alerts.map((a) => a.rule)).toEqual(['repack-lost-at-swap']);
    expect(alerts[0]!.summary).toMatch(new RegExp(`^REPACK \\(CONCURRENTLY\\) of repack_swap\\.accounts .* behind pid ${blocker}$`));
    expect(alerts[0]!.basis).toBe('log');
  });

  for (const major of [15, 18, 19]) {
    it(`pg${major} snapshot held for one autovacuum run only: quiet (one report is not a stuck cutoff)`, async () => {
      expect(await alertsOf(logOf(major, 'stderr', 'autovacuum-held-back-by-snapshot'))).toEqual([]);
    });
  }

  describe('the explained failures, as info alerts that name their cause', () => {
    /** 1-based line of each match of `pattern` (global, multiline) in the raw log, with its groups. */
    const linesOf = (file: string, pattern: RegExp) => [...rawLog(file).matchAll(pattern)].map((m) => ({
      line: rawLog(file).slice(0, m.index).split('\n').length, groups: m.slice(1),
    }));
    const cites = (alert: OfflineAlert | undefined, file: string, line: number) => expect(alert?.evidence.events).toContainEqual({ file, line });

    for (const major of [15, 18, 19]) {
      it(`pg${major} standby queries cancelled by recovery conflicts: one info alert per cause, naming the WAL record replayed`, async () => {
        const file = logOf(major, 'stderr', 'standby-recovery-conflicts');
        const alerts = await alertsOf(file);
        golden(`pg${major}-standby-recovery-conflicts`, alerts);
        // From the raw text: each victim's line and reason, and the record replay was waiting on for it.
        const victims = linesOf(file, /^\S+ \S+ UTC \[(\d+)\] \S+ (?:ERROR|FATAL): {2}(?:canceling statement|terminating connection) due to conflict with recovery\n.*DETAIL: {2}(.*)$/gm);
        const records = new Map(linesOf(file, /DETAIL: {2}Conflicting process: (\d+)\.\n.*CONTEXT: {2}(?:waiting for [^\n]*\n\t)?WAL redo at \S+ for (\S+): ([^\n]*)/g)
          .map(({ groups: [pid, record, description] }) => [pid, { record: record!, description: description! }]));
        expect(victims).toHaveLength(3);
        expect(alerts.map((a) => [a.rule, a.severity])).toEqual(victims.map(() => ['recovery-conflict-cancellations', 'info']));
        const byReason = (reason: string) => alerts.find((a) => a.evidence.facts.reason === reason);
        const [snapshot, lock, database] = victims;
        expect(snapshot!.groups[1]).toMatch(/row versions that must be removed/);
        const pruned = records.get(snapshot!.groups[0]!)!;
        expect(byReason('snapshot')?.summary).toContain(`VACUUM (or pruning) on the primary removed row versions the queries could still see (WAL replayed: ${pruned.record} of rel ${/rel (\S+),/.exec(pruned.description)![1]})`);
        cites(byReason('snapshot'), file, snapshot!.line);
        expect(lock!.groups[1]).toMatch(/relation lock/);
        const [, db, rel] = /db (\d+) rel (\d+)/.exec(records.get(lock!.groups[0]!)!.description)!;
        expect(byReason('lock')?.summary).toContain(`replay of an ACCESS EXCLUSIVE lock taken on the primary by DROP, TRUNCATE, ALTER TABLE, LOCK TABLE or VACUUM truncating the table (WAL replayed: Standby/LOCK of rel ${rel} (db ${db})); sessions terminated: 1`);
        cites(byReason('lock'), file, lock!.line);
        expect(database!.groups[1]).toMatch(/database that must be dropped/);
        expect(byReason('database')?.summary).toContain('a DROP DATABASE (or ALTER DATABASE SET TABLESPACE) replayed from the primary');
        cites(byReason('database'), file, database!.line);
      });

      it(`pg${major} standby queries cancelled for a buffer pin: one alert counting both, naming the records replayed`, async () => {
        const file = logOf(major, 'stderr', 'standby-buffer-pin-conflicts');
        const alerts = await alertsOf(file);
        golden(`pg${major}-standby-buffer-pin-conflicts`, alerts);
        const victims = linesOf(file, /^.*\[\d+\] \S+ (?:ERROR|FATAL): {2}\S+ \S+ due to conflict with recovery$/gm);
        const rels = new Set(linesOf(file, /recovery still waiting after .*: recovery conflict on buffer pin\n.*CONTEXT: {2}WAL redo at \S+ for \S+: .*blkref #0: rel (\S+),/g).map((m) => m.groups[0]));
        expect(alerts).toHaveLength(1);
        expect(alerts[0]).toMatchObject({ rule: 'recovery-conflict-cancellations', severity: 'info' });
        expect(alerts[0]!.summary).toMatch(new RegExp(`^${victims.length} queries cancelled on ${alerts[0]!.target} by recovery conflicts on buffer pin since `));
        for (const rel of rels) expect(alerts[0]!.summary).toContain(`of rel ${rel}`);
        for (const { line } of victims) cites(alerts[0], file, line);
      });

      it(`pg${major} lock timeout behind a LOCK TABLE: lock-timeouts names the relation and the holder's pid`, async () => {
        const file = logOf(major, 'stderr', 'lock-waits-and-lock-timeout');
        const alerts = await alertsOf(file);
        golden(`pg${major}-lock-waits-and-lock-timeout`, alerts);
        const [timeout] = linesOf(file, /^.* ERROR: {2}canceling statement due to lock timeout.*\n(?:.* CONTEXT: .*\n)?.*STATEMENT: {2}SELECT count\(\*\) FROM (\w+)$/gm);
        const holder = linesOf(file, /Process holding the lock: (\d+)\./g).filter((m) => m.line < timeout!.line).pop()!.groups[0];
        expect(alerts.map((a) => [a.rule, a.severity])).toEqual([['lock-timeouts', 'info']]);
        expect(alerts[0]!.summary).toMatch(new RegExp(`^1 statement cancelled by lock_timeout on postgres\\.${timeout!.groups[0]} \\(${alerts[0]!.target}\\) since .*, waiting for AccessShareLock behind pid ${holder} \\(its statement was not logged\\)`));
        cites(alerts[0], file, timeout!.line);
      });

      it(`pg${major} deadlock: deadlocks names the cycle and whose statement was cancelled`, async () => {
        const file = logOf(major, 'stderr', 'deadlock');
        const alerts = await alertsOf(file);
        golden(`pg${major}-deadlock`, alerts);
        const [error] = linesOf(file, /^.*\[(\d+)\] \S+ ERROR: {2}deadlock detected$/gm);
        const cycle = linesOf(file, /Process (\d+) waits for (\w+) on (transaction \d+); blocked by process (\d+)\./g);
        expect(cycle).toHaveLength(2);
        expect(alerts.map((a) => [a.rule, a.severity])).toEqual([['deadlocks', 'info']]);
        for (const { groups: [pid, mode, what, blocker] } of cycle) {
          expect(alerts[0]!.summary).toMatch(new RegExp(`pid ${pid} \\([^)]*\\) waited for ${mode} on ${what}, blocked by pid ${blocker}`));
        }
        expect(alerts[0]!.summary).toContain(`PostgreSQL cancelled pid ${error!.groups[0]}'s statement to break it`);
        cites(alerts[0], file, error!.line);
      });

      it(`pg${major} statement timeout: statement-timeouts names the statement`, async () => {
        const file = logOf(major, 'stderr', 'statement-timeout');
        const alerts = await alertsOf(file);
        golden(`pg${major}-statement-timeout`, alerts);
        const [timeout] = linesOf(file, /^.* ERROR: {2}canceling statement due to statement timeout\n.*STATEMENT: {2}(.*)$/gm);
        expect(alerts.map((a) => [a.rule, a.severity])).toEqual([['statement-timeouts', 'info']]);
        expect(alerts[0]!.summary).toMatch(new RegExp(`^1 statement cancelled by statement_timeout in postgres on ${alerts[0]!.target} since \\d\\d:\\d\\d:\\d\\d UTC: `));
        expect(alerts[0]!.evidence.facts.statement).toBe(timeout!.groups[0]!.replace(/\d+/g, '?'));
        cites(alerts[0], file, timeout!.line);
      });
    }
  });

  it('the three formats of a recording give the same alerts', async () => {
    for (const scenario of [
      'repack-concurrently-holds-back-vacuum', 'backend-killed-crash-restart', 'repack-lock-timeout-at-swap',
      'standby-recovery-conflicts', 'lock-waits-and-lock-timeout', 'deadlock', 'statement-timeout',
    ]) {
      const stderr = conclusions(await alertsOf(logOf(19, 'stderr', scenario)));
      expect(stderr.length).toBeGreaterThan(0);
      for (const format of ['csvlog', 'jsonlog'] as const) expect(conclusions(await alertsOf(logOf(19, format, scenario)))).toEqual(stderr);
    }
  });
});

describe('analyze --rules does not depend on the machine\'s clock or time zone', () => {
  // The built CLI (npm run build) in child processes: a time zone each, and a fake "now".
  const FAKE_NOW = path.join(ROOT, 'test/helpers/fake-now.mjs');
  const run = (args: string[], tz: string, nowIso: string) => {
    const result = spawnSync(process.execPath, ['--import', FAKE_NOW, ...(args[0] === '-e' ? [] : ['bin/pgvigil.js']), ...args], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000,
      env: { PATH: process.env.PATH, TZ: tz, PGVIGIL_FAKE_NOW: nowIso },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return result.stdout;
  };

  it('the child processes do see another clock and another zone', () => {
    const probe = ['-e', 'console.log(new Date().toISOString(), Date.now() === new Date().getTime(), new Date(0).getTimezoneOffset())'];
    expect(run(probe, 'Pacific/Auckland', '2031-07-01T03:00:00Z')).toBe('2031-07-01T03:00:00.000Z true -720\n');
    expect(run(probe, 'America/Los_Angeles', '2024-01-15T20:00:00Z')).toBe('2024-01-15T20:00:00.000Z true 480\n');
  });

  it('gives the same text and JSON in Pacific/Auckland in 2031 as in America/Los_Angeles in 2024', () => {
    const files = [logOf(19, 'stderr', 'repack-concurrently-holds-back-vacuum'), logOf(18, 'stderr', 'backend-killed-crash-restart')];
    for (const extra of [['--json'], []]) {
      const args = ['analyze', '--rules', ...extra, ...files];
      const auckland = run(args, 'Pacific/Auckland', '2031-07-01T03:00:00Z');
      const losAngeles = run(args, 'America/Los_Angeles', '2024-01-15T20:00:00Z');
      expect(auckland).toBe(losAngeles);
      expect(auckland).toContain('repack-holds-vacuum');
      expect(auckland).toContain('server-crashed');
    }
  });
});
