/**
 * Builds a streaming standby from a running primary without pg_basebackup (the embedded PG 18 ships
 * none, and Debian's PG 15 one refuses a PG 18 server): a low-level online backup
 * (pg_backup_start / file copy / pg_backup_stop; pg_start_backup / pg_stop_backup before 15) into a
 * fresh cluster directory.
 *
 * A physical replication slot, made before the backup starts, holds the WAL the standby needs
 * from the backup's start point until it streams; it is visible in pg_replication_slots.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { chownTo, Cluster, SUPERUSER, waitUntil, type Settings } from './pg-cluster.js';

const STREAMING_WAIT_MS = 60_000;

// Left out of the copy, as pg_basebackup leaves them: runtime state of the primary, and WAL
// (the standby streams it through the slot). Directories themselves are kept, empty.
const SKIP_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'standby.signal']);
const EMPTY_DIRS = new Set(['pg_replslot', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans']);

export async function buildStandby(primary: Cluster, name: string, settings: Settings): Promise<Cluster> {
  const standby = await Cluster.create(primary.install, name);
  try {
    const slot = `${name.toLowerCase().replace(/[^a-z0-9_]+/g, '_')}_${standby.port}`.slice(0, 63);
    await primary.query('SELECT pg_create_physical_replication_slot($1, true)', [slot]);
    standby.onDestroy(() => dropSlot(primary, slot));
    const labels = await copyOnlineBackup(primary, standby.dataDir);
    standby.writeOwned(path.join(standby.dataDir, 'backup_label'), labels.labelFile);
    if (labels.spcmapFile) standby.writeOwned(path.join(standby.dataDir, 'tablespace_map'), labels.spcmapFile);
    standby.writeOwned(path.join(standby.dataDir, 'standby.signal'), '');
    standby.appendSettings(`pgvigil: standby ${name} of port ${primary.port}`, {
      port: standby.port,
      log_directory: standby.serverPath(standby.logDir),
      primary_conninfo: `host=${primary.host} port=${primary.port} user=${SUPERUSER} application_name=${name}`,
      primary_slot_name: slot,
      hot_standby: true,
    });
    standby.appendSettings('settings chosen by the test', settings);
    await standby.start();
    await waitUntil(() => isStreaming(standby), STREAMING_WAIT_MS, `standby ${name} (port ${standby.port}) to stream from port ${primary.port}`);
    return standby;
  } catch (error) {
    await standby.destroy();
    throw error;
  }
}

/**
 * A slot outliving its standby would hold WAL on the primary forever and show up in the tests'
 * pg_replication_slots. Best effort: a primary already stopped or destroyed has nothing to drop.
 */
async function dropSlot(primary: Cluster, slot: string): Promise<void> {
  if (primary.postmasterPid() === undefined) return;
  await primary
    .query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active', [slot])
    .catch(() => undefined);
}

async function isStreaming(standby: Cluster): Promise<boolean> {
  const rows = await standby.query<{ status: string }>('SELECT status FROM pg_stat_wal_receiver');
  return rows[0]?.status === 'streaming';
}

/** Copies the primary's data directory between pg_backup_start and pg_backup_stop on one session. */
async function copyOnlineBackup(primary: Cluster, targetDir: string): Promise<{ labelFile: string; spcmapFile: string }> {
  const client = new pg.Client({ connectionString: primary.dsn() });
  client.on('error', () => undefined); // the awaited queries below reject with the same error
  await client.connect();
  try {
    // PG 15 renamed the functions and dropped the exclusive mode (13 and 14 need `false` for it).
    const [start, stop] = primary.install.version >= 15
      ? ["SELECT pg_backup_start('pgvigil-standby', true)", 'SELECT labelfile, spcmapfile FROM pg_backup_stop(false)']
      : ["SELECT pg_start_backup('pgvigil-standby', true, false)", 'SELECT labelfile, spcmapfile FROM pg_stop_backup(false, false)'];
    await client.query(start);
    copyDataDir(primary.dataDir, targetDir, primary.install.owner);
    // wait_for_archive = false: test clusters do not archive.
    const result = await client.query<{ labelfile: string; spcmapfile: string | null }>(stop);
    const row = result.rows[0];
    if (!row) throw new Error(`pg_backup_stop on port ${primary.port} returned no row`);
    return { labelFile: row.labelfile, spcmapFile: row.spcmapfile ?? '' };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Recursive copy of a live data directory. Files may vanish while we walk (temp files, recycled
 * WAL); those are skipped, as pg_basebackup does. pg_wal keeps its subdirectories but no segments.
 */
function copyDataDir(sourceDir: string, targetDir: string, owner: { uid: number; gid: number }, relative = ''): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(path.join(sourceDir, relative), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const entry of entries) {
    const child = path.join(relative, entry.name);
    const source = path.join(sourceDir, child);
    const target = path.join(targetDir, child);
    if (entry.name.startsWith('pgsql_tmp')) continue;
    if (entry.isDirectory()) {
      fs.mkdirSync(target, { mode: 0o700, recursive: true });
      chownTo(target, owner);
      if (!EMPTY_DIRS.has(child)) copyDataDir(sourceDir, targetDir, owner, child);
      continue;
    }
    if (SKIP_FILES.has(child) || relative.split(path.sep)[0] === 'pg_wal') continue;
    if (entry.isSymbolicLink()) throw new Error(`${source}: tablespaces (symlinks in the data directory) are not supported by the harness`);
    try {
      fs.copyFileSync(source, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    chownTo(target, owner);
  }
}
