/**
 * The outbox table's SQL, shared by the writers (AlertStore, Outbox.sendChange) and the
 * deliverer (Outbox). A row lives from before its first send until its receiver accepts it;
 * a receiver's 400 leaves it as 'rejected' for an operator to see.
 *
 * Order: rows of one channel and dedup key go out in id order (a resolve never overtakes its
 * trigger). Coalescing: a new payload replaces the newest pending row of the same channel, key
 * and action, so an alert storm or a long receiver outage sends the latest state once, not every
 * step; `revision` makes a send that raced a replacement leave the newer payload pending.
 */
import type { Db } from '../store/open-store.js';
import type { Outbound, OutboxAction } from './notifier.js';

export interface OutboxRow {
  id: number;
  channel: string;
  dedupKey: string;
  action: OutboxAction;
  payload: unknown;
  createdMs: number;
  attempts: number;
  nextAttemptMs: number;
  state: 'pending' | 'rejected';
  lastError: string | null;
  revision: number;
  alertId: number | null;
}

interface RawRow {
  id: number;
  channel: string;
  dedup_key: string;
  action: string;
  payload: string;
  created_ms: number;
  attempts: number;
  next_attempt_ms: number;
  state: string;
  last_error: string | null;
  revision: number;
  alert_id: number | null;
}

export interface QueueCount {
  channel: string;
  state: 'pending' | 'rejected';
  rows: number;
}

export class OutboxTable {
  private readonly newestPending;
  private readonly insert;
  private readonly replace;
  private readonly selectDue;
  private readonly deleteAccepted;
  private readonly resend;
  private readonly reschedule;
  private readonly markRejected;
  private readonly countByState;
  private readonly selectForAlert;
  private readonly hasPending;
  private readonly withholdKey;
  private readonly releaseKey;
  private readonly anyWithheld;
  private readonly withheldKey;

  constructor(db: Db) {
    this.newestPending = db.prepare(
      `SELECT id, action FROM outbox WHERE channel = ? AND dedup_key = ? AND state = 'pending' ORDER BY id DESC LIMIT 1`,
    );
    this.insert = db.prepare(
      `INSERT INTO outbox (channel, dedup_key, action, payload, created_ms, next_attempt_ms, alert_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.replace = db.prepare('UPDATE outbox SET payload = ?, revision = revision + 1, alert_id = ? WHERE id = ?');
    this.selectDue = db.prepare(
      `SELECT * FROM outbox o
       WHERE o.channel = ? AND o.state = 'pending' AND (o.next_attempt_ms <= ? OR o.next_attempt_ms > ?)
         AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.channel = o.channel AND p.dedup_key = o.dedup_key
                         AND p.state = 'pending' AND p.id < o.id)
       ORDER BY o.id LIMIT ?`,
    );
    this.deleteAccepted = db.prepare('DELETE FROM outbox WHERE id = ? AND revision = ?');
    this.resend = db.prepare('UPDATE outbox SET attempts = 0, next_attempt_ms = ?, last_error = NULL WHERE id = ?');
    this.reschedule = db.prepare('UPDATE outbox SET attempts = attempts + 1, next_attempt_ms = ?, last_error = ? WHERE id = ?');
    this.markRejected = db.prepare(`UPDATE outbox SET attempts = attempts + 1, state = 'rejected', last_error = ? WHERE id = ?`);
    this.countByState = db.prepare('SELECT channel, state, count(*) AS rows FROM outbox GROUP BY channel, state');
    this.selectForAlert = db.prepare('SELECT * FROM outbox WHERE alert_id = ? ORDER BY id');
    this.hasPending = db.prepare(`SELECT 1 FROM outbox WHERE channel = ? AND dedup_key = ? AND state = 'pending' LIMIT 1`).pluck();
    this.withholdKey = db.prepare('INSERT OR IGNORE INTO notify_withheld (channel, dedup_key) VALUES (?, ?)');
    this.releaseKey = db.prepare('DELETE FROM notify_withheld WHERE channel = ? AND dedup_key = ?');
    this.anyWithheld = db.prepare('SELECT 1 FROM notify_withheld LIMIT 1').pluck();
    this.withheldKey = db.prepare('SELECT 1 FROM notify_withheld WHERE channel = ? AND dedup_key = ?').pluck();
  }

  /** Files one outbound notification; call inside the transaction that caused it. Returns the row id. */
  enqueue(channel: string, outbound: Outbound, nowMs: number, dueMs: number, alertId: number | null): number {
    const payload = JSON.stringify(outbound.payload);
    const newest = this.newestPending.get(channel, outbound.dedupKey) as { id: number; action: string } | undefined;
    if (newest && newest.action === outbound.action) {
      this.replace.run(payload, alertId, newest.id);
      return newest.id;
    }
    return Number(this.insert.run(channel, outbound.dedupKey, outbound.action, payload, nowMs, dueMs, alertId).lastInsertRowid);
  }

  /**
   * Pending rows of a channel that are due and first in line for their key. A row scheduled more
   * than horizonMs ahead (the longest delay anything schedules) was scheduled before the wall
   * clock jumped back: it is due now rather than after the clock catches up.
   */
  due(channel: string, nowMs: number, horizonMs: number, limit: number): OutboxRow[] {
    return (this.selectDue.all(channel, nowMs, nowMs + horizonMs, limit) as RawRow[]).map(fromRaw);
  }

  /** The receiver accepted `row`. False when its payload was replaced meanwhile: it is then due again at once. */
  accepted(row: OutboxRow, nowMs: number): boolean {
    if (this.deleteAccepted.run(row.id, row.revision).changes === 1) return true;
    this.resend.run(nowMs, row.id);
    return false;
  }

  retryAt(row: OutboxRow, nextAttemptMs: number, error: string): void {
    this.reschedule.run(nextAttemptMs, error, row.id);
  }

  reject(row: OutboxRow, error: string): void {
    this.markRejected.run(error, row.id);
  }

  hasPendingFor(channel: string, dedupKey: string): boolean {
    return this.hasPending.get(channel, dedupKey) !== undefined;
  }

  /** The channel was not sent `dedupKey`'s trigger (below its min_severity); call inside the transaction that decided it. */
  withhold(channel: string, dedupKey: string): void {
    this.withholdKey.run(channel, dedupKey);
  }

  /** Ends withholding `dedupKey` from the channel; true when it was withheld. */
  release(channel: string, dedupKey: string): boolean {
    return this.releaseKey.run(channel, dedupKey).changes === 1;
  }

  hasWithheld(): boolean {
    return this.anyWithheld.get() !== undefined;
  }

  isWithheld(channel: string, dedupKey: string): boolean {
    return this.withheldKey.get(channel, dedupKey) !== undefined;
  }

  counts(): QueueCount[] {
    return this.countByState.all() as QueueCount[];
  }

  forAlert(alertId: number): OutboxRow[] {
    return (this.selectForAlert.all(alertId) as RawRow[]).map(fromRaw);
  }
}

function fromRaw(raw: RawRow): OutboxRow {
  return {
    id: raw.id,
    channel: raw.channel,
    dedupKey: raw.dedup_key,
    action: raw.action as OutboxAction,
    payload: JSON.parse(raw.payload) as unknown,
    createdMs: raw.created_ms,
    attempts: raw.attempts,
    nextAttemptMs: raw.next_attempt_ms,
    state: raw.state as 'pending' | 'rejected',
    lastError: raw.last_error,
    revision: raw.revision,
    alertId: raw.alert_id,
  };
}
