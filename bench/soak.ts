/**
 * `npm run bench -- soak`: `pgvigil run` against a busy PostgreSQL 18 for SOAK_MINUTES (default
 * 60) of real time, with a retention of SOAK_RETENTION_MINUTES (default 5) that prunes all along;
 * prints RSS, heap, open descriptors and store size (first, last, medians of the second and last
 * thirds, trend per hour) and the event-loop delay (bench/lib/soak.ts), then judges them
 * (judgeSoak: a trend of a few MB an hour is a leak of a few kB a poll). An hour, so the warm-up
 * third covers the rules' event cache filling (about 20 minutes at this load). `npm run build` first.
 * test/integration/soak.test.ts runs the same for half a minute and asserts what that can show.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { destroyAllServers } from '../test/helpers/pg-harness.js';
import { envNumber } from './lib/measure.js';
import { describeSoak, runSoak, soakFigures } from './lib/soak.js';
import { judgeSoak } from './lib/soak-figures.js';
import type { Benchmark } from './run.js';

async function runSoakBench(): Promise<void> {
  const minutes = envNumber('SOAK_MINUTES', 60);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-soak-'));
  const say = (msg: string) => process.stdout.write(`${msg}\n`);
  try {
    const result = await runSoak({
      minutes,
      sampleEveryMs: envNumber('SOAK_SAMPLE_SECONDS', 15) * 1000,
      retentionMs: envNumber('SOAK_RETENTION_MINUTES', 5) * 60_000,
      retentionEveryMs: 60_000,
      tps: envNumber('SOAK_TPS', 100),
      dir,
      say,
    });
    for (const line of describeSoak(result, minutes)) say(line);
    const verdicts = judgeSoak(soakFigures(result));
    for (const v of verdicts) say(`${v.ok === null ? 'NOT JUDGED' : v.ok ? 'flat      ' : 'GROWS     '} ${v.says}`);
    const failed = verdicts.filter((v) => v.ok === false).map((v) => v.figure);
    say(failed.length === 0 ? 'soak verdict: flat' : `soak verdict: ${failed.join(', ')} over the limit (a leak, or a run too short for its warm-up)`);
    say(`pgvigil exit on SIGTERM: ${JSON.stringify(result.daemonExit)}${result.daemonOutput === '' ? '' : `\n${result.daemonOutput}`}`);
  } finally {
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: 'pgvigil run against a busy PostgreSQL 18 for SOAK_MINUTES (default 60): judges whether memory, descriptors, store size and event-loop delay stay flat',
  run: () => runSoakBench(),
};
