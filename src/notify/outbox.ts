/**
 * The outbox deliverer: sends due outbox rows to their channels and removes a row only once its
 * receiver accepted it. Network errors, timeouts, 408, 429 and 5xx reschedule the row with
 * exponential backoff and jitter; any other refusal marks it 'rejected' (kept, visible, counted).
 * Rows survive restarts in the store, so a resolve queued before a crash is delivered after it;
 * a row that was in flight during a crash is sent again, which receivers dedup by key.
 *
 * Each channel is delivered by its own loop, one request at a time, so a slow receiver holds up
 * only itself. A retryable failure ends the channel's pass: the next tick tries again.
 */
import type { Clock, Component } from '../domain/index.js';
import type { Db } from '../store/open-store.js';
import { DEFAULT_BACKOFF, retryDelayMs, type BackoffOptions } from './backoff.js';
import type { ChangeEvent, DeliveryResult, Notifier } from './notifier.js';
import { OutboxTable, type OutboxRow } from './outbox-table.js';
import { RateLimit } from './rate-limit.js';
import type { DeliveryWatcher } from './rejected-deliveries.js';

interface Logger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Re-sends firing alerts to channels that expire them (AlertStore implements it). */
export interface FiringRefresher {
  enqueueRefresh(nowMs: number): number;
}

export interface OutboxOptions {
  /** How often due rows are looked for; wake() delivers sooner. Default 1 s. */
  pollIntervalMs?: number;
  backoff?: BackoffOptions;
  /** Rows taken per query in a pass. */
  batchRows?: number;
  /** [0, 1) source for jitter; tests pass a fixed one. */
  random?: () => number;
  refresher?: FiringRefresher;
  /** Told of each rejection and each accepted delivery (pgvigil's own notifications-rejected alert). */
  watcher?: DeliveryWatcher;
}

export interface ChannelStats {
  channel: string;
  /** Rows waiting to be sent (first attempts and retries). */
  queueDepth: number;
  /** Rows a receiver refused (400): kept for an operator. */
  rejected: number;
  /** Accepted sends since start. */
  delivered: number;
  /** Failed attempts since start, by reason class (network, http_429, http_5xx, rejected). */
  failures: Record<string, number>;
}

/** Why a delivery attempt failed, as pgvigil_notifier_failures_total's `reason`. */
export const FAILURE_CLASSES = ['network', 'timeout', 'http_408', 'http_429', 'http_5xx', 'rejected'] as const;
type FailureClass = (typeof FAILURE_CLASSES)[number];

