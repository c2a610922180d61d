import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent, DeadlockDetails, LogLevel } from '../domain/index.js';
import { AnalyzeSummaryBuilder } from '../report/analyze-summary.js';
import { ColumnBatchBuilder, forEachDecoded } from './generic-columns.js';

const T0 = Date.UTC(2026, 11, 2, 5, 0, 0);
const LEVELS: LogLevel[] = ['LOG', 'ERROR', 'WARNING', 'FATAL', 'DEBUG1'];
/** A deadlock as the classifier gives one (the summary shows its cycle). */
const DEADLOCK: DeadlockDetails = { pid: 1, database: null, user: null, statement: null, processes: [], context: null };

function event(kind: 'generic' | 'deadlock', offsetMs: number, level: LogLevel, sqlstate: string | null): AnyLogEvent {
  return {
    kind, target: 'offline', tsMs: T0 + offsetMs, pid: 1, database: null, user: null, level, sqlstate, message: kind,
    details: kind === 'generic' ? { classified: false } : DEADLOCK, source: { file: 'x.log', offset: 0, line: null },
  } as AnyLogEvent;
}

/** Mostly generic events, nearly in time order (a few late ones), across minutes, with errors and SQLSTATEs. */
const events = fc.array(
  fc.record({
    generic: fc.nat(9).map((n) => n < 8),
    stepMs: fc.nat(20_000),
    lateMs: fc.constantFrom(0, 0, 0, 0, 0, 0, 0, 0, 0, 150_000),
    level: fc.constantFrom(...LEVELS),
    sqlstate: fc.constantFrom(null, null, '23505', '57014'),
  }),
  { maxLength: 300 },
).map((drawn) => {
  let atMs = 0;
  return drawn.map((e) => event(e.generic ? 'generic' : 'deadlock', (atMs += e.stepMs) - e.lateMs, e.level, e.sqlstate));
});

/** The summary of `list` through batches cut every `cut` events, as the merge reads them. */
function throughBatches(list: AnyLogEvent[], cut: number): ReturnType<AnalyzeSummaryBuilder['result']> {
  const summary = new AnalyzeSummaryBuilder({ openMinutes: 2, topN: 5 });
  const builder = new ColumnBatchBuilder();
  const drain = () => forEachDecoded(builder.take(), (e) => summary.add(e), (run) => summary.addGenericRun(run));
  list.forEach((e, i) => {
    builder.push(e);
    if ((i + 1) % cut === 0) drain();
  });
  drain();
  return summary.result();
}

describe('generic events as runs', () => {
  it('summarize exactly as the events one by one, however the batches are cut', () => {
    fc.assert(fc.property(events, fc.integer({ min: 1, max: 50 }), (list, cut) => {
      const oneByOne = new AnalyzeSummaryBuilder({ openMinutes: 2, topN: 5 });
      for (const e of list) oneByOne.add(e);
      expect(throughBatches(list, cut)).toEqual(oneByOne.result());
    }), { numRuns: 300 });
  });

  it('fold a minute of generic LOG events into one run, broken by another event, a level, a SQLSTATE or a minute', () => {
    const builder = new ColumnBatchBuilder();
    const list = [
      event('generic', 0, 'LOG', null), event('generic', 5, 'LOG', null), event('generic', 2, 'LOG', null),
      event('deadlock', 6, 'ERROR', '40P01'), event('generic', 7, 'LOG', null),
      event('generic', 8, 'ERROR', '23505'), event('generic', 9, 'ERROR', '57014'),
      event('generic', 60_000, 'LOG', null),
    ];
    for (const e of list) builder.push(e);
    const seen: string[] = [];
    forEachDecoded(builder.take(), (e) => seen.push(e.kind), (run) => seen.push(`${run.count} ${run.level} ${run.sqlstate} ${run.minTsMs - T0}-${run.maxTsMs - T0}`));
    expect(seen).toEqual(['3 LOG null 0-5', 'deadlock', '1 LOG null 7-7', '1 ERROR 23505 8-8', '1 ERROR 57014 9-9', '1 LOG null 60000-60000']);
    expect(builder.size).toBe(0);
  });
});
