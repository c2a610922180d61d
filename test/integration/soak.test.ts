/**
 * The soak's short form: `pgvigil run` (built: `npm run build` first) watching a busy PostgreSQL
 * 18 for SOAK_TEST_SECONDS (default 30) with an 8 s retention that prunes every 4 s
 * (bench/lib/soak.ts). Half a minute cannot tell a leak of a few kB a poll from a garbage
 * collector's sawtooth: that judgement is `npm run bench -- soak` (an hour, trends per hour,
 * judgeSoak below). What it asserts is what so short a run shows: the daemon keeps up with the
 * log, retention deletes and bounds the store, descriptors do not grow poll after poll, SIGTERM
 * ends it with 0. The event-loop delay is judged only when the machine has cores to spare; otherwise
 * that test is skipped with the load it saw (counted in the run's closing skip summary).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSoak, runSoak, soakFigures, type SoakResult } from '../../bench/lib/soak.js';
import { judgeLag, judgeSoak, SOAK_LIMITS, trendOf, type Trend } from '../../bench/lib/soak-figures.js';
import { destroyAllServers } from '../helpers/pg-harness.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const SECONDS = Number(process.env.SOAK_TEST_SECONDS ?? 30);
const RETENTION_MS = 8_000;
const RETENTION_EVERY_MS = 4_000;
// An event written late (the tailer behind the log by a few seconds on a loaded machine) may
// outlive one retention run: the bound allows one such lag, and stays well under the run's length.
const WRITE_LAG_MS = 6_000;

describe('trendOf', () => {
  const run = (f: (t: number) => number) => Array.from({ length: 30 }, (_, i) => ({ t: i * 5, value: f(i * 5) }));

  it('sees no growth in a flat line with noise and a warm-up', () => {
    const trend = trendOf(run((t) => (t < 40 ? 50 + t : 90) + (t % 15 === 0 ? 4 : -4)));
    expect(trend.growth).toBeCloseTo(1, 1);
    expect(trend.first).toBe(54);
    expect(trend.last).toBe(86);
  });

  it('sees a steady leak as growth between the second and last thirds, and its rate per hour', () => {
    const trend = trendOf(run((t) => 100 + t));
    expect(trend.growth).toBeGreaterThan(1.2);
    expect(trend.perHour).toBeCloseTo(3600, 5);
  });
});

describe('judgeSoak', () => {
  const MB = 1_048_576;
  // Samples every 15 s for an hour: a flat figure with a sawtooth, or the same plus a leak.
  const hour = (base: number, leakPerPoll: number): Trend =>
    trendOf(Array.from({ length: 240 }, (_, i) => ({ t: i * 15, value: base + ((i % 4) - 1.5) * MB + leakPerPoll * (i * 15 / 2) })));
  const figures = (leakPerPollBytes: number) => ({
    rss: hour(150 * MB, leakPerPollBytes), heapUsed: hour(45 * MB, leakPerPollBytes), openFds: trendOf(Array.from({ length: 9 }, (_, i) => ({ t: i, value: 28 }))),
    storeSize: hour(10 * MB, 0), lagP99Median: 0.02, loadAverage: 1, cores: 2,
  });

  it('finds a GC sawtooth flat, and a leak of 4 kB a poll (7 MB an hour) a leak', () => {
    const over = (leakPerPollBytes: number) => judgeSoak(figures(leakPerPollBytes)).filter((v) => v.ok === false).map((v) => v.figure);
    expect(judgeSoak(figures(0)).map((v) => v.ok)).toEqual([true, true, true, true, true]);
    expect(over(1024)).toEqual([]);
    expect(over(4096)).toEqual(['heap used']);
    expect(over(8192)).toEqual(['RSS', 'heap used']);
  });

  it('does not judge the event-loop delay on a machine with several times as many processes as cores, and says so', () => {
    expect(judgeLag({ lagP99Median: 0.5, loadAverage: 9, cores: 2 })).toMatchObject({ ok: null, says: expect.stringContaining('load average 9.0 on 2 cores') });
    expect(judgeLag({ lagP99Median: 0.5, loadAverage: 1, cores: 2 }).ok).toBe(false);
    expect(judgeLag({ lagP99Median: SOAK_LIMITS.lagP99Seconds / 2, loadAverage: 1, cores: 2 }).ok).toBe(true);
  });
});

describe('pgvigil run under a busy PostgreSQL 18', () => {
  const dir = suiteTempDir('soak');
  let result: SoakResult;

  beforeAll(async () => {
    result = await runSoak({
      minutes: SECONDS / 60, sampleEveryMs: 2_000, retentionMs: RETENTION_MS, retentionEveryMs: RETENTION_EVERY_MS, tps: 100, dir,
      say: (msg) => console.log(msg),
    });
    console.log(describeSoak(result, SECONDS / 60).join('\n'));
  }, (SECONDS + 240) * 1000);
  afterAll(() => destroyAllServers());

  it('reads the busy log, exits 0 on SIGTERM', () => {
    expect(result.daemonExit, result.daemonOutput).toEqual({ code: 0, signal: null });
    expect(result.logLinesRead, 'the log was busy').toBeGreaterThan(SECONDS * 100);
  });

  it('bounds the store by retention: rows deleted, nothing older than the retention plus one run and a write lag', () => {
    expect(result.retentionDeletedRows).toBeGreaterThan(0);
    expect(result.oldestEventAgeMs).toBeLessThan(RETENTION_MS + RETENTION_EVERY_MS + WRITE_LAG_MS);
  });

  it('opens no descriptor poll after poll', () => {
    // Descriptors are counted, not sampled from noise: one leaked per poll is 7 more in the last third.
    expect(result.openFds.end, 'open descriptors grew').toBeLessThanOrEqual(result.openFds.middle + 1);
  });

  it('keeps the event loop responsive, when the machine has cores to spare', (ctx) => {
    const verdict = judgeLag(soakFigures(result));
    if (verdict.ok === null) ctx.skip(verdict.says);
    expect(verdict.ok, verdict.says).toBe(true);
  });
});
