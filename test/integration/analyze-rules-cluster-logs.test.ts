/**
 * `pgvigil analyze --rules` on the logs of a real PostgreSQL 18 primary and standby through seed
 * 003's incident (test/fixtures/cluster-logs/pg18-drop-table-standby-lock-conflict): replay waits
 * 30 s on a standby reader's lock while nothing is logged, so only an engine that evaluates as the
 * log's time passes (src/rules/replay.ts) sees the stall. Given both logs, each is its own server
 * (named after its file, or by --target), merged by time, one cluster: the DROP on the primary
 * and the wait on the standby are judged together. The replay rules' alerts (replay-stalled*,
 * replica-lag-over-lb-limit; other rules have their own tests) against golden files in
 * test/fixtures/analyze-rules/ (UPDATE_GOLDEN=1 rewrites them; review the diff); the facts each
 * must state are read from the raw logs independently of the parser.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OfflineAlert } from '../../src/report/alerts-text.js';
import type { AnalyzeReport } from '../../src/report/analyze-text.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { expectGolden } from '../helpers/golden-file.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CASE = 'test/fixtures/cluster-logs/pg18-drop-table-standby-lock-conflict';
const PRIMARY = path.join(CASE, 'primary.log');
const STANDBY = path.join(CASE, 'standby.log');
const GOLDEN_DIR = path.join(ROOT, 'test/fixtures/analyze-rules');
/** The same incident with max_standby_streaming_delay = 75s: past a load balancer's 60 s. */
const STANDBY_75S = 'test/fixtures/cluster-logs/pg18-drop-table-standby-lock-conflict-75s/standby.log';

const raw = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const STILL_WAITING = /^(\S+ \S+) UTC \[(\d+)\] LOG: {2}recovery still waiting after ([\d.]+) ms: recovery conflict on lock\n\S+ \S+ UTC \[\d+\] DETAIL: {2}Conflicting process: (\d+)\./m;
const FINISHED = /^(\S+ \S+) UTC \[\d+\] LOG: {2}recovery finished waiting after [\d.]+ ms: recovery conflict on lock$/m;

/** The wait as the standby logged it: when it began, who was in the way, when it ended. */
function loggedWait(file = STANDBY): { startMs: number; pid: number; endIso: string } {
  const waiting = STILL_WAITING.exec(raw(file))!;
  const finished = FINISHED.exec(raw(file))!;
  return {
    startMs: Date.parse(`${waiting[1]!.replace(' ', 'T')}Z`) - Number(waiting[3]),
    pid: Number(waiting[4]),
    endIso: new Date(`${finished[1]!.replace(' ', 'T')}Z`).toISOString(),
  };
}

const REPLAY_RULES = /^(?:replay-stalled|replay-stalled-on-unlink|replica-lag-over-lb-limit)$/;

async function alertsOf(files: string[], target?: string[]): Promise<OfflineAlert[]> {
  const { code, stdout, stderr } = await analyzeCaptured(files, { rules: true, json: true, ...(target && { target }) });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  // No server is called by a name pgvigil made up.
  expect(stdout).not.toMatch(/offline/);
  return (JSON.parse(stdout) as AnalyzeReport).alerts!.filter((a) => REPLAY_RULES.test(a.rule));
}

/** The primary's DROP TABLE line: its time (HH:MM:SS) and table. */
function loggedDrop(): { time: string; table: string } {
  const g = /^\S+ (\d\d:\d\d:\d\d)\.\d+ UTC \[\d+\] \S+ LOG: {2}statement: DROP TABLE (\w+)$/m.exec(raw(PRIMARY))!;
  return { time: g[1]!, table: g[2]! };
}

function golden(name: string, alerts: OfflineAlert[]): void {
  expectGolden(path.join(GOLDEN_DIR, `${name}.json`), `${JSON.stringify(alerts, null, 2)}\n`);
}

