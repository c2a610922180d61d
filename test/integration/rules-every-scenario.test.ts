/**
 * Every rule over every recorded scenario: each golden log of every major (test/fixtures/logs,
 * listCases()) replayed by `pgvigil analyze --rules`, and each scenario's alerts checked against
 * the list of rules allowed to fire on it. Any other rule must stay quiet: a rule that starts
 * firing on a lock wait, a checkpoint or a crash it has nothing to say about fails here, on real
 * logs, before an operator sees it. One format per recording (stderr): the formats of one recording
 * give the same alerts (analyze-rules-real-logs.test.ts).
 *
 * When a rule change makes an alert appear or go: if the new behaviour is right, edit ALLOWED
 * below (the failure names the case and the rule); an allowance that no case fires any more fails
 * too, so the lists stay as tight as the rules.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnalyzeReport } from '../../src/report/analyze-text.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { FIXTURES_DIR, listCases, readCase } from '../helpers/scenarios/fixture-case.js';

/** A rule allowed on some majors only, and why. */
interface OnMajors {
  rule: string;
  majors: readonly number[];
  why: string;
}

type Allowed = string | OnMajors;

// PG 13 has no log_recovery_conflict_waits: the cancellations alone are what the replay sees of the stall.
const REPLAY_STALLED_ON_13: OnMajors = { rule: 'replay-stalled', majors: [13], why: 'no "recovery still waiting" lines before 14' };

const ALLOWED: Readonly<Record<string, readonly Allowed[]>> = {
  'autovacuum-4-indexes': [],
  // Held for one autovacuum run, seconds: one report is not a stuck cutoff.
  'autovacuum-held-back-by-snapshot': [],
  'backend-killed-crash-restart': ['server-crashed'],
  'checkpoint-requested': [],
  deadlock: ['deadlocks'],
  'errors-with-context': ['statement-timeouts'],
  'idle-in-transaction-timeout': [],
  'lock-waits-and-lock-timeout': ['lock-timeouts'],
  'log-statement-all': [],
  'log-statement-ddl': [],
  'logical-slot-holds-catalogs': [],
  'logical-slot-invalidated': ['replication-slot-danger'],
  // The server's own warning that the multixact members space runs out (468fa3f).
  'multixact-members-run-short': ['wraparound-approaching'],
  'parallel-autovacuum': [],
  'parallel-autovacuum-insert-only': [],
  'parallel-autovacuum-starved': [],
  'repack-concurrently-holds-back-vacuum': ['repack-holds-vacuum'],
  'repack-lock-timeout-at-swap': ['repack-lost-at-swap'],
  'seed-autovacuum-parallel': [],
  'seed-autovacuum-serial': [],
  'server-killed-crash-recovery': ['server-crashed'],
  'standby-buffer-pin-conflicts': ['recovery-conflict-cancellations', REPLAY_STALLED_ON_13],
  'standby-feedback-holds-vacuum': [],
  'standby-recovery-conflicts': ['recovery-conflict-cancellations', REPLAY_STALLED_ON_13],
  'standby-tablespace-conflict': ['recovery-conflict-cancellations', REPLAY_STALLED_ON_13],
  'statement-timeout': ['statement-timeouts'],
  'temp-files-sort': [],
  'transaction-timeout': [],
};

function allowedOn(scenario: string, major: number): Set<string> {
  return new Set((ALLOWED[scenario] ?? []).flatMap((a) => (typeof a === 'string' ? [a] : a.majors.includes(major) ? [a.rule] : [])));
}

const cases = listCases().map((name) => ({ name, ...readCase(path.join(FIXTURES_DIR, name)) })).filter((c) => c.format === 'stderr');
/** Rules each case fired, filled as the cases run. */
const fired = new Map<string, Set<string>>();

describe('every rule over every recorded scenario', () => {
  it('has an allowed list for each scenario recorded, and none for a scenario that is not', () => {
    const recorded = [...new Set(cases.map((c) => c.scenario))].sort();
    expect(Object.keys(ALLOWED).sort()).toEqual(recorded);
  });

  for (const c of cases) {
    it(`${c.name}: only ${[...allowedOn(c.scenario, c.major)].join(', ') || 'no rule'} may fire`, async () => {
      const { code, stdout, stderr } = await analyzeCaptured([path.join(FIXTURES_DIR, c.name, c.log_file)], { rules: true, json: true });
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const alerts = (JSON.parse(stdout) as AnalyzeReport).alerts ?? [];
      const rules = new Set(alerts.map((a) => a.rule));
      fired.set(c.name, rules);
      const allowed = allowedOn(c.scenario, c.major);
      const unexpected = alerts.filter((a) => !allowed.has(a.rule)).map((a) => `${a.rule}: ${a.summary}`);
      expect(unexpected, `rules not allowed on ${c.scenario} fired; if that is right, add them to ALLOWED['${c.scenario}'] in this file`).toEqual([]);
    });
  }

  it('allows nothing that no case fires any more', (ctx) => {
    // A case that failed to replay fails on its own; one left out by a -t filter says nothing here.
    if (fired.size < cases.length) ctx.skip(`only ${fired.size} of ${cases.length} cases replayed`);
    const unused = Object.entries(ALLOWED).flatMap(([scenario, allowed]) => allowed.flatMap((a) => {
      const rule = typeof a === 'string' ? a : a.rule;
      const firedSomewhere = cases.some((c) => c.scenario === scenario && allowedOn(scenario, c.major).has(rule) && fired.get(c.name)?.has(rule));
      return firedSomewhere ? [] : [`${scenario}: ${rule}`];
    }));
    expect(unused, 'allowances no case uses: remove them from ALLOWED').toEqual([]);
  });
});
