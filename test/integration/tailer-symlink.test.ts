/**
 * The configured log file is a symlink (`postgresql.log -> postgresql-2026-12-01_1200.log`,
 * re-pointed at each rotation by a script or a container's entrypoint), or a plain file replaced
 * by one. The tailer reads the link's target, takes a re-point as a rotation (the old target is
 * finished, the new one read from its start), and saves its position under the target's path,
 * so a restart after a re-point finishes the old target instead of skipping what was left in it.
 */
import { renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { readSavedOffset } from '../../src/sources/log-tailer.js';
import { logLines, range, startRig, tempDir, waitFor, type Rig } from './tailer-rig.js';

let rig: Rig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

/** Points `link` at `target` in one step (a new link renamed over the old), as `ln -sfn` is not. */
function pointLink(link: string, target: string): void {
  const fresh = `${link}.new`;
  symlinkSync(path.basename(target), fresh);
  renameSync(fresh, link);
}

interface LinkedLog {
  dir: string;
  link: string;
  target: (n: number) => string;
}

/** `postgresql.log` linked to the first of a series of timestamped files, which holds entries 0..9. */
function linkedLog(name: string): LinkedLog {
  const dir = tempDir(name);
  const target = (n: number): string => path.join(dir, `postgresql-2026-12-01_12${String(n).padStart(2, '0')}.log`);
  const link = path.join(dir, 'postgresql.log');
  writeFileSync(target(0), logLines(0, 10));
  pointLink(link, target(0));
  return { dir, link, target };
}

function storedFiles(r: Rig): string[] {
  return r.db.prepare('SELECT DISTINCT source_file FROM events ORDER BY id').pluck().all() as string[];
}

describe('tailer: a log file that is a symlink', () => {
  it('reads the target, and takes a re-point as a rotation: the old target finished, the new one from its start', async () => {
    const { dir, link, target } = linkedLog('tail-link-repoint');
    rig = await startRig(dir, { source: link });
    await rig.expectSeqs(range(0, 10));
    rig.append(target(0), logLines(10, 12));
    writeFileSync(target(1), logLines(12, 20));
    pointLink(link, target(1));
    await rig.expectSeqs(range(0, 20));
    expect(rig.tailer.stats()).toMatchObject({ filesRotated: 1, currentFile: target(1) });
    // Offsets are offsets in the target: the events name it, not the link.
    expect(storedFiles(rig)).toEqual([target(0), target(1)]);
  });

  it('after a restart resumes in the same target, reading nothing twice', async () => {
    const { dir, link, target } = linkedLog('tail-link-restart');
    rig = await startRig(dir, { source: link });
    await rig.expectSeqs(range(0, 10));
    await rig.restart(undefined, () => rig!.append(target(0), logLines(10, 15)));
    await rig.expectSeqs(range(0, 15));
  });

  it('re-pointed while pgvigil was down: the rest of the old target is read, then the new one', async () => {
    const { dir, link, target } = linkedLog('tail-link-down');
    rig = await startRig(dir, { source: link });
    await rig.expectSeqs(range(0, 10));
    await rig.restart(undefined, () => {
      rig!.append(target(0), logLines(10, 13));
      writeFileSync(target(1), logLines(13, 20));
      pointLink(link, target(1));
    });
    await rig.expectSeqs(range(0, 20));
    expect(rig.tailer.stats().filesLost).toBe(0);
    expect(readSavedOffset(rig.db, 'db1', link)).toMatchObject({ filePath: target(1) });
  });

  it('re-pointed three times while pgvigil was down: the old target, the two it named in between, then the new one', async () => {
    const { dir, link, target } = linkedLog('tail-link-down-thrice');
    rig = await startRig(dir, { source: link });
    await rig.expectSeqs(range(0, 10));
    await rig.restart(undefined, () => {
      rig!.append(target(0), logLines(10, 12));
      for (const [n, from, to] of [[1, 12, 15], [2, 15, 19], [3, 19, 22]] as const) {
        writeFileSync(target(n), logLines(from, to));
        pointLink(link, target(n));
        // Written in between too, but neither a file of another format nor another server's log is taken.
        if (n === 1) {
          writeFileSync(path.join(dir, 'postgresql-2026-12-01_1201.csv'), 'not,a,stderr,log\n');
          writeFileSync(path.join(dir, 'other-server.log'), logLines(900, 905));
        }
      }
    });
    await rig.expectSeqs(range(0, 22));
    expect(storedFiles(rig)).toEqual([target(0), target(1), target(2), target(3)]);
    expect(rig.tailer.stats()).toMatchObject({ filesLost: 0, filesRotated: 3 });
  });

  it('a position saved under the link path (before targets were resolved) resumes in the target it names', async () => {
    const { dir, link, target } = linkedLog('tail-link-old-row');
    rig = await startRig(dir, { source: link });
    await rig.expectSeqs(range(0, 10));
    await rig.restart(undefined, () => {
      rig!.db.prepare('UPDATE tailer_offsets SET file_path = ?').run(link);
      rig!.append(target(0), logLines(10, 12));
    });
    await rig.expectSeqs(range(0, 12));
  });

  it('follows a plain log file replaced by a symlink to another file', async () => {
    const dir = tempDir('tail-file-to-link');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, logLines(0, 10));
    rig = await startRig(dir, { source: file });
    await rig.expectSeqs(range(0, 10));
    rig.append(file, logLines(10, 12));
    const other = path.join(dir, 'postgresql-2026-12-01_1300.log');
    writeFileSync(other, logLines(12, 16));
    pointLink(file, other);
    await rig.expectSeqs(range(0, 16));
    rig.append(other, logLines(16, 18));
    await rig.expectSeqs(range(0, 18));
    expect(storedFiles(rig)).toEqual([file, other]);
  });

  it('loses nothing written to the old target just before the re-point, whenever the tailer looks (50 rotations)', async () => {
    const { dir, link, target } = linkedLog('tail-link-race');
    rig = await startRig(dir, { source: link });
    await rig.expectSeqs(range(0, 10));
    const r = rig;
    let seq = 10;
    // The writer and the tailer share the event loop: each write lands between two of the
    // tailer's awaits, somewhere in its read-stat-switch sequence.
    for (let n = 1; n <= 50; n++) {
      for (let i = 0; i < 3; i++) {
        r.append(target(n - 1), logLines(seq, seq + 1));
        seq++;
        r.tailer.wake();
        for (let turn = 0; turn <= (n + i) % 5; turn++) await nextTurn();
      }
      // The last line of the old target and the re-point in one step, as a rotating writer does.
      r.append(target(n - 1), logLines(seq, seq + 1));
      writeFileSync(target(n), logLines(seq + 1, seq + 2));
      seq += 2;
      pointLink(link, target(n));
      r.tailer.wake();
      // A rotation an hour later: the tailer is on the new target before the next one.
      await waitFor(() => r.tailer.stats().filesRotated === n, `rotation ${n} seen`, async () => r.tailer.wake());
    }
    await r.expectSeqs(range(0, seq));
  });
});