describe('analyze --rules on a real primary and standby: replay waits 30 s on a standby reader\'s lock', () => {
  it('the standby\'s log alone: replay-stalled fires 10 s into the wait, though nothing is logged then, and ends with it', async () => {
    const alerts = await alertsOf([STANDBY]);
    golden('pg18-standby-lock-conflict-30s', alerts);
    const wait = loggedWait();
    expect(alerts.map((a) => a.rule)).toEqual(['replay-stalled']);
    const [stalled] = alerts as [OfflineAlert];
    // Evaluated every 5 s of the log's time: first past 10 s of waiting at the next 5 s step.
    const firstStepMs = Math.ceil((wait.startMs + 10_000) / 5_000) * 5_000;
    expect(stalled.started_at).toBe(new Date(firstStepMs).toISOString());
    expect(stalled.ended_at).toBe(wait.endIso);
    expect(stalled.summary).toMatch(new RegExp(`: replay waiting on a lock held by standby query pid ${wait.pid} \\(recovery conflict on lock\\)$`));
    expect(stalled.evidence.facts).toMatchObject({ cause: 'conflict', conflict_reason: 'lock', conflicting_pids: String(wait.pid) });
  });

  it('both logs: each its own server, merged by time; the wait is the stall, with the process in the way, the DROP only its lock\'s probable owner', async () => {
    const alerts = await alertsOf([PRIMARY, STANDBY]);
    golden('pg18-primary-standby-drop-lock-conflict', alerts);
    const wait = loggedWait();
    const drop = loggedDrop();
    expect(alerts.map((a) => [a.rule, a.target])).toEqual([['replay-stalled', 'standby']]);
    const [stalled] = alerts as [OfflineAlert];
    expect(stalled.summary).toBe(
      `replay on standby has not advanced for 15 s (from its log): replay waiting on a lock held by standby query pid ${wait.pid} ` +
      `(recovery conflict on lock, probably for DROP TABLE of ${drop.table} on primary at ${drop.time} UTC)`,
    );
    expect(stalled.ended_at).toBe(wait.endIso);
    // It cites the standby's wait and the primary's DROP, each in its own file.
    expect(stalled.evidence.events.map((e) => path.basename(e.file)).sort()).toEqual(['primary.log', 'standby.log']);
  });

  it('--target name=FILE names each server', async () => {
    const alerts = await alertsOf([STANDBY, PRIMARY], [`db-primary=${PRIMARY}`, `db-replica=${STANDBY}`]);
    expect(alerts.map((a) => a.target)).toEqual(['db-replica']);
    expect(alerts[0]!.summary).toMatch(/^replay on db-replica has not advanced .* probably for DROP TABLE of \w+ on db-primary at /);
  });

  it('a primary log that runs on past the standby\'s is read first, yet the standby\'s wait is judged at its own time', async () => {
    // The primary's own checkpoint lines again, 20 min later: its log now ends long after the wait.
    const later = raw(PRIMARY).split('\n').filter((l) => / LOG: {2}checkpoint /.test(l))
      .map((l) => l.replace(/^(\S+) (\d\d):(\d\d)/, (_, day: string, h: string, m: string) => `${day} ${h}:${String(Number(m) + 20).padStart(2, '0')}`));
    const primary = path.join(suiteTempDir('pgvigil-cluster-logs-'), 'primary.log');
    writeFileSync(primary, `${raw(PRIMARY)}${later.join('\n')}\n`);
    const [alone] = await alertsOf([STANDBY]);
    const [merged, ...more] = await alertsOf([primary, STANDBY]);
    expect(more).toEqual([]);
    expect(merged!.started_at).toBe(alone!.started_at);
    // The log goes on, so the alert ends after the hold-down (60 s, on 5 s steps) from the wait's end, not at the end of the log.
    const endMs = Date.parse(merged!.ended_at!);
    expect(endMs).toBeGreaterThanOrEqual(Date.parse(loggedWait().endIso) + 55_000);
    expect(endMs).toBeLessThan(Date.parse(loggedWait().endIso) + 65_000);
  });

  it('servers are one cluster when their lines show one primary: a second standby that only started (read-only) keeps the DROP in view', async () => {
    // The standby's own start, up to `ready to accept read-only connections`, as a second standby's log.
    const lines = raw(STANDBY).split('\n');
    const ready = lines.findIndex((l) => l.endsWith('database system is ready to accept read-only connections'));
    const standby2 = path.join(suiteTempDir('pgvigil-cluster-logs-'), 'standby2.log');
    writeFileSync(standby2, `${lines.slice(0, ready + 1).join('\n')}\n`);
    const [stalled] = await alertsOf([PRIMARY, STANDBY, standby2]);
    expect(stalled?.summary).toMatch(/, probably for DROP TABLE of \w+ on primary at /);
  });

  it('a 75 s wait: replica-lag-over-lb-limit fires from the standby\'s log once the wait passes 60 s, with nothing logged then', async () => {
    const alerts = await alertsOf([STANDBY_75S]);
    golden('pg18-standby-lock-conflict-75s', alerts);
    const wait = loggedWait(STANDBY_75S);
    const lag = alerts.find((a) => a.rule === 'replica-lag-over-lb-limit');
    // The first 5 s step at which the wait is past 60 s.
    expect(lag?.started_at).toBe(new Date(Math.floor((wait.startMs + 60_000) / 5_000) * 5_000 + 5_000).toISOString());
    expect(lag?.ended_at).toBe(wait.endIso);
    expect(lag?.summary).toMatch(new RegExp(`^standby is at least \\d+ s behind the primary, past the 60 s at which load balancers drop it: replay waiting on a lock held by standby query pid ${wait.pid} `));
  });
});
