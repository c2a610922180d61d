/**
 * The fleet as it runs (issue #13): two `pgvigil run` sidecars (the built binary) watch two real
 * PostgreSQL 18 servers, east and west, each logging numbered WARNINGs and a storm of statement
 * timeouts (which fires error-storm), and forward to one central PostgreSQL 18 as the role
 * docs/fleet.md creates. East's sidecar is SIGKILLed while it drains its backlog and started
 * again on the same store; the central database is stopped (immediate) and started under
 * west's. At the end every event, alert and alert transition of both stores is in the central
 * database exactly once, compared row by row, and the fleet report (as the read-only role)
 * names each target's alert.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import type { FleetTargetSummary } from '../../src/central/central-report.js';
import { killDaemon, spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { centralDsnAs, centralEventCount, centralQuery, expectStoreInCentral, prepareCentral, readStore } from '../helpers/fleet-central.js';
import { countLogFiles, LogWorkload } from '../helpers/log-workload.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TARGETS = ['east', 'west'] as const;
type Target = (typeof TARGETS)[number];
/** Statement timeouts of the one storm per target; error-storm's min_events is below it. */
const STORM_ERRORS = 12;
/** Long enough that no storm resolves during the test: its transitions are known before the end. */
const STORM_WINDOW_MS = 600_000;
/** A drain of the first few hundred entries takes seconds, so the SIGKILL lands inside it. */
const DRAIN_ROWS_PER_SECOND = 200;
/** Generous: three servers and two sidecars start at once, on a machine that may be loaded. */
const WAIT_MS = 60_000;

const dir = suiteTempDir('fleet-live');
const storeFile = (target: Target) => path.join(dir, `${target}.db`);
const sidecars = new Map<Target, DaemonProcess>();
const workloads = TARGETS.map((t) => new LogWorkload({ label: t, tickEveryMs: 10, storm: { everyMs: 600_000, errors: STORM_ERRORS } }));

afterAll(async () => {
  for (const sidecar of sidecars.values()) sidecar.child.kill('SIGKILL');
  // Before the servers go: a workload's connection ended by their shutdown would be an error.
  await Promise.allSettled(workloads.map((w) => w.stop()));
  await destroyAllServers();
});

function writeConfig(target: Target, server: PgServer, centralDsn: string): string {
  const file = path.join(dir, `${target}.yaml`);
  writeFileSync(file, stringify({
    db: storeFile(target),
    targets: [{ name: target, cluster: 'shop', dsn: server.dsn(), log: { path: server.logDir, start_at: 'beginning' } }],
    rules: { interval_ms: 500, hold_down_ms: 1_000, thresholds: { 'error-storm': { window_ms: STORM_WINDOW_MS, min_events: STORM_ERRORS - 2 } } },
    // Two central connections: batches in flight on both when east is killed and the central database stops.
    forward: { postgres: { dsn: centralDsn, batch_rows: 100, interval_ms: 200, max_rows_per_second: DRAIN_ROWS_PER_SECOND, connections: 2 } },
  }));
  return file;
}

const localCount = (target: Target, sql: string) => readStore(storeFile(target), (db) => db.prepare(sql).pluck().get() as number);

