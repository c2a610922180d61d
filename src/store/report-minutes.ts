/**
 * The report_minutes table (schema 10): each target's log report per minute, as the section
 * states' JSON text, several rows for a minute until they are merged. Owns the table's SQL.
 * Never: what a state holds (src/report/log-report/ folds and merges them; the store keeps text).
 */
import type { Db } from './open-store.js';

export interface ReportMinuteRow {
  target: string;
  /** The minute's start, epoch ms. */
  minuteMs: number;
  /** JSON: section key to state. */
  states: string;
}

/** A target's minute with the rows stored for it since `fromId`. */
export interface MinuteGroup {
  target: string;
  minuteMs: number;
  /** Rows of the minute, all of them (not only those since fromId). */
  rows: number;
  /** The lowest and highest ids of its rows since fromId. */
  firstId: number;
  lastId: number;
}

export class ReportMinutesTable {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      insert: db.prepare('INSERT INTO report_minutes (target, minute_ms, states) VALUES (?, ?, ?)'),
      ofMinute: db.prepare('SELECT id, states FROM report_minutes WHERE target = ? AND minute_ms = ? ORDER BY id'),
      deleteRows: db.prepare('DELETE FROM report_minutes WHERE target = ? AND minute_ms = ? AND id <= ?'),
      groupsSince: db.prepare(`SELECT target, minute_ms AS minuteMs, min(id) AS firstId, max(id) AS lastId,
        (SELECT count(*) FROM report_minutes m WHERE m.target = r.target AND m.minute_ms = r.minute_ms) AS rows
        FROM report_minutes r WHERE id >= ? GROUP BY target, minute_ms`),
    };
  }

  /** Inside the caller's transaction (the store writer's commit). */
  insert(row: ReportMinuteRow): void {
    this.sql.insert.run(row.target, row.minuteMs, row.states);
  }

  /** The target-minutes that have rows with an id from `fromId` on. */
  groupsSince(fromId: number): MinuteGroup[] {
    return this.sql.groupsSince.all(fromId) as MinuteGroup[];
  }

  /**
   * Replaces the minute's rows by one: `merge` gets their states in the order they were written
   * and returns the merged text. One transaction, so a kill leaves either the rows or their merge.
   */
  mergeMinute(target: string, minuteMs: number, merge: (states: string[]) => string): void {
    this.db.transaction(() => {
      const rows = this.sql.ofMinute.all(target, minuteMs) as Array<{ id: number; states: string }>;
      if (rows.length < 2) return;
      this.sql.deleteRows.run(target, minuteMs, rows.at(-1)!.id);
      this.insert({ target, minuteMs, states: merge(rows.map((r) => r.states)) });
    })();
  }

  /**
   * The rows of the minutes that start in [fromMs, toMs], in time order and, within a minute, by
   * target and then in the order they were written; read row by row, so a week stays out of memory.
   */
  *inWindow(query: { fromMs: number; toMs: number; target?: string }): Generator<ReportMinuteRow> {
    const byTarget = query.target !== undefined;
    const rows = this.db.prepare(`SELECT target, minute_ms AS minuteMs, states FROM report_minutes
      WHERE minute_ms >= ? AND minute_ms <= ? ${byTarget ? 'AND target = ?' : ''} ORDER BY minute_ms, target, id`)
      .iterate(...[query.fromMs, query.toMs, ...(byTarget ? [query.target] : [])]) as IterableIterator<ReportMinuteRow>;
    yield* rows;
  }

  /** Deletes the minutes that start before `cutoffMs`, at most `limit` rows; returns how many. */
  deleteBefore(cutoffMs: number, limit: number): number {
    return this.db.prepare(`DELETE FROM report_minutes WHERE id IN (SELECT id FROM report_minutes WHERE minute_ms < ? LIMIT ${limit})`).run(cutoffMs).changes;
  }
}
