/**
 * The soak, CI-sized: `pgvigil run` (built: `npm run build` first) watching a busy PostgreSQL 18
 * for SOAK_TEST_MINUTES (default 1.5) with a 30 s retention that prunes every 10 s
 * (bench/lib/soak.ts; `npm run bench -- soak` runs it for 30 minutes). Asserts that RSS, heap,
 * open descriptors and the store's size are flat after warm-up: the median of the last third of
 * the samples against the median of the second third (the first third is warm-up). The bounds
 * leave room for a garbage collector's sawtooth, and none for a leak of a few kB a poll.
 */
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { describeSoak, runSoak } from '../../bench/lib/soak.js';
import { trendOf } from '../../bench/lib/soak-figures.js';
import { destroyAllServers } from '../helpers/pg-harness.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const MINUTES = Number(process.env.SOAK_TEST_MINUTES ?? 1.5);
const RETENTION_MS = 30_000;
const RETENTION_EVERY_MS = 10_000;

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

describe('pgvigil run under a busy PostgreSQL 18', () => {
  const dir = suiteTempDir('soak');
  afterAll(() => destroyAllServers());

  it(`keeps memory, descriptors and the store flat for ${MINUTES} minutes, and the event loop responsive`, async () => {
    const result = await runSoak({
      minutes: MINUTES, sampleEveryMs: 5_000, retentionMs: RETENTION_MS, retentionEveryMs: RETENTION_EVERY_MS, tps: 100, dir,
      say: (msg) => console.log(msg),
    });
    console.log(describeSoak(result, MINUTES).join('\n'));
    expect(result.daemonExit, result.daemonOutput).toEqual({ code: 0, signal: null });
    expect(result.logLinesRead, 'the log was busy').toBeGreaterThan(MINUTES * 60 * 100);
    expect(result.rss.growth, 'RSS grew from the second third to the last').toBeLessThan(1.15);
    expect(result.heapUsed.growth, 'heap grew from the second third to the last').toBeLessThan(1.3);
    expect(result.openFds.end, 'open descriptors grew').toBeLessThanOrEqual(result.openFds.middle + 3);
    // Retention ran during the run and bounds the store: nothing older than its age plus one interval (and a poll's slack) is left.
    expect(result.retentionDeletedRows).toBeGreaterThan(0);
    expect(result.oldestEventAgeMs).toBeLessThan(RETENTION_MS + RETENTION_EVERY_MS + 15_000);
    expect(result.storeSize.growth, 'the store grew from the second third to the last').toBeLessThan(1.25);
    // The delay is the daemon's own work only on a machine with cores to spare: on one running
    // several times as many processes as it has cores it is mostly waiting for a core, and is printed, not judged.
    if (result.loadAverage <= 2 * os.cpus().length) expect(result.lagP99.median, 'event-loop delay p99 (median of the windows)').toBeLessThan(0.1);
    else console.log(`event-loop delay not judged: load average ${result.loadAverage.toFixed(1)} on ${os.cpus().length} cores`);
  }, (MINUTES * 60 + 240) * 1000);
});
