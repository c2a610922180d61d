import { describe, expect, it } from 'vitest';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0 } from './series-notation.js';
import { DEFAULTS, tempFileSpills } from './temp-file-spills.js';

const at = (step: number) => T0 + step * STEP;
const rule = tempFileSpills(DEFAULTS);
const MB = 1024 ** 2;

const REPORT = "SELECT customer_id, sum(total) FROM orders WHERE region = 'eu' GROUP BY 1 ORDER BY 2 DESC";
const spill = (step: number, sizeMb: number, statement: string | null = REPORT, database = 'shop', pid = 4100) =>
  eventOf('temp_file', { path: `base/pgsql_tmp/pgsql_tmp${pid}.${step}`, size_bytes: sizeMb * MB, statement }, { tsMs: at(step), database, pid });

const evaluate = (events: RuleEvent[], step: number) => rule.evaluate(new MemoryRuleView({ events }).at(at(step)), at(step));

describe('temp-file-spills at its defaults (1 GB in 5 min)', () => {
  it('one info alert per statement shape past 1 GB: literals do not split it; files, bytes, largest and the statement said', () => {
    const events = [spill(0, 400), spill(10, 300, REPORT.replace("'eu'", "'us'"), 'shop', 4101), spill(20, 324)];
    const findings = evaluate(events, 20);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.summary).toBe(
      '3 temporary files, 1.0 GB written since 00:00:00 UTC (largest 400 MB) by ' +
      'SELECT customer_id, sum(total) FROM orders WHERE region = ? GROUP BY ? ORDER BY ? DESC in shop on primary: ' +
      'its sorts or hashes outgrow work_mem (maintenance_work_mem for CREATE INDEX); raise it for this statement, or make it read fewer rows',
    );
    expect(findings[0]!.dedupKey).toMatch(/^temp-file-spills\/primary\/shop\/[0-9a-f]{12}$/);
    expect(findings[0]!.labels).toEqual({ database: 'shop' });
    expect(findings[0]!.evidence.eventIds).toEqual(events.map((e) => e.id));
    expect(findings[0]!.evidence.facts).toMatchObject({ temp_files: 3, total_bytes: 1024 * MB, largest_bytes: 400 * MB, pids: '4100, 4101' });
    // An alert leaves the machine: the statement's literals do not.
    expect(findings[0]!.evidence.facts.statement).not.toContain("'");
    expect(rule.severity).toBe('info');
  });

  const cases: Array<[string, RuleEvent[], number, number]> = [
    ['near miss: 1 MB short of 1 GB', [spill(0, 512), spill(10, 511)], 10, 0],
    ['one file of a GB is enough', [spill(0, 1024)], 0, 1],
    ['the same GB spread over more than 5 min stays quiet', [spill(0, 400), spill(40, 400), spill(80, 400)], 80, 0],
    ['two statements of 600 MB each: neither reaches it', [spill(0, 600), spill(1, 600, 'SELECT * FROM events ORDER BY ts')], 1, 0],
    ['one statement in two databases: two alerts', [spill(0, 1024), spill(1, 1024, REPORT, 'billing')], 1, 2],
    ['a statement that was not logged is its own cause', [spill(0, 1024, null), spill(1, 1024)], 1, 2],
    ['quiet 5 min after the last file', [spill(0, 1024)], 61, 0],
  ];
  for (const [name, events, step, alerts] of cases) it(name, () => expect(evaluate(events, step)).toHaveLength(alerts));

  it('says so when the statement was not logged', () => {
    expect(evaluate([spill(0, 2048, null, 'shop')], 0)[0]!.summary).toMatch(/^1 temporary file, 2.0 GB written .* by a statement that was not logged in shop on primary: /);
  });

  it('keeps one alert while the statement keeps spilling (its count updated) and resolves 5 min after the last file', () => {
    const events = [spill(0, 600), spill(30, 600), spill(60, 100)];
    const transitions = timeline([rule], new MemoryRuleView({ events }), instants(0, 150), { refireMinIntervalMs: 0 });
    const key = transitions[0]!.dedupKey;
    expect(transitionSteps(transitions)).toEqual([['fire', key, 30], ['fire', key, 60], ['resolve', key, 121]]);
    expect(transitions.map((t) => t.summary?.slice(0, 19))).toEqual(['2 temporary files, ', '3 temporary files, ', undefined]);
  });
});

describe('temp-file-spills at volume', () => {
  it('names the largest of 200,000 files in one episode (a hash join writing batch files by the thousand)', () => {
    const files = Array.from({ length: 200_000 }, (_, i) =>
      eventOf('temp_file', { path: `base/pgsql_tmp/pgsql_tmp4100.${i}`, size_bytes: i === 7 ? 64 * MB : 8192, statement: REPORT }, { tsMs: at(1) + i, database: 'shop', pid: 4100 }));
    const big = tempFileSpills({ ...DEFAULTS, minBytes: MB });
    const [finding] = big.evaluate(new MemoryRuleView({ events: files }).at(at(1) + 200_000), at(1) + 200_000);
    expect(finding?.evidence.facts.largest_bytes).toBe(64 * MB);
  });
});
