/**
 * What a server is called when the config does not say: the single-server shorthand's target.
 * Every alert's dedup key, PagerDuty's source and every series carry it, so two sidecars must
 * never share one (a resolve of one would close the other's page), and one sidecar must keep it
 * across restarts (the store's history is by name). The dsn's host and port are both; a local
 * server (a socket, localhost) is told apart by this machine's name.
 */
import { hostname as osHostname } from 'node:os';
import { isLoopback } from '../lib/listen-address.js';

/** Where the server is, as `host:port`, from the dsn (a URL) or libpq's PGHOST/PGPORT. */
export function serverAddress(dsnUrl: string | null, env: NodeJS.ProcessEnv, machine: string = osHostname()): string {
  let url: URL | null = null;
  try {
    url = dsnUrl === null ? null : new URL(dsnUrl);
  } catch {
    // loadConfig refuses a dsn that does not parse; the environment decides then.
  }
  // As node-postgres reads a URL: a host=/port= query parameter wins over the authority.
  const host = url?.searchParams.get('host') || url?.hostname || env.PGHOST || '';
  const port = url?.searchParams.get('port') || url?.port || env.PGPORT || '5432';
  const local = host === '' || host.startsWith('/') || isLoopback(host);
  return `${local ? machine : host.replace(/^\[(.*)\]$/, '$1')}:${port}`;
}

/** The shorthand target's default name: its address in the letters a name may hold (`db1.example.com-5432`). */
export function defaultTargetName(address: string): string {
  return address.replace(/:(\d+)$/, '-$1').replace(/[^A-Za-z0-9_.-]/g, '-');
}
