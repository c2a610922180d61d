/**
 * Where distributions put a server's log when its logging collector is off (their default), so
 * that the server's own log_filename, which only the collector uses, does not hide it.
 *
 * Debian and Ubuntu (postgresql-common): pg_ctlcluster starts the server with its stderr in
 * /var/log/postgresql/postgresql-<major>-<cluster>.log, owned by postgres, group adm, mode 0640.
 * The cluster is known from `cluster_name` (pg_createcluster writes `15/main` into
 * postgresql.conf) or from the data directory (/var/lib/postgresql/15/main).
 */
import path from 'node:path';

export const DEBIAN_LOG_DIRECTORY = '/var/log/postgresql';
const DEBIAN_DATA_ROOT = '/var/lib/postgresql';

/** `postgresql-15-main.log` for a Debian cluster logging to stderr; null for any other server. */
export function debianLogFilename(server: Readonly<Record<string, string>>): string | null {
  if (server.logging_collector !== 'off') return null;
  const named = /^(\d+)\/([^/]+)$/.exec(server.cluster_name ?? '');
  if (named) return `postgresql-${named[1]}-${named[2]}.log`;
  const dataDirectory = server.data_directory;
  if (!dataDirectory || path.dirname(path.dirname(dataDirectory)) !== DEBIAN_DATA_ROOT) return null;
  const major = path.basename(path.dirname(dataDirectory));
  return /^\d+$/.test(major) ? `postgresql-${major}-${path.basename(dataDirectory)}.log` : null;
}
