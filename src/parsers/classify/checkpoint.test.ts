import { describe, expect, it } from 'vitest';
import type { CheckpointDetails } from '../../domain/index.js';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 04:00:03.280 UTC [61001] LOG:  ';

function checkpoint(message: string): CheckpointDetails {
  return detailsOf(classifyEntry(stderrEntry(AT + message), 't1'), 'checkpoint');
}

const FIGURES = {
  buffers_written: 5120, buffers_written_pct: 31.3, wal_files_added: 0, wal_files_removed: 0, wal_files_recycled: 17,
  write_s: 0.201, sync_s: 0.09, total_s: 0.33, sync_files: 40, sync_longest_s: 0.01, sync_average_s: 0.003,
  distance_kb: 279552, estimate_kb: 279552,
};

// Format strings of pg-messages.md §4.3 filled in (18 is the §4.2 example line).
describe('checkpoint complete, by version', () => {
  it.each([
    {
      version: '13-15',
      message: 'checkpoint complete: wrote 5120 buffers (31.3%); 0 WAL file(s) added, 0 removed, 17 recycled; write=0.201 s, sync=0.090 s, total=0.330 s; sync files=40, longest=0.010 s, average=0.003 s; distance=279552 kB, estimate=279552 kB',
      expected: { ...FIGURES, lsn: null, redo_lsn: null, slru_buffers_written: null, reasons: null },
    },
    {
      version: '16-17 (+ lsn)',
      message: 'checkpoint complete: wrote 5120 buffers (31.3%); 0 WAL file(s) added, 0 removed, 17 recycled; write=0.201 s, sync=0.090 s, total=0.330 s; sync files=40, longest=0.010 s, average=0.003 s; distance=279552 kB, estimate=279552 kB; lsn=3/6B1C2D40, redo lsn=3/6B1C2D08',
      expected: { ...FIGURES, lsn: '3/6B1C2D40', redo_lsn: '3/6B1C2D08', slru_buffers_written: null },
    },
    {
      version: '18 (SLRU buffers, comma after the percentage)',
      message: 'checkpoint complete: wrote 5120 buffers (31.3%), wrote 3 SLRU buffers; 0 WAL file(s) added, 0 removed, 17 recycled; write=0.201 s, sync=0.090 s, total=0.330 s; sync files=40, longest=0.010 s, average=0.003 s; distance=279552 kB, estimate=279552 kB; lsn=3/6B1C2D40, redo lsn=3/6B1C2D40',
      expected: { ...FIGURES, slru_buffers_written: 3, lsn: '3/6B1C2D40', reasons: null },
    },
    {
      version: '19 (flags repeated, zero-padded LSNs)',
      message: 'checkpoint complete: time: wrote 1234 buffers (7.5%), wrote 12 SLRU buffers; 0 WAL file(s) added, 3 removed, 10 recycled; write=269.801 s, sync=0.012 s, total=269.855 s; sync files=45, longest=0.004 s, average=0.001 s; distance=213456 kB, estimate=250000 kB; lsn=3/6B1C2D40, redo lsn=0/0160A3F8',
      expected: { reasons: ['time'], buffers_written: 1234, buffers_written_pct: 7.5, slru_buffers_written: 12, wal_files_removed: 3, write_s: 269.801, total_s: 269.855, distance_kb: 213456, estimate_kb: 250000, redo_lsn: '0/0160A3F8' },
    },
  ])('PG $version', ({ message, expected }) => {
    const d = checkpoint(message);
    expect(d).toMatchObject({ phase: 'complete', restartpoint: false, ...expected });
    expect(d.unknown_parts).toEqual([]);
  });

  it('reads a restartpoint and keeps parts it does not know', () => {
    const d = checkpoint('restartpoint complete: wrote 10 buffers (0.1%); 0 WAL file(s) added, 0 removed, 1 recycled; write=0.001 s, sync=0.001 s, total=0.002 s; sync files=1, longest=0.001 s, average=0.001 s; distance=16 kB, estimate=16 kB; compressed=4 kB');
    expect(d).toMatchObject({ restartpoint: true, buffers_written: 10, distance_kb: 16 });
    expect(d.unknown_parts).toEqual(['compressed=4 kB']);
  });
});

describe('checkpoint starting and warnings', () => {
  it.each([
    ['checkpoint starting: time', false, ['time']],
    ['checkpoint starting: immediate force wait', false, ['immediate', 'force', 'wait']],
    ['checkpoint starting: end-of-recovery immediate wait', false, ['end-of-recovery', 'immediate', 'wait']],
    ['checkpoint starting: fast force wait', false, ['fast', 'force', 'wait']],
    ['checkpoint starting: shutdown fast flush-unlogged', false, ['shutdown', 'fast', 'flush-unlogged']],
    ['restartpoint starting: time', true, ['time']],
  ])('%s', (message, restartpoint, reasons) => {
    expect(checkpoint(message)).toMatchObject({ phase: 'starting', restartpoint, reasons, buffers_written: null });
  });

  it.each([
    ['checkpoints are occurring too frequently (1 second apart)', 1],
    ['checkpoints are occurring too frequently (12 seconds apart)', 12],
  ])('%s', (message, seconds) => {
    expect(checkpoint(message)).toMatchObject({ phase: 'too_frequent', seconds_apart: seconds });
  });

  it('does not take the checkpointer process exit for a checkpoint', () => {
    const event = classifyEntry(stderrEntry(`${AT}checkpointer process (PID 61001) was terminated by signal 9: Killed`), 't1');
    expect(event.kind).toBe('server_crash');
  });
});
