/**
 * Parses one byte range of a log, as a worker of `pgvigil analyze -j N` does, so that the ranges'
 * results put together are exactly what one pipeline over the whole file returns.
 *
 * A range starts at a line that begins an entry (split-points.ts) with a fresh pipeline, and ends
 * at the next range's start, its boundary. An entry that began before the boundary may still be
 * open there (a stderr entry waits for its process's next line, or for DETAIL lines of its own):
 * the pipeline then reads on past the boundary ("overrun") until no entry from before it is
 * pending, keeping the events of those entries only. Beside it, a fresh pipeline reads the same
 * lines, as the next range's worker does. If both count every line alike (unparsed, truncated),
 * no line past the boundary went to an entry from before it, both pipelines hold the same open
 * entries once the old ones are gone, and the next range's result is exact: the boundary holds.
 * Otherwise (a process's lines interleaved across the boundary, a csv record truncated at it) the
 * next range's result is wrong, and this range goes on to the next boundary with the events it
 * held back, as if the boundary had not been there.
 *
 * Owns: that decision and the counts of the lines before the boundary. Never: I/O (the worker
 * reads), or line numbers from the start of the file (the merge adds the lines of earlier ranges).
 */
import type { AnyLogEvent } from '../domain/index.js';
import type { PhysicalLine } from '../parsers/framer.js';
import type { LogPipeline, PipelineStats } from '../parsers/log-pipeline.js';

export interface RangeResult {
  /** Index in `ends` of the boundary the range stopped at (the last one when it read to EOF). */
  endIndex: number;
  /** Counts of the range's lines and entries, the entries finished in the overrun included. */
  stats: PipelineStats;
  /** Lines cut at the line reader's size limit, of the range's lines. */
  overLongLines: number;
}

/** What a line may do to the counts that must agree between the two pipelines of an overrun. */
function lineCounts(pipeline: LogPipeline): number[] {
  const s = pipeline.stats;
  return [s.unparsed_lines, s.truncated_fields];
}

function sameChange(before: number[], after: number[], otherBefore: number[], otherAfter: number[]): boolean {
  return before.every((value, i) => after[i]! - value === otherAfter[i]! - otherBefore[i]!);
}

interface Overrun {
  fresh: LogPipeline;
  /** The continuing pipeline's counts before the boundary line. */
  stats: PipelineStats;
  overLongLines: number;
  /** Events of entries that began at or past the boundary: the next range's, unless it fails. */
  held: AnyLogEvent[];
  /** Events of entries from before the boundary finished in the overrun. */
  finished: AnyLogEvent[];
}

export class RangeParser {
  private endIndex = 0;
  private overrun: Overrun | null = null;
  private done: RangeResult | null = null;

  /**
   * @param createPipeline a new pipeline for the file (same options each call)
   * @param ends byte offsets of the boundaries after the range's start, ascending; reading stops at
   *   the first that holds
   */
  constructor(private readonly createPipeline: () => LogPipeline, private readonly ends: readonly number[], private readonly pipeline = createPipeline()) {}

  /** Set once the range is complete: stop reading. */
  get result(): RangeResult | null {
    return this.done;
  }

  /**
   * Feeds one line; returns the events of the range that it finished.
   * @param overLongBefore lines cut by the line reader before this one
   */
  push(line: PhysicalLine, overLongBefore: number): AnyLogEvent[] {
    if (this.done) throw new Error('RangeParser: the range is complete');
    if (this.overrun) return this.pushOverrun(this.overrun, line);
    const end = this.ends[this.endIndex] ?? Infinity;
    if (line.offset < end) return this.pipeline.push(line);
    if (this.pipeline.safeOffset() === null) {
      this.done = { endIndex: this.endIndex, stats: this.statsNow(), overLongLines: overLongBefore };
      return [];
    }
    this.overrun = { fresh: this.createPipeline(), stats: this.statsNow(), overLongLines: overLongBefore, held: [], finished: [] };
    return this.pushOverrun(this.overrun, line);
  }

  /** End of input. */
  finish(overLongLines: number): AnyLogEvent[] {
    if (this.done) return [];
    const overrun = this.overrun;
    if (!overrun) {
      const events = this.pipeline.flush();
      this.done = { endIndex: this.ends.length - 1, stats: this.statsNow(), overLongLines };
      return events;
    }
    return this.step(overrun, () => this.pipeline.flush(), () => overrun.fresh.flush(), null, overLongLines);
  }

  /** A copy: the pipeline's stats share their maps and example list with the live counters. */
  private statsNow(): PipelineStats {
    return structuredClone(this.pipeline.stats);
  }

  private pushOverrun(overrun: Overrun, line: PhysicalLine): AnyLogEvent[] {
    return this.step(overrun, () => this.pipeline.push(line), () => overrun.fresh.push(line), line.offset, null);
  }

  /**
   * One line (or the final flush) through both pipelines of an overrun.
   * @param offset the line's offset; null at end of input
   */
  private step(overrun: Overrun, own: () => AnyLogEvent[], fresh: () => AnyLogEvent[], offset: number | null, overLongAtEnd: number | null): AnyLogEvent[] {
    const end = this.ends[this.endIndex]!;
    const [ownBefore, freshBefore] = [lineCounts(this.pipeline), lineCounts(overrun.fresh)];
    const events = own();
    fresh();
    const out: AnyLogEvent[] = [];
    for (const event of events) (event.source.offset < end ? out : overrun.held).push(event);
    for (const event of out) overrun.finished.push(event);
    if (!sameChange(ownBefore, lineCounts(this.pipeline), freshBefore, lineCounts(overrun.fresh))) {
      return [...out, ...this.giveUpBoundary(overrun, offset, overLongAtEnd)];
    }
    const pending = this.pipeline.safeOffset();
    if (offset === null || pending === null || pending >= end) {
      this.done = { endIndex: this.endIndex, stats: withFinished(overrun.stats, overrun.finished), overLongLines: overrun.overLongLines };
    }
    return out;
  }

  /** The boundary does not hold: the range goes on past it (and past any other already read). */
  private giveUpBoundary(overrun: Overrun, offset: number | null, overLongAtEnd: number | null): AnyLogEvent[] {
    this.overrun = null;
    if (offset === null) {
      this.done = { endIndex: this.ends.length - 1, stats: this.statsNow(), overLongLines: overLongAtEnd ?? 0 };
    } else {
      while (this.endIndex < this.ends.length - 1 && this.ends[this.endIndex]! <= offset) this.endIndex++;
    }
    return overrun.held;
  }
}

/** `stats` with the entries of `events` counted in. */
function withFinished(stats: PipelineStats, events: readonly AnyLogEvent[]): PipelineStats {
  const out = stats;
  out.entries += events.length;
  out.events += events.length;
  for (const event of events) out.events_by_kind[event.kind]++;
  return out;
}
