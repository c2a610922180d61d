/**
 * prometheus-postgres-exporter (the Debian package, 0.11.1) as the peer the poll benchmarks
 * compare with: started with --auto-discover-databases and the package's example per-table
 * queries (pg_stat_user_tables, pg_statio_user_tables), and its CPU read from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort, waitUntil } from '../../test/helpers/pg-processes.js';

const EXPORTER = '/usr/bin/prometheus-postgres-exporter';
const EXAMPLE_QUERIES = '/usr/share/doc/prometheus-postgres-exporter/examples/queries.yaml';
const PER_TABLE_QUERIES = ['pg_stat_user_tables', 'pg_statio_user_tables'];
const CLOCK_TICKS_PER_SECOND = 100;

/** Why the exporter cannot run here, or null. */
export function exporterMissing(): string | null {
  const missing = [EXPORTER, EXAMPLE_QUERIES].find((file) => !existsSync(file));
  return missing ? `${missing} is missing (apt-get install prometheus-postgres-exporter)` : null;
}

/** The exporter on a free loopback port, answering; `dsn` names the server and the role it polls as. */
export async function startExporter(dsn: string, dir: string): Promise<{ url: string; proc: ChildProcess }> {
  const examples = parse(readFileSync(EXAMPLE_QUERIES, 'utf8')) as Record<string, unknown>;
  const queryFile = path.join(dir, 'queries.yaml');
  writeFileSync(queryFile, stringify(Object.fromEntries(PER_TABLE_QUERIES.map((name) => [name, examples[name]]))));
  const port = await freePort();
  const proc = spawn(EXPORTER, [
    `--web.listen-address=127.0.0.1:${port}`, `--extend.query-path=${queryFile}`, '--auto-discover-databases', '--log.level=error',
  ], {
    env: { PATH: process.env.PATH, DATA_SOURCE_NAME: dsn },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Its landing page, not /metrics: a scrape of a thousand databases takes minutes.
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/`)).ok, 20_000, 'postgres_exporter answering');
  return { url: `http://127.0.0.1:${port}/metrics`, proc };
}

/** CPU seconds (user + system) of a process, or of several, from /proc. */
export function cpuSecondsOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the ")" of comm: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between listing and reading: its time is gone with it.
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}