export class Outbox implements Component {
  readonly name = 'outbox';
  private readonly table: OutboxTable;
  private readonly rateLimit = new RateLimit();
  private readonly passes = new Map<string, Promise<void>>();
  private readonly rerun = new Set<string>();
  /** Per channel, when its rate limit allows a send again, in monotonic time (a duration, not a date). */
  private readonly pausedUntilMs = new Map<string, number>();
  private readonly delivered = new Map<string, number>();
  private readonly failures = new Map<string, Map<FailureClass, number>>();
  private readonly timers: Array<{ cancel(): void }> = [];
  private readonly options: Required<Omit<OutboxOptions, 'refresher' | 'watcher'>> & Pick<OutboxOptions, 'refresher' | 'watcher'>;
  /** The longest delay a row is scheduled ahead: a retry's backoff or a group wait. */
  private readonly horizonMs: number;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly notifiers: readonly Notifier[],
    private readonly clock: Clock,
    private readonly log: Logger,
    options: OutboxOptions = {},
  ) {
    this.table = new OutboxTable(db);
    this.options = { pollIntervalMs: 1_000, backoff: DEFAULT_BACKOFF, batchRows: 50, random: Math.random, ...options };
    this.horizonMs = Math.max(this.options.backoff.maxMs, ...notifiers.map((n) => n.groupWaitMs));
    const names = notifiers.map((n) => n.channel);
    const duplicate = names.find((name, i) => names.indexOf(name) !== i);
    if (duplicate !== undefined) throw new Error(`two notifiers share the channel name "${duplicate}"; give each a distinct channel`);
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.timers.push(this.clock.setInterval(() => this.wake(), this.options.pollIntervalMs));
    const refreshMs = Math.min(...this.notifiers.map((n) => n.refreshIntervalMs ?? Infinity));
    const refresher = this.options.refresher;
    if (refresher && Number.isFinite(refreshMs)) {
      this.timers.push(this.clock.setInterval(() => {
        if (refresher.enqueueRefresh(this.clock.nowMs()) > 0) this.wake();
      }, refreshMs));
    }
    this.wake();
  }

  /** Stops the timers and waits for sends in flight (each bounded by its deadline, http-post.ts). */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers.splice(0)) timer.cancel();
    await Promise.all(this.passes.values());
  }

  /** Starts a delivery pass on every channel that is not already in one. */
  wake(): void {
    void this.deliverDue();
  }

  /** Runs a pass on every channel; resolves when they are done. Tests await it. */
  async deliverDue(): Promise<void> {
    await Promise.all(this.notifiers.map((notifier) => this.pass(notifier)));
  }

  /** Files a change event (REPACK start/finish, failover) for every channel that takes them. */
  sendChange(change: ChangeEvent): number {
    const nowMs = this.clock.nowMs();
    let rows = 0;
    this.db.transaction(() => {
      for (const notifier of this.notifiers) {
        const outbound = notifier.format({ kind: 'change', change });
        if (outbound === null) continue;
        this.table.enqueue(notifier.channel, outbound, nowMs, nowMs, null);
        rows++;
      }
    })();
    if (rows > 0) this.wake();
    return rows;
  }

  stats(): ChannelStats[] {
    const counts = this.table.counts();
    return this.notifiers.map((n) => ({
      channel: n.channel,
      queueDepth: counts.find((c) => c.channel === n.channel && c.state === 'pending')?.rows ?? 0,
      rejected: counts.find((c) => c.channel === n.channel && c.state === 'rejected')?.rows ?? 0,
      delivered: this.delivered.get(n.channel) ?? 0,
      failures: Object.fromEntries(this.failures.get(n.channel) ?? []),
    }));
  }

  private pass(notifier: Notifier): Promise<void> {
    const running = this.passes.get(notifier.channel);
    if (running) {
      // Rows enqueued while a pass runs may have been missed by its last query.
      this.rerun.add(notifier.channel);
      return running;
    }
    const pass = this.runPass(notifier).finally(() => {
      this.passes.delete(notifier.channel);
      if (this.rerun.delete(notifier.channel) && !this.stopping) void this.pass(notifier);
    });
    this.passes.set(notifier.channel, pass);
    return pass;
  }

  private async runPass(notifier: Notifier): Promise<void> {
    if (this.stopping || (this.pausedUntilMs.get(notifier.channel) ?? 0) > this.clock.monotonicMs()) return;
    for (;;) {
      const rows = this.table.due(notifier.channel, this.clock.nowMs(), this.horizonMs, this.options.batchRows);
      if (rows.length === 0) return;
      for (const row of rows) {
        if (this.stopping) return;
        if (!this.admit(notifier)) return;
        const result = await notifier.send(row.payload, this.clock.nowMs());
        if (!this.settle(notifier, row, result)) return;
      }
    }
  }

  /**
   * Applies the channel's rate limit; false pauses the channel until a send is allowed. The
   * window is measured on the monotonic clock, so a wall clock jumping back cannot stretch it.
   */
  private admit(notifier: Notifier): boolean {
    if (notifier.rateLimit === null) return true;
    const nowMs = this.clock.monotonicMs();
    const waitMs = this.rateLimit.take(notifier.rateLimit.key, notifier.rateLimit.perMinute, nowMs);
    if (waitMs === 0) return true;
    this.pausedUntilMs.set(notifier.channel, nowMs + waitMs);
    return false;
  }

  /** Records the outcome of one send; false ends the channel's pass. */
  private settle(notifier: Notifier, row: OutboxRow, result: DeliveryResult): boolean {
    const channel = notifier.channel;
    const nowMs = this.clock.nowMs();
    if (result.outcome === 'accepted') {
      this.table.accepted(row, nowMs);
      this.delivered.set(channel, (this.delivered.get(channel) ?? 0) + 1);
      this.tellWatcher(channel, (w) => w.accepted(channel, nowMs));
      return true;
    }
    this.countFailure(channel, failureClass(result));
    const context = { channel, outboxId: row.id, dedupKey: row.dedupKey, action: row.action, attempts: row.attempts + 1 };
    if (result.outcome === 'rejected') {
      this.table.reject(row, result.reason);
      this.log.warn({ ...context, reason: result.reason }, 'receiver rejected a notification; kept as rejected, not retried');
      const rejectedRows = this.table.counts().find((c) => c.channel === channel && c.state === 'rejected')?.rows ?? 0;
      this.tellWatcher(channel, (w) => w.rejected({ channel, status: result.status, reason: result.reason, alertId: row.alertId, rejectedRows, nowMs }));
      return true;
    }
    const delayMs = retryDelayMs(row.attempts + 1, this.options.backoff, this.options.random, result.retryAfterMs);
    this.table.retryAt(row, nowMs + delayMs, result.reason);
    if (row.attempts === 0) this.log.warn({ ...context, reason: result.reason, retryInMs: delayMs }, 'notification not delivered; will retry');
    return false;
  }

  /** The watcher writes alerts: a failure there is logged and delivery goes on. */
  private tellWatcher(channel: string, tell: (watcher: DeliveryWatcher) => void): void {
    const { watcher } = this.options;
    if (!watcher) return;
    try {
      tell(watcher);
    } catch (err) {
      this.log.error({ err, channel }, 'could not record the channel\'s delivery state as pgvigil\'s own alert; delivery goes on');
    }
  }

  private countFailure(channel: string, kind: FailureClass): void {
    let byClass = this.failures.get(channel);
    if (!byClass) this.failures.set(channel, (byClass = new Map()));
    byClass.set(kind, (byClass.get(kind) ?? 0) + 1);
  }
}

function failureClass(result: Exclude<DeliveryResult, { outcome: 'accepted' }>): FailureClass {
  if (result.outcome === 'rejected') return 'rejected';
  if (result.status === null) return result.reason.includes('timed out') ? 'timeout' : 'network';
  if (result.status === 429) return 'http_429';
  if (result.status === 408) return 'http_408';
  return 'http_5xx';
}
