/**
 * Exactly-once across restarts: a clean stop with an entry half-read, files rotated or deleted
 * while pgvigil was down, and a tailing process SIGKILLed between and inside batches. Every entry
 * must be stored once: none lost, none twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { LOG_FILENAME, logDirectory, logLine, logLines, range, startRig, storedSeqs, tempDir, waitFor, type Rig } from './tailer-rig.js';

let rig: Rig | null = null;
/** Tailer child processes still running; a failed wait must not leave one behind. */
const children = new Set<ChildProcess>();
afterEach(async () => {
  await rig?.close();
  rig = null;
  for (const proc of children) proc.kill('SIGKILL');
  children.clear();
});

/** An entry with tab-led continuation lines: a stop in its middle must not split it. */
function multiLine(seq: number): string {
  return logLine(seq).replace('\n', `\n\tAND ${seq} = ${seq}\n\tAND true\n`);
}

describe('tailer restart (in process)', () => {
  it('does not flush a half-read entry on stop; the next run reads it whole, once', async () => {
    const dir = tempDir('restart-stop');
    const file = path.join(dir, 'postgresql.log');
    const head = multiLine(5).split('\n')[0]! + '\n';
    writeFileSync(file, logLines(0, 5) + head);
    rig = await startRig(dir, { source: file });
    await waitFor(() => rig!.seqs().length === 5, 'entries 0..4', async () => rig!.tailer.wake());
    await rig.restart(); // entry 5 is pending: its first byte is the saved offset
    appendFileSync(file, multiLine(5).slice(head.length) + logLines(6, 9));
    await rig.expectSeqs(range(0, 9));
    const entry5 = rig.db.prepare('SELECT source_offset FROM events WHERE message LIKE ?').pluck().all('%SELECT 5%') as number[];
    expect(entry5).toEqual([Buffer.byteLength(logLines(0, 5))]);
  });

  it('after a restart, finishes the saved file and then reads files written while down', async () => {
    const { dir, logDir, file } = logDirectory('restart-rotated');
    const first = file(0);
    rig = await startRig(dir, { source: logDir, logFilename: LOG_FILENAME });
    await rig.expectSeqs(range(0, 10));
    await rig.tailer.stop();
    appendFileSync(first, logLines(10, 15));
    utimesSync(first, 1000, 1000);
    writeFileSync(file(1), logLines(15, 20));
    writeFileSync(file(2), logLines(20, 25));
    await rig.restart();
    await rig.expectSeqs(range(0, 25));
    expect(rig.tailer.stats().filesLost).toBe(0);
  });

  it('when the saved file was deleted while down, reports the loss and reads the newer files', async () => {
    const { dir, logDir, file } = logDirectory('restart-gone');
    const first = file(0);
    rig = await startRig(dir, { source: logDir, logFilename: LOG_FILENAME });
    await rig.expectSeqs(range(0, 10));
    await rig.tailer.stop();
    unlinkSync(first);
    writeFileSync(file(1), logLines(20, 25));
    await rig.restart();
    await rig.expectSeqs([...range(0, 10), ...range(20, 25)]);
    expect(rig.tailer.stats().filesLost).toBe(1);
  });
});

describe('tailer restart (SIGKILL)', () => {
  const child = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tailer-crash-child.ts');

  function spawnTailer(store: string, source: string): Promise<ChildProcess> {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, store, source], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    return new Promise((resolve, reject) => {
      proc.stdout!.once('data', () => resolve(proc));
      proc.once('exit', (code) => reject(new Error(`tailer child exited ${code}: ${err}`)));
    });
  }

  function stored(store: string): number[] {
    if (!existsSync(store)) return [];
    const db = openStore(store, { readonly: true });
    try {
      return storedSeqs(db);
    } catch {
      return []; // the schema is not there yet
    } finally {
      db.close();
    }
  }

  const exited = (proc: ChildProcess): Promise<unknown> => new Promise((resolve) => proc.exitCode !== null || proc.signalCode !== null ? resolve(null) : proc.once('exit', resolve));

  it('stores every entry exactly once across kills while the log grows', async () => {
    const dir = tempDir('restart-kill');
    const store = path.join(dir, 'store.db');
    const file = path.join(dir, 'postgresql.log');
    let next = 0;
    const append = (n: number): void => {
      let text = '';
      for (const end = next + n; next < end; next++) text += next % 7 === 0 ? multiLine(next) : logLine(next);
      appendFileSync(file, text);
    };
    append(500);
    const kills = 4;
    for (let round = 0; round < kills; round++) {
      const proc = await spawnTailer(store, file);
      const before = stored(store).length;
      // Keep the log growing while the child works, then kill it without warning mid-stream.
      await waitFor(() => {
        append(40);
        return stored(store).length > before + 200;
      }, `progress in round ${round}`, undefined, 30_000);
      append(40);
      proc.kill('SIGKILL');
      await exited(proc);
    }
    append(100);
    const total = next;
    const proc = await spawnTailer(store, file);
    await waitFor(() => stored(store).length >= total, `all ${total} entries`, undefined, 30_000);
    proc.kill('SIGTERM');
    await exited(proc);
    const seqs = stored(store);
    const duplicates = seqs.filter((seq, i) => seqs.indexOf(seq) !== i);
    expect(duplicates).toEqual([]);
    expect([...seqs].sort((a, b) => a - b)).toEqual(range(0, total));
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);
});
