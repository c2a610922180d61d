/**
 * Two sidecars, one Alertmanager (#25 §1): two `pgvigil run` processes (the built binary), each
 * with its own --name, watch two real PostgreSQL 18 servers and deliver to one real Alertmanager
 * (Debian prometheus-alertmanager). Both servers stop, so the same rule (server-unreachable,
 * its sustain time shortened) fires on both: Alertmanager keeps two alerts open, told apart by
 * target and instance. One server comes back: its sidecar resolves its own alert and the other
 * stays open. Before targets had names, both sidecars were `default` and one's resolve closed
 * the other's alert.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, expect, it, onTestFailed } from 'vitest';
import { startAlertmanager, type AmAlert, type RunningAlertmanager } from '../helpers/alertmanager.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { describeWithTool } from '../helpers/tools.js';

const NAMES = ['east', 'west'] as const;
/** pgvigil probes a server every 10 s; a few probes, on a machine that may be loaded. */
const WAIT_MS = 45_000;

describeWithTool('alertmanager', 'two sidecars delivering to one Alertmanager', () => {
  const dir = suiteTempDir('two-sidecars');
  const sidecars: DaemonProcess[] = [];
  let am: RunningAlertmanager | undefined;

  afterAll(async () => {
    for (const sidecar of sidecars) sidecar.child.kill('SIGKILL');
    await Promise.all(sidecars.map((s) => s.exit));
    await am?.stop();
    await destroyAllServers();
  });

  /** server-unreachable alerts Alertmanager lists as active, by target. */
  const openIn = async (alertmanager: RunningAlertmanager): Promise<Record<string, AmAlert>> => Object.fromEntries(
    (await alertmanager.listed()).filter((a) => a.labels.alertname === 'server-unreachable' && a.status.state === 'active').map((a) => [a.labels.target, a]),
  );

  it('keeps each sidecar\'s alert open apart, and each resolves its own', async () => {
    const [east, west, alertmanager] = await Promise.all([
      startPrimary({ version: 18, name: 'sidecar-east' }),
      startPrimary({ version: 18, name: 'sidecar-west' }),
      startAlertmanager(path.join(dir, 'alertmanager')),
    ]);
    am = alertmanager;
    const servers: Record<(typeof NAMES)[number], PgServer> = { east, west };
    // One config file for both, as a fleet would ship it: only --name, --dsn and --db differ.
    const config = path.join(dir, 'pgvigil.yaml');
    writeFileSync(config, stringify({
      rules: { interval_ms: 500, hold_down_ms: 1_000, thresholds: { 'server-unreachable': { sustain_ms: 3_000 } } },
      notify: { alertmanager: { url: alertmanager.url } },
    }));
    for (const name of NAMES) {
      sidecars.push(await spawnDaemon(['-c', config, '--name', name, '--dsn', servers[name].dsn(), '--db', path.join(dir, `${name}.db`)]));
    }
    onTestFailed(() => sidecars.forEach((s, i) => console.error(`${NAMES[i]} sidecar output:\n${s.output()}`)));
    await waitUntil(async () => (await Promise.all(sidecars.map((s) => s.metrics()))).every((m) => /^pg_up\{.*\} 1$/m.test(m)), WAIT_MS, 'both sidecars reaching their server');

    await Promise.all([east.stop('fast'), west.stop('fast')]);
    let open: Record<string, AmAlert> = {};
    await waitUntil(async () => Object.keys(open = await openIn(alertmanager)).length === 2, WAIT_MS, 'both alerts open in Alertmanager');
    expect(open.east?.labels).toMatchObject({ target: 'east', instance: expect.stringMatching(new RegExp(`:${east.port}$`)) });
    expect(open.west?.labels).toMatchObject({ target: 'west', instance: expect.stringMatching(new RegExp(`:${west.port}$`)) });
    expect(open.east?.annotations.summary).toMatch(/^pgvigil cannot reach east /);
    expect(open.west?.annotations.summary).toMatch(/^pgvigil cannot reach west /);

    await east.start();
    await waitUntil(async () => !('east' in (open = await openIn(alertmanager))), WAIT_MS, "east's alert resolved in Alertmanager");
    expect(Object.keys(open)).toEqual(['west']);
    // One group (by alertname): its notification is still 'firing', with east's alert in it resolved.
    await waitUntil(() => alertmanager.notifications.some((n) => n.alerts.some((a) => a.status === 'resolved' && a.labels.target === 'east')),
      WAIT_MS, "Alertmanager notifying east's resolve");
    // West's sidecar still refreshes its alert: it stays open while its server is down.
    expect(alertmanager.notifications.flatMap((n) => n.alerts).filter((a) => a.status === 'resolved').map((a) => a.labels.target)).toEqual(['east']);
    expect(Object.keys(await openIn(alertmanager))).toEqual(['west']);
  }, 120_000);
});
