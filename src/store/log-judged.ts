/**
 * How far each target's log has been judged by its log-only rules (table log_judged): every
 * event of the target up to `eventId` was seen by an evaluation, and the rules ran up to `atMs`.
 * A start reads the events stored after it, which a kill left unjudged.
 *
 * Owns: the table and the events query. Never: deciding when a position moves
 * (src/rules/log-judgement.ts does, inside the transaction of the evaluation it records).
 */
import type { Db } from './open-store.js';

export interface JudgedPosition {
  eventId: number;
  atMs: number;
}

export interface UnjudgedEvent {
  id: number;
  tsMs: number;
}

export class LogJudgedTable {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      get: db.prepare('SELECT event_id AS eventId, at_ms AS atMs FROM log_judged WHERE target = ?'),
      save: db.prepare(
        `INSERT INTO log_judged (target, event_id, at_ms, updated_ms) VALUES (?, ?, ?, ?)
         ON CONFLICT (target) DO UPDATE SET event_id = excluded.event_id, at_ms = excluded.at_ms, updated_ms = excluded.updated_ms`,
      ),
      // By id (the primary key): a range scan from the position, whatever the table's size.
      after: db.prepare('SELECT id, ts_ms AS tsMs FROM events WHERE id > ? AND target = ? ORDER BY id LIMIT ?'),
      newest: db.prepare('SELECT id AS eventId, ts_ms AS atMs FROM events WHERE target = ? ORDER BY id DESC LIMIT 1'),
    };
  }

  get(target: string): JudgedPosition | null {
    return (this.sql.get.get(target) as JudgedPosition | undefined) ?? null;
  }

  save(target: string, position: JudgedPosition, nowMs: number): void {
    this.sql.save.run(target, position.eventId, position.atMs, nowMs);
  }

  /** At most `limit` of the target's events stored after `eventId`, in the order they were committed. */
  eventsAfter(target: string, eventId: number, limit: number): UnjudgedEvent[] {
    return this.sql.after.all(eventId, target, limit) as UnjudgedEvent[];
  }

  /**
   * The target's newest event as a position: what a store written before positions were kept
   * (or a target seen for the first time) counts as judged, since that pgvigil judged what it read.
   */
  newestEvent(target: string): JudgedPosition | null {
    return (this.sql.newest.get(target) as JudgedPosition | undefined) ?? null;
  }

  /** Runs `fn` in one transaction (a savepoint inside another). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
