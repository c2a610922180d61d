/**
 * The progress line `pgvigil analyze` keeps on a terminal's stderr while it reads a large log:
 * how much is read, of how much, and about how long is left. Written at most every
 * PROGRESS_INTERVAL_MS and only after the first second (a small log finishes before it would
 * show), rewritten in place, and erased before anything else is printed.
 *
 * Owns: what the line says and when it is written. Never: where the bytes come from.
 */
import type { Writable } from 'node:stream';
import type { Clock } from '../domain/clock.js';

export const PROGRESS_INTERVAL_MS = 250;
const SHOW_AFTER_MS = 1_000;
const MB = 1024 * 1024;
const ERASE_LINE = '\r\u001b[K';

/**
 * The line for `doneBytes` read after `elapsedMs`; `totalBytes` null when the input's size is not
 * known beforehand (compressed files, stdin).
 */
export function progressLine(doneBytes: number, totalBytes: number | null, elapsedMs: number): string {
  const read = `${(doneBytes / MB).toFixed(0)} MB`;
  if (totalBytes === null || totalBytes <= 0) return `pgvigil analyze: ${read} read, ${duration(elapsedMs)}`;
  const share = Math.min(1, doneBytes / totalBytes);
  const leftMs = share > 0 ? elapsedMs / share - elapsedMs : null;
  const left = leftMs === null ? '' : leftMs < 1_000 ? ', almost done' : `, about ${duration(leftMs)} left`;
  return `pgvigil analyze: ${read} of ${(totalBytes / MB).toFixed(0)} MB (${Math.floor(share * 100)}%), ${duration(elapsedMs)}${left}`;
}

/** Seconds up to 90, then minutes. */
function duration(ms: number): string {
  return ms < 90_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
}

export class AnalyzeProgress {
  private readonly startedMs: number;
  private nextMs: number;
  private shown = false;

  constructor(private readonly stream: Writable, private readonly totalBytes: number | null, private readonly clock: Clock) {
    this.startedMs = clock.nowMs();
    this.nextMs = this.startedMs + SHOW_AFTER_MS;
  }

  /** The input read so far: rewrites the line when it is due. */
  update(doneBytes: number): void {
    const nowMs = this.clock.nowMs();
    if (nowMs < this.nextMs) return;
    this.nextMs = nowMs + PROGRESS_INTERVAL_MS;
    this.stream.write(`${ERASE_LINE}${progressLine(doneBytes, this.totalBytes, nowMs - this.startedMs)}`);
    this.shown = true;
  }

  /** Erases the line, if it was written. */
  end(): void {
    if (this.shown) this.stream.write(ERASE_LINE);
    this.shown = false;
  }
}
