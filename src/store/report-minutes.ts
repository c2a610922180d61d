/**
 * The report_minutes table (schema 10): each target's log report per minute, as the section
 * states' JSON text. Owns the table's SQL and the fold cursor (report_folded). Never: what a
 * state holds (src/report/log-report/ folds and merges them; the store keeps text).
 */
import type { Db } from './open-store.js';

export interface ReportMinuteRow {
  target: string;
  minuteMs: number;
  /** The newest event id the folder had seen when it wrote the row (see migration 10). */
  throughId: number;
  /** JSON: section key to state. */
  states: string;
}

export class ReportMinutesTable {
  private readonly sql;

  constructor(private readonly db: Db) {
    this.sql = {
      insert: db.prepare('INSERT INTO report_minutes (target, minute_ms, through_id, states) VALUES (?, ?, ?, ?)'),
      cursor: db.prepare('SELECT event_id FROM report_folded').pluck(),
      setCursor: db.prepare('UPDATE report_folded SET event_id = ?'),
      throughId: db.prepare('SELECT max(through_id) FROM report_minutes WHERE target = ? AND minute_ms = ?').pluck(),
    };
  }

  /** The rows and the new cursor in one transaction: a kill never leaves one without the other. */
  write(rows: readonly ReportMinuteRow[], cursor: number): void {
    this.db.transaction(() => {
      for (const row of rows) this.sql.insert.run(row.target, row.minuteMs, row.throughId, row.states);
      this.sql.setCursor.run(cursor);
    })();
  }

  /** Every event with an id up to this one is in some row. */
  cursor(): number {
    return (this.sql.cursor.get() as number | undefined) ?? 0;
  }

  /** The highest through_id of the target's rows of that minute; 0 when it has none. */
  throughId(target: string, minuteMs: number): number {
    return (this.sql.throughId.get(target, minuteMs) as number | null) ?? 0;
  }

  /**
   * The rows of the minutes that start in [fromMs, toMs], in time order and, within a minute, by
   * target and then in the order they were written; read row by row, so a week stays out of memory.
   */
  *inWindow(query: { fromMs: number; toMs: number; target?: string }): Generator<ReportMinuteRow> {
    const byTarget = query.target !== undefined;
    const rows = this.db.prepare(`SELECT target, minute_ms AS minuteMs, through_id AS throughId, states FROM report_minutes
      WHERE minute_ms >= ? AND minute_ms <= ? ${byTarget ? 'AND target = ?' : ''} ORDER BY minute_ms, target, id`)
      .iterate(...[query.fromMs, query.toMs, ...(byTarget ? [query.target] : [])]) as IterableIterator<ReportMinuteRow>;
    yield* rows;
  }

  /** Deletes the minutes that start before `cutoffMs`, at most `limit` rows; returns how many. */
  deleteBefore(cutoffMs: number, limit: number): number {
    return this.db.prepare(`DELETE FROM report_minutes WHERE id IN (SELECT id FROM report_minutes WHERE minute_ms < ? LIMIT ${limit})`).run(cutoffMs).changes;
  }
}

