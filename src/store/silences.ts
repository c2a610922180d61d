/**
 * Silences: a maintenance window in which the alerts of a target (or of one rule on it) are
 * recorded, evaluated and shown as usual, but not delivered to any notifier. Ended early by
 * expiring them. Alertmanager's silences do the same for its receivers; these also hold back
 * PagerDuty and webhooks, and they live in pgvigil's store so `pgvigil silence` works with no
 * daemon running.
 */
import type { Db } from './open-store.js';

export interface Silence {
  id: number;
  target: string;
  /** Null: every rule of the target. */
  ruleId: string | null;
  startsMs: number;
  endsMs: number;
  comment: string;
  createdBy: string;
}

export type NewSilence = Omit<Silence, 'id'>;

interface SilenceRow { id: number; target: string; rule_id: string | null; starts_ms: number; ends_ms: number; comment: string; created_by: string }

const silenceOf = (r: SilenceRow): Silence => ({
  id: r.id, target: r.target, ruleId: r.rule_id, startsMs: r.starts_ms, endsMs: r.ends_ms, comment: r.comment, createdBy: r.created_by,
});

export class Silences {
  private readonly sql;

  constructor(db: Db) {
    this.sql = {
      insert: db.prepare('INSERT INTO silences (target, rule_id, starts_ms, ends_ms, comment, created_by) VALUES (?, ?, ?, ?, ?, ?)'),
      matching: db.prepare(`SELECT * FROM silences WHERE target = ? AND (rule_id IS NULL OR rule_id = ?) AND starts_ms <= ? AND ends_ms > ?
        ORDER BY ends_ms DESC LIMIT 1`),
      since: db.prepare('SELECT * FROM silences WHERE ends_ms > ? ORDER BY starts_ms, id'),
      expire: db.prepare('UPDATE silences SET ends_ms = ? WHERE id = ? AND ends_ms > ?'),
      inForce: db.prepare(`SELECT coalesce(group_concat(id), '') FROM (SELECT id FROM silences WHERE starts_ms <= ? AND ends_ms > ? ORDER BY id)`).pluck(),
    };
  }

  add(silence: NewSilence): Silence {
    const id = Number(this.sql.insert.run(silence.target, silence.ruleId, silence.startsMs, silence.endsMs, silence.comment, silence.createdBy).lastInsertRowid);
    return { id, ...silence };
  }

  /** The silence covering an alert of `ruleId` on `target` at `nowMs`, if any (the longest). */
  covering(target: string, ruleId: string, nowMs: number): Silence | null {
    const row = this.sql.matching.get(target, ruleId, nowMs, nowMs) as SilenceRow | undefined;
    return row ? silenceOf(row) : null;
  }

  /** Silences in force or still to come at `nowMs`, and those that ended after `sinceMs`. */
  list(sinceMs: number): Silence[] {
    return (this.sql.since.all(sinceMs) as SilenceRow[]).map(silenceOf);
  }

  /** The ids of the silences in force at `nowMs`, as one key: it changes when one starts, ends or is expired. */
  inForceKey(nowMs: number): string {
    return this.sql.inForce.get(nowMs, nowMs) as string;
  }

  /** Ends a silence now; false when there is no such silence in force. */
  expire(id: number, nowMs: number): boolean {
    return this.sql.expire.run(nowMs, id, nowMs).changes > 0;
  }
}
