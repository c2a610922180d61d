/**
 * Records the logs of a real PostgreSQL 18 primary and hot standby through seed 003's incident
 * (/work/shared/seeds/003_e3cc2138bb41931f.txt): a standby transaction has read a table, the
 * primary drops it, and replay waits on the reader's lock (a recovery conflict on lock) for the
 * whole max_standby_streaming_delay (30 s, the default) until the standby terminates the reader.
 * Nothing else is logged on the standby while replay waits: a rule that is evaluated only when an
 * event arrives never sees the stall (the first bug `analyze --rules` had with this log).
 *
 * Not part of the test run (it takes about a minute): run it by hand, then review the diff.
 *
 *   npx tsx scripts/record-cluster-logs.ts [--delay-seconds 30] [--out test/fixtures/cluster-logs/pg18-drop-table-standby-lock-conflict]
 *
 * --delay-seconds sets max_standby_streaming_delay, the length of the wait (75 for a standby past
 * a load balancer's 60 s limit).
 *
 * Writes primary.log and standby.log (each server's log files from its start, byte for byte,
 * concatenated) and case.json (version, settings, what happened).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { destroyAllServers, startPrimary, startStandby } from '../test/helpers/pg-harness.js';
import { waitForReplay } from '../test/helpers/scenarios/recovery-conflicts.js';
import { startWalTicker } from '../test/helpers/wal-ticker.js';
import { openSession } from '../test/integration/collectors-rig.js';

const OUT_DIR = 'test/fixtures/cluster-logs/pg18-drop-table-standby-lock-conflict';
const TABLE = 'orders_archive';
/** postgresql.conf of both servers, beyond the harness's defaults (src/demo/pg-cluster.ts). */
const PRIMARY_SETTINGS = { log_statement: 'ddl' } as const;
const standbySettings = (delaySeconds: number) => ({
  max_standby_streaming_delay: `${delaySeconds}s`, log_recovery_conflict_waits: true, hot_standby_feedback: false, deadlock_timeout: '1s',
});
/** The primary keeps writing while replay waits, so received WAL piles up behind the DROP. */
const WRITE_EVERY_MS = 500;
/** Log after the wait ends, so replay's moving on shows in the logs' time. */
const AFTER_WAIT_MS = 15_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string', default: OUT_DIR }, 'delay-seconds': { type: 'string', default: '30' } } });
  const outDir = values.out ?? OUT_DIR;
  const delaySeconds = Number(values['delay-seconds']);
  if (!(delaySeconds > 0)) throw new Error(`--delay-seconds must be a positive number, got ${values['delay-seconds']}`);
  const STANDBY_SETTINGS = standbySettings(delaySeconds);
  const primary = await startPrimary({ version: 18, name: 'cluster-primary', settings: PRIMARY_SETTINGS });
  const standby = await startStandby(primary, { name: 'cluster_standby', settings: STANDBY_SETTINGS });
  try {
    await primary.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, placed_at timestamptz NOT NULL, total numeric NOT NULL)`);
    await primary.query(`INSERT INTO ${TABLE} SELECT g, now() - g * interval '1 minute', g % 1000 FROM generate_series(1, 100000) g`);
    await primary.query('CREATE TABLE wal_ticks (at timestamptz NOT NULL)');
    await waitForReplay(primary, standby);

    const reader = await openSession(standby);
    // The reader's statement is in the standby's log, so the conflict's process can be named with it.
    await reader.client.query("SET log_statement = 'all'");
    await reader.client.query('BEGIN');
    await reader.client.query(`SELECT count(*) FROM ${TABLE}`);
    const ticker = await startWalTicker(primary, WRITE_EVERY_MS);
    await primary.query(`DROP TABLE ${TABLE}`);
    // max_standby_streaming_delay runs out; the standby terminates the idle reader and replay goes on.
    await standby.waitForLog(/recovery finished waiting after [\d.]+ ms: recovery conflict on lock/, (delaySeconds + 30) * 1000);
    await new Promise((r) => setTimeout(r, AFTER_WAIT_MS));
    await ticker.stop();
    await waitForReplay(primary, standby);
    await reader.client.end().catch(() => undefined);

    fs.mkdirSync(outDir, { recursive: true });
    const version = (await primary.query<{ v: string }>('SELECT version() AS v'))[0]!.v;
    for (const [name, server] of [['primary', primary], ['standby', standby]] as const) {
      fs.writeFileSync(path.join(outDir, `${name}.log`), Buffer.concat(server.logFiles().map((f) => fs.readFileSync(f))));
    }
    fs.writeFileSync(path.join(outDir, 'case.json'), `${JSON.stringify({
      provenance: 'recorded',
      version_string: version,
      format: 'stderr',
      log_line_prefix: '%m [%p] %q%u@%d ',
      log_timezone: 'UTC',
      primary_settings: PRIMARY_SETTINGS,
      standby_settings: STANDBY_SETTINGS,
      reader_pid: reader.pid,
      description: `A standby transaction (pid ${reader.pid}, log_statement = all in its session) read ${TABLE} and stayed open; ` +
        `the primary dropped ${TABLE} while writing a row every ${WRITE_EVERY_MS} ms; the standby's replay waited on the ` +
        `reader's lock until max_standby_streaming_delay (${delaySeconds} s) ran out and the reader was terminated.`,
      recorded_at: new Date().toISOString().slice(0, 10),
      recorded_with: 'scripts/record-cluster-logs.ts',
    }, null, 2)}\n`);
    process.stdout.write(`recorded into ${outDir}\n`);
  } finally {
    await destroyAllServers();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