it('two live sidecars forward every row once through a SIGKILL of one and a restart of the central database', async () => {
  // No checkpoint by time during the test: after the workload, nothing more is logged.
  const quiet = { checkpoint_timeout: '1h' };
  const [central, east, west] = await Promise.all([
    startPrimary({ version: 18, name: 'fleet-central' }),
    startPrimary({ version: 18, name: 'east', settings: quiet }),
    startPrimary({ version: 18, name: 'west', settings: quiet }),
  ]);
  const servers: Record<Target, PgServer> = { east, west };
  await prepareCentral(central);
  const configs = Object.fromEntries(TARGETS.map((t) => [t, writeConfig(t, servers[t], centralDsnAs(central, 'pgvigil_forward'))])) as Record<Target, string>;
  onTestFailed(() => {
    for (const [target, sidecar] of sidecars) console.error(`${target} sidecar output:\n${sidecar.output()}`);
  });

  // A backlog before the sidecars start (they read from the beginning), and more while they run.
  workloads.forEach((w, i) => w.start(servers[TARGETS[i]!]));
  await waitUntil(() => workloads.every((w) => w.ticks >= 300 && w.storms === 1), WAIT_MS, 'a few hundred ticks and a storm on each server');
  for (const t of TARGETS) sidecars.set(t, await spawnDaemon(['--config', configs[t]]));

  // East: killed once its first batches are central and more are waiting, then run again.
  await waitUntil(async () => (await centralEventCount(central, 'east')) > 0, WAIT_MS, 'the first east events in the central database');
  expect(await killDaemon(sidecars.get('east')!)).toEqual({ code: null, signal: 'SIGKILL' });
  const centralAtKill = await centralEventCount(central, 'east');
  expect(centralAtKill).toBeLessThan(localCount('east', 'SELECT count(*) FROM events'));
  sidecars.set('east', await spawnDaemon(['--config', configs.east]));

  // West: the central database goes away (immediate stop: no clean shutdown) under its forwarder.
  await waitUntil(async () => (await centralEventCount(central, 'west')) > 0, WAIT_MS, 'the first west events in the central database');
  await central.stop('immediate');
  // Started again only once west's forwarder has met it away: a restart quicker than the pause
  // between two batches would otherwise go unnoticed.
  const westFailed = () => sidecars.get('west')!.logLines().some((l) => String(l.msg).startsWith('forwarding to the central database failed'));
  await waitUntil(westFailed, WAIT_MS, "west's forwarder failing while the central database is away");
  await central.start();

  await waitUntil(() => TARGETS.every((t) => localCount(t, `SELECT count(*) FROM alerts WHERE rule_id = 'error-storm'`) === 1), WAIT_MS, 'error-storm firing on both targets');
  await Promise.all(workloads.map((w) => w.stop()));

  // Caught up: the last entries logged (ticks, timeouts) stored, and every stored row central.
  let progress = '';
  await waitUntil(async () => {
    const states = await Promise.all(TARGETS.map(async (t, i) => {
      const file = countLogFiles(servers[t].logFiles(), workloads[i]!.tickLine);
      const stored = localCount(t, `SELECT count(*) FROM events WHERE message LIKE '${t} tick %' OR kind = 'statement_timeout'`);
      const local = { events: localCount(t, 'SELECT count(*) FROM events'), transitions: localCount(t, 'SELECT count(*) FROM alert_transitions') };
      const waiting = localCount(t, 'SELECT count(*) FROM forward_alert_changes');
      const [remote] = await centralQuery<{ events: number; transitions: number }>(central, `
        SELECT (SELECT count(*)::int FROM pgvigil.events WHERE target = $1) AS events, (SELECT count(*)::int FROM pgvigil.alert_transitions WHERE target = $1) AS transitions`, [t]);
      progress = `${progress}${t}: ${file.ticks.size + file.statementTimeouts} ticks and timeouts logged, ${stored} stored; ` +
        `events ${local.events} stored, ${remote!.events} central; transitions ${local.transitions} stored, ${remote!.transitions} central; ${waiting} alert changes waiting\n`;
      return stored === file.ticks.size + file.statementTimeouts && local.events === remote!.events && local.transitions === remote!.transitions && waiting === 0;
    }));
    return states.every(Boolean);
  }, WAIT_MS, 'both sidecars caught up').catch((err: Error) => {
    throw new Error(`${err.message}:\n${progress.split('\n').slice(-3).join('\n')}`);
  });
  // West's forwarder failed while the central database was away, and went on when it returned.
  expect(sidecars.get('west')!.logLines().map((l) => l.msg)).toContain('forwarding to the central database works again');
  for (const t of TARGETS) {
    const sidecar = sidecars.get(t)!;
    sidecar.child.kill('SIGTERM');
    expect(await sidecar.exit).toEqual({ code: 0, signal: null });
    sidecars.delete(t);
  }

  for (const t of TARGETS) await expectStoreInCentral(central, storeFile(t));
  // Each target forwarded from one store (east's second run kept its identity).
  expect(await centralQuery(central, 'SELECT target, cluster FROM pgvigil.targets ORDER BY target')).toEqual([
    { target: 'east', cluster: 'shop' },
    { target: 'west', cluster: 'shop' },
  ]);

  const report = spawnSync(process.execPath, [path.join(ROOT, 'bin/pgvigil.js'), 'report', '--store', centralDsnAs(central, 'pgvigil_reader'), '--from', '1h', '--json'], { encoding: 'utf8' });
  expect(report.stderr).toBe('');
  expect(report.status).toBe(0);
  const parsed = JSON.parse(report.stdout) as { fleet_summary: FleetTargetSummary[]; alerts: Array<{ rule: string; target: string }> };
  expect(parsed.fleet_summary.map((t) => [t.target, t.alerts_by_rule])).toEqual([
    // The storm of statement timeouts, and (info) the timeouts it is made of, grouped by statement.
    ['east', { 'error-storm': 1, 'statement-timeouts': 1 }],
    ['west', { 'error-storm': 1, 'statement-timeouts': 1 }],
  ]);
  expect(parsed.alerts.map((a) => `${a.target} ${a.rule}`).sort()).toEqual(['east error-storm', 'east statement-timeouts', 'west error-storm', 'west statement-timeouts']);
}, 180_000);
