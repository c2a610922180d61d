import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RULES_HINT, type AnalyzeReport } from '../report/analyze-text.js';
import { storedIncidentReport } from '../report/stored-incident-report.js';
import { renderIncidentReportText } from '../report/incident-report.js';
import { openStore } from '../store/open-store.js';
import { StoreQueries } from '../store/queries.js';
import { analyzeCaptured as analyze } from '../../test/helpers/analyze-io.js';
import { loadConfig } from '../config/load-config.js';
import type { AnalyzeOptions } from './analyze.js';
import { overlapWarnings } from './analyze-rules.js';

// Relative to the repository root, where vitest runs: evidence cites the path as given.
const REPACK = 'test/fixtures/logs/pg19-stderr-repack-concurrently-holds-back-vacuum/repack-concurrently-holds-back-vacuum.log';
const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-analyze-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function analyzeJson(files: string[], options: AnalyzeOptions = {}): Promise<AnalyzeReport> {
  const { code, stdout, stderr } = await analyze(files, { ...options, json: true });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return JSON.parse(stdout) as AnalyzeReport;
}

/** A PG 15+ autovacuum report as the server writes it with log_line_prefix '%m [%p] %q%u@%d '. */
function autovacuumReport(ts: string, pid: number, table: string, cutoff: number, ageXids: number, dead: number, remain = 2000): string {
  return `${ts} UTC [${pid}] LOG:  automatic vacuum of table "${table}": index scans: 0
\tpages: 0 removed, 11 remain, 11 scanned (100.00% of total)
\ttuples: 0 removed, ${remain} remain, ${dead} are dead but not yet removable
\tremovable cutoff: ${cutoff}, which was ${ageXids} XIDs old when operation ended
\tindex scan not needed: 0 pages from table (0.00% of total) had 0 dead item identifiers removed
\tavg read rate: 0.000 MB/s, avg write rate: 0.000 MB/s
\tbuffer usage: 41 hits, 0 misses, 0 dirtied
\tWAL usage: 0 records, 0 full page images, 0 bytes
\tsystem usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.00 s
`;
}

