/**
 * A local stand-in for PagerDuty's Events API v2: a real HTTP server on 127.0.0.1 that checks
 * every request against the Events v2 rules (the documented field limits and enums), answers as
 * PagerDuty does (202 with a dedup_key; 400 "invalid event" with errors) and keeps incidents the
 * way PagerDuty does: a trigger on a dedup_key without an open incident opens one (a page), a
 * trigger on an open one only adds to it, a resolve closes it.
 *
 * Tests script failures with `failNext(status, count)` (429, 500...), an outage that still
 * answers with `failAll(status)` until `failAll(null)`, and take it down and up with `stop()` /
 * `start()` (same port, so the sender sees connection refused in between).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedEvent {
  path: string;
  body: Record<string, unknown>;
  status: number;
  errors: string[];
}

export interface Incident {
  dedupKey: string;
  open: boolean;
  /** Triggers accepted on this key while the incident was open (the first one paged). */
  triggers: number;
  summary: string;
  severity: string;
  customDetails: unknown;
}

const SEVERITIES = ['critical', 'error', 'warning', 'info'];
const ACTIONS = ['trigger', 'acknowledge', 'resolve'];

export class PagerDutyReceiver {
  readonly received: ReceivedEvent[] = [];
  readonly changes: Array<Record<string, unknown>> = [];
  /** Every incident ever opened, in order; a dedup key may appear again after a resolve. */
  readonly incidents: Incident[] = [];
  private scripted: number[] = [];
  private outageStatus: number | null = null;
  private server: http.Server | null = null;
  private portNumber = 0;
  private waiters: Array<() => void> = [];

  constructor(private readonly routingKey: string) {}

  get port(): number {
    return this.portNumber;
  }

  get eventsUrl(): string {
    return `http://127.0.0.1:${this.portNumber}/v2/enqueue`;
  }

  get changeUrl(): string {
    return `http://127.0.0.1:${this.portNumber}/v2/change/enqueue`;
  }

  /** Pages: incidents opened. */
  get pages(): number {
    return this.incidents.length;
  }

  openIncidents(): Incident[] {
    return this.incidents.filter((i) => i.open);
  }

  /** The next `count` well-formed requests get `status` instead of 202. */
  failNext(status: number, count = 1): void {
    for (let i = 0; i < count; i++) this.scripted.push(status);
  }

  /** Every well-formed request gets `status` (503...) until `failAll(null)`; failNext() goes first. */
  failAll(status: number | null): void {
    this.outageStatus = status;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.portNumber, '127.0.0.1', () => resolve());
    });
    this.portNumber = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves when `predicate` holds after a request; rejects after the deadline with what was received. */
  async waitFor(predicate: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`PagerDuty receiver: ${what} not met within ${timeoutMs} ms; received ${JSON.stringify(this.received.map((r) => [r.status, r.body.event_action, r.body.dedup_key]))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      let body: Record<string, unknown> = {};
      let errors: string[];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        errors = path === '/v2/change/enqueue' ? this.validateChange(body) : path === '/v2/enqueue' ? this.validateEvent(body) : [`unknown path ${path}`];
      } catch {
        errors = ['body is not JSON'];
      }
      let status = errors.length > 0 ? 400 : (this.scripted.shift() ?? this.outageStatus ?? 202);
      if (req.headers['content-type'] !== 'application/json') {
        errors.push('content-type must be application/json');
        status = 400;
      }
      this.received.push({ path, body, status, errors });
      if (status === 202) this.apply(path, body);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status === 202
        ? { status: 'success', message: 'Event processed', dedup_key: body.dedup_key ?? null }
        : status === 400 ? { status: 'invalid event', message: 'Event object is invalid', errors } : { status: 'error' }));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  private apply(path: string, body: Record<string, unknown>): void {
    if (path === '/v2/change/enqueue') return void this.changes.push(body);
    const key = body.dedup_key as string;
    const open = this.incidents.find((i) => i.dedupKey === key && i.open);
    if (body.event_action === 'resolve') {
      if (open) open.open = false;
      return;
    }
    if (body.event_action !== 'trigger') return;
    const payload = body.payload as Record<string, unknown>;
    const summary = payload.summary as string;
    const severity = payload.severity as string;
    if (open) {
      Object.assign(open, { triggers: open.triggers + 1, summary, severity, customDetails: payload.custom_details });
    } else {
      this.incidents.push({ dedupKey: key, open: true, triggers: 1, summary, severity, customDetails: payload.custom_details });
    }
  }

  private validateEvent(body: Record<string, unknown>): string[] {
    const errors: string[] = [];
    if (body.routing_key !== this.routingKey) errors.push('routing_key is not the integration key');
    if (!ACTIONS.includes(body.event_action as string)) errors.push(`event_action must be one of ${ACTIONS.join(', ')}`);
    const key = body.dedup_key;
    if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) errors.push('dedup_key must be a string of 1-255 characters');
    if (body.event_action !== 'trigger') {
      if (typeof key !== 'string') errors.push(`dedup_key is required for ${String(body.event_action)}`);
      return errors;
    }
    const payload = body.payload as Record<string, unknown> | undefined;
    if (typeof payload !== 'object' || payload === null) return [...errors, 'payload is required for trigger'];
    if (typeof payload.summary !== 'string' || payload.summary.length === 0 || payload.summary.length > 1024) errors.push('payload.summary must be 1-1024 characters');
    if (typeof payload.source !== 'string' || payload.source.length === 0 || payload.source.length > 255) errors.push('payload.source must be 1-255 characters');
    if (!SEVERITIES.includes(payload.severity as string)) errors.push(`payload.severity must be one of ${SEVERITIES.join(', ')}`);
    if (payload.timestamp !== undefined && Number.isNaN(Date.parse(payload.timestamp as string))) errors.push('payload.timestamp must be ISO 8601');
    for (const field of ['component', 'group', 'class']) {
      if (payload[field] !== undefined && typeof payload[field] !== 'string') errors.push(`payload.${field} must be a string`);
    }
    const details = payload.custom_details;
    if (details !== undefined && (typeof details !== 'object' || details === null)) errors.push('payload.custom_details must be an object');
    return errors;
  }

  private validateChange(body: Record<string, unknown>): string[] {
    const errors: string[] = [];
    if (body.routing_key !== this.routingKey) errors.push('routing_key is not the integration key');
    const payload = body.payload as Record<string, unknown> | undefined;
    if (typeof payload !== 'object' || payload === null) return [...errors, 'payload is required'];
    if (typeof payload.summary !== 'string' || payload.summary.length === 0 || payload.summary.length > 1024) errors.push('payload.summary must be 1-1024 characters');
    if (payload.timestamp !== undefined && Number.isNaN(Date.parse(payload.timestamp as string))) errors.push('payload.timestamp must be ISO 8601');
    return errors;
  }
}
