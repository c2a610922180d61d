import { describe, expect, it } from 'vitest';
import type { GenericDetails } from '../domain/index.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0 } from './series-notation.js';
import { DEFAULTS, walArchivingFailing } from './wal-archiving-failing.js';

// Steps of one minute, as the archiver retries: the default sustain (10 min) is ten of them.
const STEP = 60_000;
const SUSTAIN_STEPS = DEFAULTS.sustainMs / STEP;
const at = (step: number) => T0 + step * STEP;
const rule = walArchivingFailing();
const WAL = '000000010000000000000007';

/**
 * pg_stat_archiver as sampled once a minute, one letter per sample: `o` a segment archived since
 * the last sample, `f` three failed attempts and nothing archived, `F` failing but no attempt since
 * the last sample (failed_count flat), `q` nothing to archive, `-` archive_mode off (never archived,
 * never failed).
 */
function archiver(pattern: string, o: { target?: string; ready?: number } = {}): SeriesData[] {
  const target = o.target ?? 'primary';
  const points = { archived: [] as number[], failed: [] as number[], archivedAge: [] as Array<number | null>, failedAge: [] as Array<number | null> };
  let archived = 40;
  let failed = 0;
  let lastArchivedStep: number | null = pattern.startsWith('-') ? null : -1;
  let lastFailedStep: number | null = null;
  [...pattern].forEach((c, step) => {
    if (c === 'o') {
      archived++;
      lastArchivedStep = step;
    } else if (c === 'f') {
      failed += 3;
      lastFailedStep = step;
    }
    points.archived.push(archived);
    points.failed.push(failed);
    // Both ages by the server's clock, a second after its last attempt.
    points.archivedAge.push(lastArchivedStep === null ? null : (step - lastArchivedStep) * 60 + 1);
    points.failedAge.push(lastFailedStep === null ? null : (step - lastFailedStep) * 60 + (c === 'F' ? 30 : 0.5));
  });
  const series = (name: string, values: Array<number | null>, labels: Record<string, string> = {}): SeriesData =>
    ({ name, target, labels, points: values.map((value, step) => ({ tsMs: at(step), value })) });
  return [
    series('pg_stat_archiver_archived_count_total', points.archived),
    series('pg_stat_archiver_failed_count_total', points.failed),
    series('pg_stat_archiver_last_archived_age_seconds', points.archivedAge),
    series('pg_stat_archiver_last_failed_age_seconds', points.failedAge),
    series('pg_stat_archiver_ready_wal_files', points.failed.map(() => o.ready ?? 4)),
    series('pg_stat_archiver_info', points.failed.map(() => 1), { last_archived_wal: '000000010000000000000006', last_failed_wal: pattern.includes('f') ? WAL : '' }),
  ];
}

/** The archiver's LOG line with its DETAIL, as a generic event (nothing classifies it). */
const failureLine = (step: number, message = 'archive command failed with exit code 1', target = 'primary'): RuleEvent =>
  eventOf('generic', { classified: false, detail: 'The failed archive command was: /usr/local/bin/archive-wal pg_wal/000000010000000000000007 s3://backups/wal' } satisfies GenericDetails,
    { tsMs: at(step) - 500, pid: 4711, message, target });

const failingFor = (steps: number) => `oo${'f'.repeat(steps + 1)}`;

const evaluateAt = (series: SeriesData[], step: number, events: RuleEvent[] = []) =>
  rule.evaluate(new MemoryRuleView({ series, events, staleAfterMs: 2 * STEP }).at(at(step)), at(step));

