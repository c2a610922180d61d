/**
 * The tailer against real files in temp directories: appends, partial lines, rotation by rename
 * and by a new file in the log directory, truncation, delete + re-create, a directory that
 * appears later, start at the end, idle flush, chokidar wake-ups and back-pressure.
 */
import { mkdirSync, renameSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { notableOrProblem } from '../../src/sources/log-tailer.js';
import type { WriteBatch } from '../../src/store/store-writer.js';
import { LOG_FILENAME, logDirectory, logLine, logLines, range, startRig, tempDir, waitFor, type Rig } from './tailer-rig.js';

let rig: Rig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

/** A tailer on a file holding entries 0..9, all of them stored. */
async function tailingTenLines(name: string): Promise<{ file: string; r: Rig }> {
  const dir = tempDir(name);
  const file = path.join(dir, 'postgresql.log');
  writeFileSync(file, logLines(0, 10));
  const r = await startRig(dir, { source: file });
  rig = r;
  await r.expectSeqs(range(0, 10));
  return { file, r };
}

describe('tailer: one file', () => {
  it('follows appends and holds a partial last line until its newline arrives', async () => {
    const dir = tempDir('tail-partial');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, logLines(0, 5) + logLine(5).slice(0, 30));
    rig = await startRig(dir, { source: file });
    await rig.expectSeqs(range(0, 5));
    for (let i = 0; i < 3; i++) await rig.idle();
    expect(rig.seqs()).toEqual(range(0, 5));
    rig.append(file, logLine(5).slice(30) + logLines(6, 8));
    await rig.expectSeqs(range(0, 8));
    const offsets = rig.db.prepare('SELECT source_offset FROM events ORDER BY id').pluck().all() as number[];
    expect(offsets.slice(0, 3)).toEqual([0, logLine(0).length, logLine(0).length + logLine(1).length]);
  });

  it('starts at the end of an existing file when start_at is end', async () => {
    const dir = tempDir('tail-end');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, logLines(0, 10));
    rig = await startRig(dir, { source: file, startAt: 'end' });
    await waitFor(() => rig!.tailer.stats().currentFile === file, 'the tailer to open the file', () => rig!.idle());
    rig.append(file, logLines(10, 15));
    await rig.expectSeqs(range(10, 15));
  });

  it('finishes a file renamed away (logrotate) and continues with the new one from its start', async () => {
    const { file, r } = await tailingTenLines('tail-rename');
    renameSync(file, `${file}.1`);
    r.append(`${file}.1`, logLines(10, 13)); // written through the server's still-open descriptor
    writeFileSync(file, logLines(13, 20));
    await r.expectSeqs(range(0, 20));
    expect(r.tailer.stats().filesRotated).toBe(1);
  });

  it('reads a truncated file (copytruncate, log_truncate_on_rotation) again from the start', async () => {
    const { file, r } = await tailingTenLines('tail-truncate');
    truncateSync(file, 0);
    r.append(file, logLines(10, 13));
    await r.expectSeqs(range(0, 13));
    expect(r.tailer.stats().truncations).toBe(1);
  });

  it('follows a file deleted and created again (new inode)', async () => {
    const { file, r } = await tailingTenLines('tail-recreate');
    unlinkSync(file);
    await r.idle();
    writeFileSync(file, logLines(10, 30));
    await r.expectSeqs(range(0, 30));
  });

  it('waits for a file that does not exist yet, says so once, and reads it whole when it appears', async () => {
    const dir = tempDir('tail-later');
    const file = path.join(dir, 'not-yet', 'postgresql.log');
    rig = await startRig(dir, { source: file, startAt: 'end' });
    await waitFor(() => rig!.tailer.stats().waitingForSource, 'the tailer to report waiting', () => rig!.idle());
    mkdirSync(path.dirname(file));
    writeFileSync(file, logLines(0, 6));
    await rig.expectSeqs(range(0, 6));
    expect(rig.tailer.stats().waitingForSource).toBe(false);
  });

  it('flushes a lone last entry only after a second without new lines (manual clock)', async () => {
    const dir = tempDir('tail-idle');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, logLines(0, 1));
    rig = await startRig(dir, { source: file });
    await waitFor(() => rig!.tailer.stats().linesRead === 1, 'the line to be read', async () => rig!.tailer.wake());
    await rig.clock.advance(900);
    rig.tailer.wake();
    await waitFor(() => rig!.tailer.stats().linesRead === 1, 'another tick');
    expect(rig.seqs()).toEqual([]);
    await rig.clock.advance(200);
    await waitFor(() => rig!.seqs().length === 1, 'the idle flush');
    expect(rig.seqs()).toEqual([0]);
  });

  it('flushes a lone last entry a second after its line even when the wall clock jumped back 10 minutes', async () => {
    const dir = tempDir('tail-idle-jump');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, logLines(0, 1));
    rig = await startRig(dir, { source: file });
    await waitFor(() => rig!.tailer.stats().linesRead === 1, 'the line to be read', async () => rig!.tailer.wake());
    rig.clock.jumpWallClock(-600_000);
    await rig.clock.advance(1_100);
    rig.tailer.wake();
    await waitFor(() => rig!.seqs().length === 1, 'the idle flush, not 10 minutes later', undefined, 5_000);
    expect(rig.seqs()).toEqual([0]);
  });

  it('is woken by file-system events (chokidar) without the poll interval', async () => {
    const dir = tempDir('tail-watch');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, '');
    rig = await startRig(dir, { source: file, watch: true, pollIntervalMs: 3_600_000 });
    await waitFor(() => rig!.tailer.stats().currentFile === file, 'the file to be opened');
    // Nothing advances the manual clock: only a watcher event can start a tick. The last entry
    // stays pending (no idle flush), so 0..4 of 0..5 are stored.
    rig.append(file, logLines(0, 5));
    await waitFor(() => rig!.seqs().length === 4, 'events from a watcher wake-up');
    expect(rig.seqs()).toEqual(range(0, 4));
  });
});

