/**
 * vacuum-held-back over holds recorded on real PostgreSQL 15, 18 and 19rc1 servers
 * (test/fixtures/logs): a standby's hot_standby_feedback holding two databases, an unconsumed
 * logical slot holding the catalogs of two. Each hold lasts seconds: under the defaults the rule
 * must stay quiet all along (a busy server holds its horizon that long all day); with thresholds
 * of seconds it must still read the scope right from the real reports (server-wide, catalogs only).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuleEvent } from '../../src/rules/rule-view.js';
import { MemoryRuleView } from '../../src/rules/memory-rule-view.js';
import { timeline } from '../../src/rules/rule-timeline.js';
import { DEFAULTS, vacuumHeldBack } from '../../src/rules/vacuum-held-back.js';
import { caseName, FIXTURES_DIR, readCase } from '../helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';

async function reportsOf(major: number, scenario: string): Promise<Array<RuleEvent<'autovacuum'>>> {
  const dir = path.join(FIXTURES_DIR, caseName(major, 'stderr', scenario));
  const fixture = readCase(dir);
  const { events } = await parseLogFile(path.join(dir, fixture.log_file), {
    format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone, target: 'primary',
  });
  return events.flatMap((e, i) => (e.kind === 'autovacuum' ? [{ ...e, id: i + 1 } as RuleEvent<'autovacuum'>] : []));
}

/** Every second from the first report to a minute after the last. */
function everySecond(reports: ReadonlyArray<{ tsMs: number }>): number[] {
  const first = Math.floor(reports[0]!.tsMs / 1000) * 1000;
  const last = reports[reports.length - 1]!.tsMs + 60_000;
  return Array.from({ length: (last - first) / 1000 + 1 }, (_, i) => first + i * 1000);
}

/** Thresholds of seconds: any report with a dead row not removable at a cutoff behind for a second. */
const SECONDS = vacuumHeldBack({ ...DEFAULTS, minAgeXids: 1, minHeldMs: 1_000, minDeadTuples: 1, minDeadPercent: 0 });

describe('vacuum-held-back on real holds of seconds', () => {
  for (const major of [15, 18, 19]) {
    it(`pg${major} standby with hot_standby_feedback holding two databases: quiet under the defaults; server-wide with thresholds of seconds`, async () => {
      const reports = await reportsOf(major, 'standby-feedback-holds-vacuum');
      const view = new MemoryRuleView({ events: reports });
      expect(timeline([vacuumHeldBack(DEFAULTS)], view, everySecond(reports))).toEqual([]);
      const fired = timeline([SECONDS], view, everySecond(reports)).filter((t) => t.action === 'fire');
      expect(new Set(fired.map((t) => t.dedupKey))).toEqual(new Set(['vacuum-held-back/primary/tables']));
      const held = reports.filter((e) => (e.details.tuples_dead_not_removable ?? 0) > 0);
      const cutoffs = new Set(held.map((e) => e.details.removable_cutoff_xid));
      expect(cutoffs.size).toBe(1);
      const widest = fired.find((t) => t.alert!.evidence.facts.held_databases === 'fb_other, postgres');
      expect(widest?.summary).toMatch(/^vacuum held back in 2 databases \(fb_other, postgres\) for \d+ s .*; probably a server-wide holder/);
      expect(widest?.alert!.evidence.facts).toMatchObject({ removable_cutoff_xid: [...cutoffs][0], holder_scope: 'cluster' });
    });

    it(`pg${major} unconsumed logical slot holding the catalogs: quiet under the defaults; catalogs only with thresholds of seconds`, async () => {
      const reports = await reportsOf(major, 'logical-slot-holds-catalogs');
      const view = new MemoryRuleView({ events: reports });
      expect(timeline([vacuumHeldBack(DEFAULTS)], view, everySecond(reports))).toEqual([]);
      const fired = timeline([SECONDS], view, everySecond(reports)).filter((t) => t.action === 'fire');
      expect(new Set(fired.map((t) => t.dedupKey))).toEqual(new Set(['vacuum-held-back/primary/catalogs']));
      const catalogs = fired.at(-1)!;
      expect(catalogs.summary).toContain('only system catalogs are held: probably a logical replication slot\'s catalog_xmin');
      expect(String(catalogs.alert!.evidence.facts.held_tables)).toMatch(/pg_catalog\./);
    });
  }
});
