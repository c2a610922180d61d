import { describe, expect, it } from 'vitest';
import { expectMergeProperty, expectSectionGolden, fixtureEvents, foldEvents, foldResult } from '../../../test/helpers/report-section.js';
import { checkpointReason, checkpointsSection, REASON_NOT_LOGGED } from './checkpoints.js';
import { DEFAULT_REPORT_LIMITS } from './section.js';

/**
 * Real logs with checkpoints: requested (13, 18, 19's `fast` and repeated flags), end of recovery,
 * shutdown, by WAL volume too often, and a standby's restartpoints.
 */
const CASES = [
  'pg13-stderr-checkpoint-requested',
  'pg18-csvlog-checkpoint-requested',
  'pg19-jsonlog-checkpoint-requested',
  'pg15-stderr-server-killed-crash-recovery',
  'pg19-stderr-backend-killed-crash-restart',
  'pg15-stderr-multixact-members-run-short',
  '../log-report/pg18-stderr-checkpoint-wal-pressure',
  '../log-report/pg18-csvlog-restartpoints-on-standby',
];

describe('checkpoints section', () => {
  it('folds real logs to one checkpoint per start/complete pair (golden)', () => expectSectionGolden(checkpointsSection, CASES));

  it('counts a requested checkpoint once, with its reason and figures', async () => {
    const result = foldResult(checkpointsSection, await fixtureEvents('pg18-stderr-checkpoint-requested'));
    expect(result.checkpoints).toMatchObject({ count: 1, unfinished: 0, by_reason: [{ reason: 'force', count: 1 }], buffers_written: 1104 });
    expect(result.slowest).toEqual([expect.objectContaining({
      started_at: '2026-11-30T07:20:29.229Z', completed_at: '2026-11-30T07:20:29.240Z', flags: ['immediate', 'force', 'wait'],
      write_s: 0.011, sync_s: 0.001, total_s: 0.012, distance_kb: 17510, estimate_kb: 17510, wal_files_recycled: 1,
    })]);
    expect(result.restartpoints.count).toBe(0);
    expect(result.per_minute).toEqual([{ minute: '2026-11-30T07:20:00.000Z', checkpoints: 1, restartpoints: 0, buffers_written: 1104, too_frequent: 0 }]);
  });

  it('gives a complete its start when the two were folded apart', async () => {
    const events = (await fixtureEvents('pg15-stderr-multixact-members-run-short')).filter((e) => e.kind === 'checkpoint');
    expect(events.map((e) => e.kind === 'checkpoint' && e.details.phase)).toEqual(['starting', 'complete', 'starting', 'complete']);
    const limits = DEFAULT_REPORT_LIMITS;
    const first = foldEvents(checkpointsSection, events.slice(0, 1));
    const rest = foldEvents(checkpointsSection, events.slice(1));
    // Alone, the later range cannot tell why its first checkpoint ran...
    expect(checkpointsSection.result(structuredClone(rest), limits).checkpoints.by_reason).toEqual([
      { reason: REASON_NOT_LOGGED, count: 1 }, { reason: 'shutdown', count: 1 },
    ]);
    // ...merged after the range with its start, it can.
    const merged = checkpointsSection.result(checkpointsSection.merge(first, rest, limits), limits);
    expect(merged.checkpoints.by_reason).toEqual([{ reason: 'force', count: 1 }, { reason: 'shutdown', count: 1 }]);
  });

  it('counts a start that no complete followed as unfinished', async () => {
    const events = (await fixtureEvents('pg18-stderr-checkpoint-requested')).filter((e) => e.kind === 'checkpoint');
    const cut = foldResult(checkpointsSection, events.slice(0, 1));
    expect(cut.checkpoints).toMatchObject({ count: 0, unfinished: 1 });
    const twice = foldResult(checkpointsSection, [events[0]!, ...events]);
    expect(twice.checkpoints).toMatchObject({ count: 1, unfinished: 1 });
  });

  it('counts WAL-triggered checkpoints, the warnings that they came too often, and a start cut off by the end of the log', async () => {
    const result = foldResult(checkpointsSection, await fixtureEvents('../log-report/pg18-stderr-checkpoint-wal-pressure'));
    expect(result.checkpoints).toMatchObject({ count: 1, unfinished: 1, by_reason: [{ reason: 'wal', count: 1 }], buffers_written: 1368 });
    expect(result.too_frequent).toEqual({ count: 2, min_seconds_apart: 0 });
    expect(result.restartpoints.count).toBe(0);
  });

  it("keeps a standby's restartpoints apart from checkpoints", async () => {
    const result = foldResult(checkpointsSection, await fixtureEvents('../log-report/pg18-jsonlog-restartpoints-on-standby'));
    expect(result.restartpoints).toMatchObject({ count: 1, unfinished: 1, by_reason: [{ reason: 'wal', count: 1 }], buffers_written: 2245 });
    expect(result.checkpoints).toMatchObject({ count: 0, unfinished: 0 });
    expect(result.slowest).toEqual([expect.objectContaining({ restartpoint: true, reason: 'wal', write_s: 0.766 })]);
    expect(result.per_minute).toEqual([expect.objectContaining({ checkpoints: 0, restartpoints: 1, buffers_written: 2245 })]);
  });

  it('names the reason by the first flag that is not a mode, as 13-19 print them', () => {
    expect(checkpointReason(['immediate', 'force', 'wait'])).toBe('force');
    expect(checkpointReason(['fast', 'force', 'wait'])).toBe('force'); // PG 19+
    expect(checkpointReason(['end-of-recovery', 'immediate', 'wait'])).toBe('end-of-recovery');
    expect(checkpointReason(['shutdown', 'immediate'])).toBe('shutdown');
    expect(checkpointReason(['time'])).toBe('time');
    expect(checkpointReason(['wal'])).toBe('wal');
    expect(checkpointReason(['immediate', 'wait'])).toBe('immediate wait');
    expect(checkpointReason(null)).toBe(REASON_NOT_LOGGED);
  });

  it('merges any split of real logs as one pass, pairing across the split', async () => {
    const events = (await Promise.all(CASES.map((name) => fixtureEvents(name)))).flat();
    expectMergeProperty(checkpointsSection, events);
    expectMergeProperty(checkpointsSection, events, { maxKeys: 2, topN: 1 });
  });
});
