/**
 * The contract between rules and their inputs: every series a rule reads is one some collector
 * declares, and every event kind a rule reads is one the classifiers produce. A rule reading a
 * name nothing writes can never fire (repack-change-ceiling once read `..._hours_until_ceiling`
 * while the collector wrote `..._seconds_until_ceiling`).
 *
 * The names are found by running the rules, not by reading their source: every rule of the
 * catalog evaluates over a recording view (every-input-view.ts) that answers every series query
 * with a matching series (at several values, so thresholds on both sides are crossed) and every
 * event query from a set of REPACK, DROP and vacuum events; the view records each name and kind
 * asked for. A new rule is covered without editing this test. Exported `pg_*` string constants of the rule modules (shared
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
import { EVENT_KINDS, type EventKind } from '../domain/index.js';
import { SCHEDULER_METRICS } from '../sources/poll-scheduler.js';
import { buildRules } from './catalog.js';
import { EVENTS, EveryInputView, NOW, SAMPLE_VALUES } from './every-input-view.js';

function recordRules(): { seriesNames: Set<string>; kinds: Set<EventKind> } {
  const seriesNames = new Set<string>();
  const kinds = new Set<EventKind>();
  for (const value of SAMPLE_VALUES) {
    for (const rule of buildRules({ disabled: [], thresholds: {} })) {
      const view = new EveryInputView(value, EVENTS);
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

/**
 * Kinds the classifiers produce from the recorded real logs: every scenario (PG 15 and 18,
 * stderr), and the rule tests' real logs (test/fixtures/rule-logs: a damaged page, REPACK runs).
 */
async function classifiedKinds(): Promise<Set<EventKind>> {
  const kinds = new Set<EventKind>();
  const cases = listCases().filter((name) => name.startsWith(caseName(18, 'stderr', '')) || name.startsWith(caseName(15, 'stderr', '')));
  for (const name of cases) {
    const dir = path.join(FIXTURES_DIR, name);
    const fixture = readCase(dir);
    const parsed = await parseLogFile(path.join(dir, fixture.log_file), { format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone });
    for (const e of parsed.events) kinds.add(e.kind);
  }
  const ruleLogs = fileURLToPath(new URL('../../test/fixtures/rule-logs/', import.meta.url));
  for (const file of fs.readdirSync(ruleLogs).filter((f) => f.endsWith('.log'))) {
    const parsed = await parseLogFile(path.join(ruleLogs, file), { format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'UTC' });
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
