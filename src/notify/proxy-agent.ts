/**
 * Which proxy a notification goes through, from the environment as curl and most tools read it:
 * HTTPS_PROXY for https receivers (a CONNECT tunnel), HTTP_PROXY for http ones (the absolute URI
 * sent to the proxy), ALL_PROXY for either, lowercase before uppercase; NO_PROXY lists hosts
 * (`alerts.internal`), domain suffixes (`.example.com`, `*.example.com`), `host:port`, or `*`.
 * proxy-from-env makes that decision and the proxy-agents package family speaks to the proxy:
 * both are what axios and npm's own clients use, so a proxy that works with them works here.
 *
 * A loopback receiver (localhost, 127.0.0.0/8, ::1) is always reached directly, as Go's and
 * Node's own proxy support do: a proxy on another host cannot reach this host's loopback.
 */
import type http from 'node:http';
import { isIP } from 'node:net';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { getProxyForUrl } from 'proxy-from-env';

export interface ProxyRoute {
  agent: http.Agent;
  /** The proxy's URL without credentials, for error reasons and logs. */
  proxy: string;
}

/** One agent per proxy and scheme: the environment is read per request, agents are kept. */
const agents = new Map<string, http.Agent>();

/** The proxy route for a request to `url`, or null for a direct connection. */
export function proxyRouteFor(url: URL): ProxyRoute | null {
  if (isLoopbackHost(url.hostname)) return null;
  const proxyUrl = getProxyForUrl(url);
  if (proxyUrl === '') return null;
  const key = `${url.protocol} ${proxyUrl}`;
  let agent = agents.get(key);
  if (agent === undefined) {
    agent = url.protocol === 'https:' ? new HttpsProxyAgent(proxyUrl) : new HttpProxyAgent(proxyUrl);
    agents.set(key, agent);
  }
  return { agent, proxy: withoutCredentials(proxyUrl) };
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

function withoutCredentials(proxyUrl: string): string {
  try {
    const url = new URL(proxyUrl);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return '(unreadable proxy URL)';
  }
}
