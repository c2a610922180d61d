/**
 * `npm run bench -- scale`: what pgvigil costs a server with SCALE_DATABASES (default 10)
 * databases of SCALE_TABLES (default 5,000) tables each, read from the server: its sessions at
 * once, the time its queries take there per collector, the session settings of every connection;
 * and pgvigil's RSS and /metrics size (bench/lib/scale.ts). Every collector every
 * SCALE_INTERVAL_SECONDS (default 10) for SCALE_RUN_SECONDS (default 60). `npm run build` first.
 * test/integration/scale.test.ts runs 10 x 200 and asserts the connection bound and the settings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { destroyAllServers } from '../test/helpers/pg-harness.js';
import { envNumber } from './lib/measure.js';
import { describeScale, runScale } from './lib/scale.js';
import type { Benchmark } from './run.js';

async function runScaleBench(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-scale-'));
  const say = (msg: string) => process.stdout.write(`${msg}\n`);
  const options = {
    databases: envNumber('SCALE_DATABASES', 10),
    tablesPerDatabase: envNumber('SCALE_TABLES', 5_000),
    intervalMs: envNumber('SCALE_INTERVAL_SECONDS', 10) * 1000,
    runMs: envNumber('SCALE_RUN_SECONDS', 60) * 1000,
  };
  try {
    const result = await runScale({ ...options, dir, say });
    for (const line of describeScale(result, options)) say(line);
    say(`pgvigil exit on SIGTERM: ${JSON.stringify(result.daemonExit)}${result.daemonOutput === '' ? '' : `\n${result.daemonOutput}`}`);
  } finally {
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: 'pgvigil run on 10 databases x 5,000 tables: its connections and query time on the server, its RSS and /metrics size',
  run: () => runScaleBench(),
};