describe('pgvigil analyze --rules', () => {
  it('reports the alerts with their rule, times, basis and evidence as positions in the log', async () => {
    const report = await analyzeJson([REPACK], { rules: true });
    expect(report.alerts).toHaveLength(1);
    const [alert] = report.alerts!;
    expect(alert).toMatchObject({
      rule: 'repack-holds-vacuum', severity: 'warning', target: 'repack-concurrently-holds-back-vacuum', basis: 'log', ended_at: null,
      started_at: '2026-11-30T07:21:00.000Z',
    });
    expect(alert!.summary).toContain('removable cutoff stuck at XID 753');
    expect(alert!.evidence.facts).toMatchObject({ removable_cutoff_xid: 753, held_databases: 'other', held_tables: 'other.public.hot_counters' });
    // Each position is the REPACK statement or the first line of an autovacuum report in the file.
    const lines = readFileSync(REPACK, 'utf8').split('\n');
    const cited = alert!.evidence.events.map(({ file, line }) => {
      expect(file).toBe(REPACK);
      return lines[line! - 1];
    });
    expect(cited[0]).toMatch(/LOG: {2}statement: REPACK \(CONCURRENTLY\) orders$/);
    expect(cited.slice(1).length).toBeGreaterThanOrEqual(2);
    for (const line of cited.slice(1)) expect(line).toMatch(/LOG: {2}automatic vacuum of table "other\.public\.hot_counters"/);
  });

  it('prints an Alerts section in the text, and nothing about alerts without --rules', async () => {
    const { stdout } = await analyze([REPACK], { rules: true });
    expect(stdout).toMatch(/\nAlerts \(1\)\n {2}WARNING repack-holds-vacuum \(basis: log\) from 2026-11-30T07:21:00\.000Z still open at the end of the log\n {4}REPACK \(CONCURRENTLY\) of shop\.orders has probably held vacuum back/);
    expect(stdout).toMatch(/\n {4}evidence: test\/fixtures\/logs\/.*\.log:\d+, /);
    expect(stdout).toContain('`pgvigil run` beside the server sees its slot');
    const plain = await analyzeJson([REPACK]);
    expect(plain).not.toHaveProperty('alerts');
    const withoutRules = (await analyze([REPACK], {})).stdout;
    expect(withoutRules).not.toContain('Alerts');
    // Notable events and no --rules: the text says how to have the causes named, once, at the end.
    expect(withoutRules.endsWith(`\n\n${RULES_HINT}\n`)).toBe(true);
    expect((await analyze([REPACK], { rules: true })).stdout).not.toContain(RULES_HINT);
    const onlyGeneric = path.join(dir, 'generic.log');
    writeFileSync(onlyGeneric, '2026-11-30 07:20:56.415 UTC [4242] LOG:  duration: 0.035 ms  statement: SELECT 1\n');
    expect((await analyze([onlyGeneric], {})).stdout).not.toContain(RULES_HINT);
  });

  it('resolves an alert once the condition has been gone for the hold-down, on the log\'s time', async () => {
    const file = path.join(dir, 'held-then-released.log');
    writeFileSync(file, [
      autovacuumReport('2026-11-30 07:00:01.000', 101, 'shop.public.orders', 771, 500, 20_000, 40_000),
      autovacuumReport('2026-11-30 07:20:31.000', 102, 'billing.public.invoices', 771, 40_000, 15_000, 40_000),
      autovacuumReport('2026-11-30 07:30:01.000', 103, 'shop.public.orders', 771, 60_000, 30_000, 40_000),
      autovacuumReport('2026-11-30 07:32:01.500', 104, 'shop.public.orders', 70_000, 2, 0, 40_000),
      autovacuumReport('2026-11-30 07:40:00.000', 105, 'shop.public.orders', 70_100, 1, 0, 40_000),
    ].join(''));
    const [alert, ...others] = (await analyzeJson([file], { rules: true })).alerts!;
    expect(others).toEqual([]);
    // Held 30 min (vacuum-held-back's default) at the third report: fires at the end of its 5 s
    // slot and is seen at every slot through the quiet two minutes up to 07:32:00; the release is
    // seen at 07:32:05, and the alert resolves 60 s (the hold-down) after it was last seen,
    // evaluated through the gap before the last report.
    expect(alert).toMatchObject({ rule: 'vacuum-held-back', started_at: '2026-11-30T07:30:05.000Z', ended_at: '2026-11-30T07:33:00.000Z' });
    expect(alert!.summary).toContain('in 2 databases (billing, shop) for 30 min');
    expect(alert!.evidence.events).toEqual([{ file, line: 1 }, { file, line: 10 }, { file, line: 19 }]);
    expect(alert!.evidence.facts).toMatchObject({ next_xid_at_report: 60_771, autovacuum_pids: '101, 102, 103' });
  });

  it('takes the rules a config file turns off and its thresholds (analyze --rules -c)', async () => {
    const file = path.join(dir, 'held-for-25-min.log');
    writeFileSync(file, [
      autovacuumReport('2026-11-30 07:00:01.000', 101, 'shop.public.orders', 771, 500, 20_000, 40_000),
      autovacuumReport('2026-11-30 07:25:01.000', 102, 'shop.public.orders', 771, 40_000, 30_000, 40_000),
    ].join(''));
    const rulesOf = (yaml: string) => {
      const config = path.join(dir, 'analyze-config.yaml');
      writeFileSync(config, yaml);
      return { rules: true, rulesConfig: loadConfig({ file: config, env: {} }).rules };
    };
    // 25 min is short of vacuum-held-back's 30 by default; a config's 20 min makes it an alert.
    expect((await analyzeJson([file], { rules: true })).alerts).toEqual([]);
    const lowered = await analyzeJson([file], rulesOf('rules:\n  thresholds:\n    vacuum-held-back: { min_held_ms: 20m }\n'));
    expect(lowered.alerts).toEqual([expect.objectContaining({ rule: 'vacuum-held-back', started_at: '2026-11-30T07:25:01.000Z' })]);
    const disabled = rulesOf('rules:\n  disabled: [vacuum-held-back]\n  thresholds:\n    vacuum-held-back: { min_held_ms: 20m }\n');
    expect((await analyzeJson([file], disabled)).alerts).toEqual([]);
  });

  it('ends at the end of the log an alert whose condition is gone there but whose hold-down has not run out', async () => {
    const file = path.join(dir, 'released-at-the-end.log');
    writeFileSync(file, [
      autovacuumReport('2026-11-30 07:00:01.000', 101, 'shop.public.orders', 771, 500, 20_000, 40_000),
      autovacuumReport('2026-11-30 07:30:01.000', 102, 'shop.public.orders', 771, 60_000, 30_000, 40_000),
      autovacuumReport('2026-11-30 07:30:41.500', 103, 'shop.public.orders', 70_000, 2, 0, 40_000),
    ].join(''));
    const [alert] = (await analyzeJson([file], { rules: true })).alerts!;
    expect(alert).toMatchObject({ rule: 'vacuum-held-back', started_at: '2026-11-30T07:30:05.000Z', ended_at: '2026-11-30T07:30:41.500Z' });
  });

  it('raises nothing for a 30 s hold 10-40 XIDs old: a busy server\'s every minute', async () => {
    const file = path.join(dir, 'held-for-seconds.log');
    writeFileSync(file, [
      autovacuumReport('2026-11-30 07:00:01.000', 101, 'shop.public.orders', 771, 10, 500),
      autovacuumReport('2026-11-30 07:00:31.000', 102, 'billing.public.invoices', 771, 40, 900),
      autovacuumReport('2026-11-30 07:02:01.500', 103, 'shop.public.orders', 950, 2, 0),
    ].join(''));
    expect((await analyzeJson([file], { rules: true })).alerts).toEqual([]);
  });

  it('with --db stores every event and the alerts, which `pgvigil report` then shows with their basis', async () => {
    const db = path.join(dir, 'store.db');
    const report = await analyzeJson([REPACK], { rules: true, db });
    const store = openStore(db, { readonly: true });
    try {
      expect(store.prepare('SELECT count(*) FROM events').pluck().get()).toBe(report.summary.events);
      const from = Date.parse('2026-11-30T07:00:00Z');
      const stored = storedIncidentReport(new StoreQueries(store), { fromMs: from, toMs: from + 3_600_000, target: null });
      expect(stored.alerts).toEqual([expect.objectContaining({ rule: 'repack-holds-vacuum', state: 'firing', basis: 'log', summary: report.alerts![0]!.summary })]);
      expect(renderIncidentReportText(stored)).toMatch(/still firing; basis: log/);
    } finally {
      store.close();
    }
  });

  it('replays nothing and reports no alert for a log without events', async () => {
    const file = path.join(dir, 'empty.log');
    writeFileSync(file, '');
    expect((await analyzeJson([file], { rules: true })).alerts).toEqual([]);
  });
  it('says when a file of one server starts well before the files of that server read before it end', async () => {
    // The same server's log cut in two at a line: its sequel, no warning.
    const lines = readFileSync(REPACK, 'utf8').split('\n');
    let cut = Math.floor(lines.length / 2);
    while (lines[cut]?.startsWith('\t')) cut++;
    const [first, second] = [path.join(dir, 'first.log'), path.join(dir, 'second.log')];
    writeFileSync(first, `${lines.slice(0, cut).join('\n')}\n`);
    writeFileSync(second, lines.slice(cut).join('\n'));
    expect((await analyze([first, second], { rules: true, json: true, target: 'db1' })).stderr).toBe('');
    // A copy of it covers the same minutes, as a standby's log does: its own server, nothing to say.
    const copy = path.join(dir, 'standby.log');
    writeFileSync(copy, readFileSync(REPACK));
    expect((await analyze([REPACK, copy], { rules: true, json: true })).stderr).toBe('');
    // Given one server's name, they are read one after the other as one server: said.
    const { code, stderr } = await analyze([REPACK, copy], { rules: true, json: true, target: 'db1' });
    expect(code).toBe(0);
    expect(stderr).toMatch(/^pgvigil analyze: .*standby\.log starts at 2026-11-30T07:\d\d:\d\d\.\d+Z, before .*repack-concurrently-holds-back-vacuum\.log ends \(.*\), and both are read as server db1: logs of several servers\? give each its own with --target name=FILE/);
    // Without --rules the order of reading changes no judgement: nothing to say.
    expect((await analyze([REPACK, copy], { json: true, target: 'db1' })).stderr).toBe('');
  });

  it('refuses a --target naming a file it is not given, with exit 2', async () => {
    const { code, stderr } = await analyze([REPACK], { rules: true, target: ['db1=elsewhere.log'] });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^pgvigil analyze: --target db1=elsewhere\.log: elsewhere\.log is not among the files analyzed/);
  });

  it('allows a rotated file to start within 1 s of the end of the one before', () => {
    const t = Date.parse('2026-11-30T07:00:00Z');
    const target = 'db1';
    expect(overlapWarnings([{ file: 'a', target, firstMs: t, lastMs: t + 600_000 }, { file: 'b', target, firstMs: t + 599_000, lastMs: t + 900_000 }])).toEqual([]);
    expect(overlapWarnings([{ file: 'a', target, firstMs: t, lastMs: t + 600_000 }, { file: 'b', target, firstMs: t + 598_999, lastMs: t + 900_000 }])).toHaveLength(1);
    // Compared with the latest end so far of the same server, not only the file just before.
    expect(overlapWarnings([
      { file: 'a', target, firstMs: t, lastMs: t + 600_000 }, { file: 'b', target, firstMs: t - 3_600_000, lastMs: t - 3_000_000 },
      { file: 'x', target: 'db2', firstMs: t - 3_600_000, lastMs: t }, { file: 'c', target, firstMs: t + 100_000, lastMs: t + 200_000 },
    ]).map((w) => w.split(' ')[0])).toEqual(['b', 'c']);
  });
});