describe('wal-archiving-failing at its defaults', () => {
  it('fires after 10 min of failures with nothing archived, naming the segment, the backlog and the failure the archiver logged', () => {
    const steps = SUSTAIN_STEPS + 2;
    const [finding] = evaluateAt(archiver(failingFor(SUSTAIN_STEPS)), steps, [failureLine(steps - 1), failureLine(steps)]);
    expect(finding?.summary).toBe(
      `WAL archiving on primary has failed for 10 min (since 00:02:00 UTC): ${WAL} is not archived, 30 failed attempts in that time; ` +
      '4 WAL files wait in pg_wal; last success 11 min ago; the archiver logged "archive command failed with exit code 1" for ' +
      '`/usr/local/bin/archive-wal pg_wal/000000010000000000000007 s3://backups/wal`: pg_wal grows until archive_command succeeds',
    );
    expect(finding?.dedupKey).toBe('wal-archiving-failing/primary');
    expect(finding?.evidence.eventIds).toHaveLength(1);
    expect(finding?.evidence.facts).toMatchObject({ last_failed_wal: WAL, failed_attempts: 30, ready_wal_files: 4, failure: 'archive command failed with exit code 1' });
    expect(finding?.evidence.series.map((s) => s.name)).toEqual([
      'pg_stat_archiver_archived_count_total', 'pg_stat_archiver_failed_count_total', 'pg_stat_archiver_last_archived_age_seconds',
      'pg_stat_archiver_last_failed_age_seconds', 'pg_stat_archiver_info', 'pg_stat_archiver_ready_wal_files',
    ]);
  });

  const quiet: Array<[string, SeriesData[], number]> = [
    ['near miss: failing one minute less than the sustain', archiver(failingFor(SUSTAIN_STEPS - 1)), SUSTAIN_STEPS + 1],
    ['a flaky archive: a failure now and then, each followed by a success', archiver('oofofofofofofofofofofoof'), 23],
    ['a busy server archiving every minute', archiver('o'.repeat(20)), 19],
    ['a quiet server: nothing to archive for 20 min, nothing failed', archiver(`o${'q'.repeat(20)}`), 20],
    ['archive_mode = off: never archived, never failed', archiver('-'.repeat(20)), 19],
    ['failing but no attempt for the whole sustain (failed_count flat)', archiver(`oof${'F'.repeat(SUSTAIN_STEPS + 1)}`), SUSTAIN_STEPS + 3],
  ];
  for (const [name, series, step] of quiet) it(`quiet: ${name}`, () => expect(evaluateAt(series, step)).toEqual([]));

  it('says when nothing was ever archived since the statistics were reset, and leaves out what the log did not say', () => {
    const series = archiver(`-${'f'.repeat(SUSTAIN_STEPS + 1)}`);
    const [finding] = evaluateAt(series, SUSTAIN_STEPS + 1, [failureLine(SUSTAIN_STEPS, 'archive command failed with exit code 1', 'other')]);
    expect(finding?.summary).toMatch(/is not archived, 30 failed attempts in that time; 4 WAL files wait in pg_wal; nothing archived since the statistics were reset: pg_wal grows/);
    expect(finding?.evidence.eventIds).toEqual([]);
  });

  it('names a command the shell could not run (FATAL, exit 127) and a command ended by a signal', () => {
    const series = archiver(failingFor(SUSTAIN_STEPS));
    for (const message of ['archive command failed with exit code 127', 'archive command was terminated by signal 9: Killed']) {
      const [finding] = evaluateAt(series, SUSTAIN_STEPS + 2, [failureLine(SUSTAIN_STEPS + 1, message)]);
      expect(finding?.summary).toContain(`the archiver logged "${message}" for \`/usr/local/bin/archive-wal`);
    }
  });

  it('says "for more than" when the failures began before the samples it reads', () => {
    const lookbackSteps = DEFAULTS.lookbackMs / STEP;
    const [finding] = evaluateAt(archiver('f'.repeat(lookbackSteps + 10)), lookbackSteps + 9);
    expect(finding?.summary).toMatch(/^WAL archiving on primary has failed for more than 60 min: /);
  });

  it('fires once while it lasts and resolves at the first segment archived', () => {
    const pattern = `${failingFor(SUSTAIN_STEPS + 3)}oo`;
    const view = new MemoryRuleView({ series: archiver(pattern), staleAfterMs: 2 * STEP });
    // Refreshes of the summary (its counts) left out: one alert, fired then resolved.
    const steps = transitionSteps(timeline([rule], view, instants(0, pattern.length - 1, STEP), { refireMinIntervalMs: 3_600_000 }), T0, STEP);
    expect(steps).toEqual([
      ['fire', 'wal-archiving-failing/primary', SUSTAIN_STEPS + 2],
      ['resolve', 'wal-archiving-failing/primary', pattern.length - 2],
    ]);
  });

  it('judges each server on its own', () => {
    const findings = evaluateAt([...archiver(failingFor(SUSTAIN_STEPS)), ...archiver('o'.repeat(SUSTAIN_STEPS + 3), { target: 'replica' })], SUSTAIN_STEPS + 2);
    expect(findings.map((f) => f.target)).toEqual(['primary']);
  });
});
