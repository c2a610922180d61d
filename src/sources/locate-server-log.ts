/**
 * With no log configured, where this server's log is on this host, from what the server says of
 * itself: the logging collector's directory, or without a collector the file Debian's
 * pg_ctlcluster sends stderr to. Says why when it finds none, for `run`'s log and `check`.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { logSourceSchema, type LogSourceConfig } from '../config/schema.js';
import { DEBIAN_LOG_DIRECTORY, debianLogFilename } from './distribution-log.js';
import { serverLogDirectory } from './server-log-settings.js';

export type LogLocation = { source: LogSourceConfig; found: string } | { source: null; why: string };

/** `server`: the settings readServerLogSettings returned, empty when the server could not be asked. */
export function locateServerLog(server: Readonly<Record<string, string>>, readable: (path: string) => boolean = readableHere): LogLocation {
  if (Object.keys(server).length === 0) return { source: null, why: 'the server could not be asked where it logs' };
  const directory = serverLogDirectory(server);
  if (directory !== null) {
    if (!readable(directory)) return { source: null, why: `the server logs to ${directory}, which pgvigil cannot read here (another host, or permissions)` };
    return { source: logSourceSchema.parse({ path: directory }), found: `the log directory the server reports, ${directory}` };
  }
  const debianFile = debianLogFilename(server);
  if (debianFile !== null) {
    const file = path.join(DEBIAN_LOG_DIRECTORY, debianFile);
    if (!readable(file)) {
      return { source: null, why: `the server has no logging collector; Debian's pg_ctlcluster sends its stderr to ${file}, which pgvigil cannot read here (another host, or not in group adm)` };
    }
    return { source: logSourceSchema.parse({ path: file }), found: `${file}, where Debian's pg_ctlcluster sends the server's stderr (no logging collector)` };
  }
  return { source: null, why: `the server has no logging collector to say where it logs (logging_collector = ${server.logging_collector ?? 'unknown'})` };
}

/** A file pgvigil can read, or a directory it can list and read. */
export function readableHere(file: string): boolean {
  try {
    accessSync(file, constants.R_OK | (statSync(file).isDirectory() ? constants.X_OK : 0));
    return true;
  } catch {
    return false;
  }
}
