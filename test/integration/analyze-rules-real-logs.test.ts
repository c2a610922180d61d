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

  it('the three formats of a recording give the same alerts', async () => {
    for (const scenario of ['repack-concurrently-holds-back-vacuum', 'backend-killed-crash-restart', 'repack-lock-timeout-at-swap']) {
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
