/**
 * One HTTP POST of a JSON body for the notifiers, turned into a DeliveryResult: the accepted
 * statuses are the receiver's; 408, 429 and 5xx and network errors are worth retrying; any other
 * status is a rejection of the payload itself (kept in the outbox as 'rejected', not retried).
 *
 * node:http rather than fetch: fetch refuses the Fetch standard's "bad ports" (6000, 6665-6669,
 * ...), and a receiver on one of them is still a receiver.
 *
 * Two clocks bound a request: `timeoutMs` fires when the socket is idle that long, `deadlineMs`
 * when the whole exchange (proxy, connect, TLS, the answer's last byte) took that long. The
 * outbox sends one request at a time per channel, so without the deadline a receiver that
 * trickles a byte every few seconds would hold its channel forever.
 */
import http from 'node:http';
import https from 'node:https';
import type { DeliveryResult } from './notifier.js';
import { proxyRouteFor, type ProxyRoute } from './proxy-agent.js';

export interface PostOptions {
  url: string;
  body: string;
  headers?: Record<string, string>;
  /** Longest silence on the socket. */
  timeoutMs: number;
  /** Longest whole request, first byte to last; default DEFAULT_DEADLINE_MS. */
  deadlineMs?: number;
  /** Statuses that mean "accepted" (PagerDuty 202, Alertmanager 200). */
  accepted: readonly number[];
  /** For a Retry-After given as an HTTP date. */
  nowMs: number;
}

const MAX_REASON_CHARS = 500;
/** Three idle timeouts: a slow but steady receiver still answers; a trickling one is cut off. */
export const DEFAULT_DEADLINE_MS = 30_000;

interface Response {
  status: number;
  text: string;
  retryAfter: string | null;
}

export async function postJson(options: PostOptions): Promise<DeliveryResult> {
  let response: Response;
  try {
    response = await request(options);
  } catch (err) {
    return { outcome: 'retry', status: null, reason: networkReason(err), retryAfterMs: null };
  }
  const { status, text } = response;
  if (options.accepted.includes(status)) return { outcome: 'accepted', status };
  const reason = `HTTP ${status}${text ? `: ${text.slice(0, MAX_REASON_CHARS)}` : ''}`;
  if (status === 408 || status === 429 || status >= 500) {
    return { outcome: 'retry', status, reason, retryAfterMs: retryAfterMs(response.retryAfter, options.nowMs) };
  }
  return { outcome: 'rejected', status, reason };
}

function request(options: PostOptions): Promise<Response> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.url);
    const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
    if (client === null) return reject(new Error(`unsupported URL scheme ${url.protocol} (use http or https)`));
    let route: ProxyRoute | null;
    try {
      route = proxyRouteFor(url);
    } catch (err) {
      return reject(new Error(`the proxy from HTTPS_PROXY/HTTP_PROXY/ALL_PROXY cannot be used: ${networkReason(err)}`));
    }
    const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const deadline = setTimeout(() => {
      req.destroy(timedOut(`timed out: no complete answer within the ${deadlineMs} ms deadline (the receiver is too slow or trickles its answer)`));
    }, deadlineMs);
    const done = (response: Response) => {
      clearTimeout(deadline);
      resolve(response);
    };
    // Errors name the proxy: "connection refused" then means the proxy, not the receiver.
    const fail = (err: Error) => {
      clearTimeout(deadline);
      reject(route ? Object.assign(err, { message: `via proxy ${route.proxy}: ${err.message}` }) : err);
    };
    const body = Buffer.from(options.body, 'utf8');
    const req = client.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': body.length, 'user-agent': 'pgvigil', ...options.headers },
      timeout: options.timeoutMs,
      ...(route ? { agent: route.agent } : {}),
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        // Only the start of an error body is kept as the reason.
        if (size < MAX_REASON_CHARS * 4) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: typeof retryAfter === 'string' ? retryAfter : null });
      });
      res.on('error', fail);
    });
    req.on('timeout', () => req.destroy(timedOut(`timed out after ${options.timeoutMs} ms without a byte`)));
    req.on('error', fail);
    req.end(body);
  });
}

function timedOut(message: string): Error {
  return Object.assign(new Error(message), { code: 'ETIMEDOUT' });
}

function networkReason(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const dateMs = Date.parse(header);
  return Number.isNaN(dateMs) ? null : Math.max(0, dateMs - nowMs);
}
