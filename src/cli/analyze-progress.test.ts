import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { AnalyzeProgress, PROGRESS_INTERVAL_MS, progressLine } from './analyze-progress.js';
import { analyzeCaptured } from '../../test/helpers/analyze-io.js';

const MB = 1024 * 1024;
const ERASE = '\r\u001b[K';
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/pg18-stderr-analyze-mixed/postgresql.log');

function captured(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const parts: Buffer[] = [];
  stream.on('data', (d: Buffer) => parts.push(d));
  return { stream, text: () => Buffer.concat(parts).toString() };
}

/** A clock that moves a second each time it is read: every update is due. */
class SteppingClock extends ManualClock {
  override nowMs(): number {
    const now = super.nowMs();
    this.jumpWallClock(1_000);
    return now;
  }
}

describe('the progress line of pgvigil analyze', () => {
  it('says how much is read, of how much, and about how long is left', () => {
    expect(progressLine(256 * MB, 1024 * MB, 10_000)).toBe('pgvigil analyze: 256 MB of 1024 MB (25%), 10 s, about 30 s left');
    expect(progressLine(0, 1024 * MB, 1_000)).toBe('pgvigil analyze: 0 MB of 1024 MB (0%), 1 s');
    expect(progressLine(2048 * MB, null, 4_400)).toBe('pgvigil analyze: 2048 MB read, 4 s');
    expect(progressLine(1000 * MB, 1024 * MB, 10_000)).toBe('pgvigil analyze: 1000 MB of 1024 MB (97%), 10 s, almost done');
    expect(progressLine(100 * MB, 10240 * MB, 120_000)).toBe('pgvigil analyze: 100 MB of 10240 MB (0%), 2 min, about 203 min left');
  });

  it('shows nothing in the first second, then at most every interval, rewritten in place, and is erased at the end', () => {
    const clock = new ManualClock(0);
    const out = captured();
    const progress = new AnalyzeProgress(out.stream, 100 * MB, clock);
    progress.update(10 * MB);
    clock.jumpWallClock(999);
    progress.update(20 * MB);
    expect(out.text()).toBe('');
    clock.jumpWallClock(1);
    progress.update(30 * MB);
    clock.jumpWallClock(PROGRESS_INTERVAL_MS - 1);
    progress.update(40 * MB);
    clock.jumpWallClock(1);
    progress.update(50 * MB);
    progress.end();
    expect(out.text()).toBe(`${ERASE}pgvigil analyze: 30 MB of 100 MB (30%), 1 s, about 2 s left${ERASE}pgvigil analyze: 50 MB of 100 MB (50%), 1 s, about 1 s left${ERASE}`);
  });

  it('is erased before the summary and any note, in a run that asks for it', async () => {
    // --json: a file's error is then a note on stderr (the text summary carries it itself).
    const { code, stdout, stderr: text } = await analyzeCaptured([FIXTURE, '/nonexistent/postgresql.log'], { progress: true, json: true }, new SteppingClock(0));
    expect(code).toBe(1);
    // The inputs' size is unknown (one cannot be read): bytes read, no share.
    expect(text).toMatch(/^\r\u001b\[Kpgvigil analyze: 0 MB read, \d+ s/);
    // Every note starts on an erased line.
    expect(text).toContain(`${ERASE}pgvigil analyze: /nonexistent/postgresql.log: ENOENT`);
    expect(text.endsWith(ERASE) || text.endsWith('\n')).toBe(true);
    expect(JSON.parse(stdout)).toMatchObject({ lines: 1352, files: [{ lines: 1352 }, { lines: 0, error: expect.stringMatching(/^ENOENT/) }] });
  });

  it('is not written unless asked for', async () => {
    const { code, stderr } = await analyzeCaptured([FIXTURE], {}, new SteppingClock(0));
    expect(code).toBe(0);
    expect(stderr).toBe('');
  });
});
