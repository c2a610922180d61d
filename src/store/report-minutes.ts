/**
 * The report_minutes table (schema 10): each target's log report per minute, as the section
 * states' JSON (deflated: JSON of counters and statement shapes shrinks about tenfold), several
 * rows for a minute until they are merged, and hour rows that merge an hour's minutes. Owns the
 * table's SQL and encoding. Never: what a state holds (src/report/log-report/ folds and merges).
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Db } from './open-store.js';

export const MINUTE_SPAN_MS = 60_000;
export const HOUR_SPAN_MS = 3_600_000;

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
      insert: db.prepare('INSERT INTO report_minutes (target, minute_ms, span_ms, states) VALUES (?, ?, ?, ?)'),
      ofSpan: db.prepare('SELECT id, states FROM report_minutes WHERE target = ? AND span_ms = ? AND minute_ms >= ? AND minute_ms < ? ORDER BY minute_ms, id'),
      minuteRowsAfter: db.prepare(`SELECT id, target, minute_ms AS minuteMs FROM report_minutes WHERE id > ? AND span_ms = ${MINUTE_SPAN_MS} ORDER BY id LIMIT ?`),
      ofMinute: db.prepare(`SELECT id, states FROM report_minutes WHERE target = ? AND minute_ms = ? AND span_ms = ${MINUTE_SPAN_MS} ORDER BY id`),
      oldestMinuteAfter: db.prepare(`SELECT min(minute_ms) FROM report_minutes WHERE id > ? AND span_ms = ${MINUTE_SPAN_MS}`).pluck(),
      countMinuteRowsAfter: db.prepare(`SELECT count(*) FROM report_minutes WHERE id > ? AND span_ms = ${MINUTE_SPAN_MS} AND minute_ms < ?`).pluck(),
      deleteRows: db.prepare('DELETE FROM report_minutes WHERE target = ? AND span_ms = ? AND minute_ms >= ? AND minute_ms < ? AND id <= ?'),
      groupsSince: db.prepare(`SELECT target, minute_ms AS minuteMs, min(id) AS firstId, max(id) AS lastId,
        (SELECT count(*) FROM report_minutes m WHERE m.target = r.target AND m.minute_ms = r.minute_ms AND m.span_ms = ${MINUTE_SPAN_MS}) AS rows
        FROM report_minutes r WHERE id >= ? AND span_ms = ${MINUTE_SPAN_MS} GROUP BY target, minute_ms`),
    };
  }

  /** A minute's row; inside the caller's transaction (the store writer's commit). */
  insert(row: ReportMinuteRow): void {
    this.sql.insert.run(row.target, row.minuteMs, MINUTE_SPAN_MS, deflateRawSync(row.states));
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
      const rows = this.sql.ofSpan.all(target, MINUTE_SPAN_MS, minuteMs, minuteMs + MINUTE_SPAN_MS) as Array<{ id: number; states: Buffer }>;
      if (rows.length < 2) return;
      this.sql.deleteRows.run(target, MINUTE_SPAN_MS, minuteMs, minuteMs + MINUTE_SPAN_MS, rows.at(-1)!.id);
      this.sql.insert.run(target, minuteMs, MINUTE_SPAN_MS, deflateRawSync(merge(rows.map((r) => inflated(r.states)))));
    })();
  }

  /** (Re)writes the hour row of `hourMs` as the merge of the hour's minute rows, in time order. */
  writeHour(target: string, hourMs: number, merge: (states: string[]) => string): void {
    this.db.transaction(() => {
      const minutes = this.sql.ofSpan.all(target, MINUTE_SPAN_MS, hourMs, hourMs + HOUR_SPAN_MS) as Array<{ states: Buffer }>;
      if (minutes.length === 0) return;
      this.sql.deleteRows.run(target, HOUR_SPAN_MS, hourMs, hourMs + 1, Number.MAX_SAFE_INTEGER);
      this.sql.insert.run(target, hourMs, HOUR_SPAN_MS, deflateRawSync(merge(minutes.map((m) => inflated(m.states)))));
    })();
  }

  /**
   * What covers the minutes that start in [fromMs, toMs], each once, in time order (by target and
   * then as written within a start): an hour inside the window by its hour row when that row is
   * current (written after every minute row of its hour), else by its minute rows. Read row by
   * row, so a long window stays out of memory.
   */
  *inWindow(query: { fromMs: number; toMs: number; target?: string }): Generator<ReportMinuteRow> {
    const byTarget = query.target !== undefined ? 'AND target = @target' : '';
    const rows = this.db.prepare(`WITH hours AS MATERIALIZED (
        SELECT h.id, h.target, h.minute_ms FROM report_minutes h
        WHERE h.span_ms = ${HOUR_SPAN_MS} AND h.minute_ms >= @fromMs AND h.minute_ms + ${HOUR_SPAN_MS} - 1 <= @toMs ${byTarget}
          AND h.id > (SELECT coalesce(max(m.id), 0) FROM report_minutes m
            WHERE m.target = h.target AND m.minute_ms >= h.minute_ms AND m.minute_ms < h.minute_ms + ${HOUR_SPAN_MS} AND m.span_ms = ${MINUTE_SPAN_MS}))
      SELECT target, minute_ms AS minuteMs, states FROM report_minutes r
      WHERE minute_ms >= @fromMs AND minute_ms <= @toMs ${byTarget} AND (
        (span_ms = ${HOUR_SPAN_MS} AND id IN (SELECT id FROM hours))
        OR (span_ms = ${MINUTE_SPAN_MS} AND NOT EXISTS (
          SELECT 1 FROM hours WHERE hours.target = r.target AND r.minute_ms >= hours.minute_ms AND r.minute_ms < hours.minute_ms + ${HOUR_SPAN_MS})))
      ORDER BY minute_ms, target, id`)
      .iterate({ fromMs: query.fromMs, toMs: query.toMs, ...(query.target !== undefined ? { target: query.target } : {}) }) as IterableIterator<{ target: string; minuteMs: number; states: Buffer }>;
    for (const row of rows) yield { target: row.target, minuteMs: row.minuteMs, states: inflated(row.states) };
  }

  /** Minute rows (not hours) with an id above `afterId`, oldest first: what forwarding has not read yet. */
  minuteRowsAfter(afterId: number, limit: number): Array<{ id: number; target: string; minuteMs: number }> {
    return this.sql.minuteRowsAfter.all(afterId, limit) as Array<{ id: number; target: string; minuteMs: number }>;
  }

  /** How many minute rows have an id above `afterId` (and a minute starting before `beforeMs`). */
  countMinuteRowsAfter(afterId: number, beforeMs = Number.MAX_SAFE_INTEGER): number {
    return this.sql.countMinuteRowsAfter.get(afterId, beforeMs) as number;
  }

  /** The start of the oldest minute with a row above `afterId`; null when there is none. */
  oldestMinuteAfter(afterId: number): number | null {
    return this.sql.oldestMinuteAfter.get(afterId) as number | null;
  }

  /**
   * Every row a target's minute has now, as written (oldest first), and the highest row id among
   * them: a minute's rows only ever gain rows or are merged into a row with a higher id, so a
   * higher `throughId` means the same minute with as much or more in it. Null: no rows.
   */
  minute(target: string, minuteMs: number): { throughId: number; states: string[] } | null {
    const rows = this.sql.ofMinute.all(target, minuteMs) as Array<{ id: number; states: Buffer }>;
    if (rows.length === 0) return null;
    return { throughId: rows.at(-1)!.id, states: rows.map((r) => inflated(r.states)) };
  }

  /** Deletes the minutes (and hours) that start before `cutoffMs`, at most `limit` rows; returns how many. */
  deleteBefore(cutoffMs: number, limit: number): number {
    return this.db.prepare(`DELETE FROM report_minutes WHERE id IN (SELECT id FROM report_minutes WHERE minute_ms < ? LIMIT ${limit})`).run(cutoffMs).changes;
  }
}

/** A row's states as JSON text; a blob that does not inflate (damaged outside pgvigil) reads as '' (not JSON: counted by the reader). */
function inflated(blob: Buffer): string {
  try {
    return inflateRawSync(blob).toString('utf8');
  } catch {
    return '';
  }
}
