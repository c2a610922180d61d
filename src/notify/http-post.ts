/**
 * One HTTP POST of a JSON body for the notifiers, turned into a DeliveryResult: the accepted
 * statuses are the receiver's; 408, 429 and 5xx and network errors are worth retrying; any other
 * status is a rejection of the payload itself (kept in the outbox as 'rejected', not retried).
 *
 * node:http rather than fetch: fetch refuses the Fetch standard's "bad ports" (6000, 6665-6669,
 * ...), and a receiver on one of them is still a receiver.
 */
import http from 'node:http';
import https from 'node:https';
import type { DeliveryResult } from './notifier.js';

export interface PostOptions {
  url: string;
  body: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  /** Statuses that mean "accepted" (PagerDuty 202, Alertmanager 200). */
  accepted: readonly number[];
  /** For a Retry-After given as an HTTP date. */
  nowMs: number;
}

const MAX_REASON_CHARS = 500;

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
    const body = Buffer.from(options.body, 'utf8');
    const req = client.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': body.length, 'user-agent': 'pgvigil', ...options.headers },
      timeout: options.timeoutMs,
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
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: typeof retryAfter === 'string' ? retryAfter : null });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`timed out after ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
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
