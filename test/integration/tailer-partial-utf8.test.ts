/**
 * A log that ends, for a moment, inside a line or inside a UTF-8 character: a slow writer has put
 * the first byte of `ä` or of `日` in the file and not yet the rest. The tailer holds the unfinished
 * line (the idle flush finishes entries, never lines), emits it whole once its newline arrives, and
 * a restart in between resumes at the line's start: no U+FFFD, no entry split, none twice.
 * Real files written in pieces, through the tailer and the store writer the daemon uses.
 */
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSavedOffset } from '../../src/sources/log-tailer.js';
import { logLine, logLines, range, startRig, tempDir, type Rig } from './tailer-rig.js';

let rig: Rig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

/** An entry whose statement holds German and Japanese text: `ä` is 2 bytes, `日` and `本` 3. */
function unicodeLine(seq: number): Buffer {
  return Buffer.from(logLine(seq).replace(`SELECT ${seq}`, `SELECT ${seq}, 'Größe ä 日本'`));
}

/** The byte offsets inside the multi-byte characters of `line` (a cut there splits one). */
function insideCharacters(line: Buffer): number[] {
  const inside: number[] = [];
  for (let i = 1; i < line.length; i++) if ((line[i]! & 0xc0) === 0x80) inside.push(i);
  return inside;
}

function messages(r: Rig): string[] {
  r.writer.flush();
  return r.db.prepare('SELECT message FROM events ORDER BY id').pluck().all() as string[];
}

const messageOf = (line: Buffer): string => line.toString('utf8').replace(/^.* LOG: {2}/, '').trimEnd();

/** Lets the clock run past the idle flush a few times (what is asserted then is what did not happen). */
async function idle(r: Rig): Promise<void> {
  for (let i = 0; i < 3; i++) await r.idle();
}

describe('tailer: a file ending inside a line or a character', () => {
  it('holds a line cut inside `ä` through idle flushes, and stores it whole when the rest arrives', async () => {
    const dir = tempDir('tail-utf8-partial');
    const file = path.join(dir, 'postgresql.log');
    const line = unicodeLine(1);
    const cut = line.indexOf(Buffer.from('ä')) + 1;
    writeFileSync(file, Buffer.concat([Buffer.from(logLine(0)), line.subarray(0, cut)]));
    rig = await startRig(dir, { source: file });
    await rig.expectSeqs([0]);
    await idle(rig);
    expect(messages(rig)).toEqual(['statement: SELECT 0']);
    appendBytes(file, Buffer.concat([line.subarray(cut), Buffer.from(logLine(2))]));
    await rig.expectSeqs(range(0, 3));
    expect(messages(rig)).toEqual(['statement: SELECT 0', messageOf(line), 'statement: SELECT 2']);
  });

  it('restarted while the file ends inside a character, at every byte of `ä`, `日` and `本`: each entry once and whole', async () => {
    const dir = tempDir('tail-utf8-restart');
    const file = path.join(dir, 'postgresql.log');
    writeFileSync(file, logLines(0, 1));
    rig = await startRig(dir, { source: file });
    await rig.expectSeqs([0]);
    const r = rig;
    const written: Buffer[] = [Buffer.from(logLine(0))];
    const sample = unicodeLine(1);
    const cuts = insideCharacters(sample);
    expect(cuts.length).toBe(1 + 1 + 1 + 2 + 2); // ö, ß, ä: one byte each after the first; 日, 本: two
    let seq = 1;
    for (const cut of cuts) {
      const line = unicodeLine(seq++);
      const lineStart = written.reduce((sum, b) => sum + b.length, 0);
      appendBytes(file, line.subarray(0, cut));
      await r.expectSeqs(range(0, seq - 1), `entries before ${seq - 1}, the one cut at its byte ${cut} held`);
      await idle(r);
      await r.restart(undefined, () => {
        expect(readSavedOffset(r.db, 'db1', file)?.offset, `saved position with entry ${seq - 1} cut at its byte ${cut}`).toBe(lineStart);
      });
      appendBytes(file, line.subarray(cut));
      written.push(line);
    }
    appendBytes(file, Buffer.from(logLine(seq)));
    await r.expectSeqs(range(0, seq + 1));
    const stored = messages(r);
    expect(stored.slice(1, -1)).toEqual(written.slice(1).map(messageOf));
    expect(stored.join('\n')).not.toContain('\uFFFD');
  });

  it('reads a partial last line of a rotated file as its last entry (the file is final), then the new file', async () => {
    const dir = tempDir('tail-partial-rotated');
    const file = path.join(dir, 'postgresql.log');
    const last = unicodeLine(10);
    writeFileSync(file, Buffer.concat([Buffer.from(logLines(0, 10)), last.subarray(0, last.length - 1)]));
    rig = await startRig(dir, { source: file });
    await rig.expectSeqs(range(0, 10));
    renameSync(file, `${file}.1`);
    writeFileSync(file, logLines(11, 15));
    await rig.expectSeqs(range(0, 15));
    expect(messages(rig)[10]).toBe(messageOf(last));
  });
});

function appendBytes(file: string, bytes: Buffer): void {
  writeFileSync(file, bytes, { flag: 'a' });
}