describe('tailer: log directory', () => {
  it('moves to the next log_filename file when the server rotates, ignoring other files', async () => {
    const { dir, logDir, file } = logDirectory('tail-dir');
    const first = file(0);
    writeFileSync(path.join(logDir, 'postgresql-2026-10-14_030000.csv'), 'not, for, us\n');
    rig = await startRig(dir, { source: logDir, logFilename: LOG_FILENAME });
    await rig.expectSeqs(range(0, 10));
    rig.append(first, logLines(10, 12)); // the last lines before rotation
    writeFileSync(file(1), logLines(12, 20));
    await rig.expectSeqs(range(0, 20));
    writeFileSync(file(2), logLines(20, 25));
    await rig.expectSeqs(range(0, 25));
    expect(rig.tailer.stats()).toMatchObject({ filesRotated: 2, currentFile: file(2) });
  });

  it('waits for a log directory that does not exist yet', async () => {
    const dir = tempDir('tail-dir-later');
    const logDir = path.join(dir, 'log');
    rig = await startRig(dir, { source: logDir, logFilename: LOG_FILENAME, startAt: 'end' });
    await waitFor(() => rig!.tailer.stats().waitingForSource, 'the tailer to report waiting', () => rig!.idle());
    mkdirSync(logDir);
    writeFileSync(path.join(logDir, 'postgresql-2026-10-14_030000.log'), logLines(0, 5));
    await rig.expectSeqs(range(0, 5));
  });
});

describe('tailer: what is stored', () => {
  it('leaves events out by the storeEvent filter, counts them, and still moves past them', async () => {
    const dir = tempDir('tail-filter');
    const file = path.join(dir, 'postgresql.log');
    const error = logLine(5).replace(' LOG:  statement: SELECT 5', ' ERROR:  relation "t" does not exist at character 15: SELECT 5');
    writeFileSync(file, logLines(0, 5) + error + logLine(6));
    rig = await startRig(dir, { source: file, storeEvent: notableOrProblem });
    await rig.expectSeqs([5]);
    await waitFor(() => rig!.tailer.stats().eventsNotStored === 6, 'entries 0..4 and 6 left out', () => rig!.idle());
    await rig.restart();
    rig.append(file, logLine(7) + error.replace('SELECT 5', 'SELECT 8'));
    await rig.expectSeqs([5, 8]);
  });
});

describe('tailer: back-pressure', () => {
  it('stops reading while the writer refuses more, and reads on when it accepts again', async () => {
    const dir = tempDir('tail-pressure');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, logLines(0, 40_000)); // ~3 MB
    const gate = { open: false, asked: 0 };
    // The real writer behind a gate: `accepting` is what a full backlog looks like to a source.
    rig = await startRig(dir, {
      source: file, chunkBytes: 64 * 1024, backpressureWaitMs: 50,
      wrapWriter: (real) => ({ enqueue: (batch: WriteBatch) => real.enqueue(batch), get accepting() { gate.asked++; return gate.open; } }),
    });
    await waitFor(() => rig!.tailer.stats().bytesRead > 0 && gate.asked > 0, 'the first chunk, then the writer asked');
    // Five back-pressure waits on the test's clock, each ending in the writer asked again and refusing.
    for (let wait = 0; wait < 5; wait++) {
      const asked = gate.asked;
      await rig.clock.advance(50);
      await waitFor(() => gate.asked > asked, `the tailer to ask again after wait ${wait + 1}`);
      expect(rig.tailer.stats().bytesRead).toBe(64 * 1024);
    }
    gate.open = true;
    await rig.expectSeqs(range(0, 40_000));
  });
});
