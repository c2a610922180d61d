/**
 * `pgvigil analyze --rules` on the logs of a real PostgreSQL 18 primary and standby through seed
 * 003's incident (test/fixtures/cluster-logs/pg18-drop-table-standby-lock-conflict): replay waits
 * 30 s on a standby reader's lock while nothing is logged, so only an engine that evaluates as the
 * log's time passes (src/rules/replay.ts) sees the stall. Alerts against golden files in
 * test/fixtures/analyze-rules/ (UPDATE_GOLDEN=1 rewrites them; review the diff); the facts each
 * must state are read from the raw logs independently of the parser.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OfflineAlert } from '../../src/report/alerts-text.js';
import type { AnalyzeReport } from '../../src/report/analyze-text.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { expectGolden } from '../helpers/golden-file.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CASE = 'test/fixtures/cluster-logs/pg18-drop-table-standby-lock-conflict';
const PRIMARY = path.join(CASE, 'primary.log');
const STANDBY = path.join(CASE, 'standby.log');
const GOLDEN_DIR = path.join(ROOT, 'test/fixtures/analyze-rules');

const raw = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const STILL_WAITING = /^(\S+ \S+) UTC \[(\d+)\] LOG: {2}recovery still waiting after ([\d.]+) ms: recovery conflict on lock\n\S+ \S+ UTC \[\d+\] DETAIL: {2}Conflicting process: (\d+)\./m;
const FINISHED = /^(\S+ \S+) UTC \[\d+\] LOG: {2}recovery finished waiting after [\d.]+ ms: recovery conflict on lock$/m;

/** The wait as the standby logged it: when it began, who was in the way, when it ended. */
function loggedWait(): { startMs: number; pid: number; endIso: string } {
  const waiting = STILL_WAITING.exec(raw(STANDBY))!;
  const finished = FINISHED.exec(raw(STANDBY))!;
  return {
    startMs: Date.parse(`${waiting[1]!.replace(' ', 'T')}Z`) - Number(waiting[3]),
    pid: Number(waiting[4]),
    endIso: new Date(`${finished[1]!.replace(' ', 'T')}Z`).toISOString(),
  };
}

async function alertsOf(files: string[]): Promise<OfflineAlert[]> {
  const { code, stdout, stderr } = await analyzeCaptured(files, { rules: true, json: true });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return (JSON.parse(stdout) as AnalyzeReport).alerts!;
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
});
