/**
 * A framer for logs that arrive inside an envelope: each physical line is opened into the
 * PostgreSQL lines it carries (none, one, or several), which the inner framer reads as if they
 * were the file. The inner lines keep the physical line's offset and number, so an event still
 * points at the line of the file that holds it.
 *
 * A physical line that carries no PostgreSQL text (another program's line in the same stream: the
 * CloudNativePG instance manager, a Cloud Logging entry of another service) is skipped and counted
 * as `not_postgres`.
 */
import type { LogEntry } from '../../domain/log-entry.js';
import type { Framer, FramingStats, PhysicalLine } from '../framer.js';
import { newFramingStats, recordUnparsed } from '../framing-stats.js';

/** The PostgreSQL lines one physical line carries; null when it carries none of PostgreSQL's. */
export type OpenEnvelope = (text: string) => readonly string[] | null;

export class EnvelopeFramer implements Framer {
  /** Physical lines, and those skipped as not PostgreSQL's. */
  private readonly own = newFramingStats();

  constructor(private readonly inner: Framer, private readonly open: OpenEnvelope) {}

  push(line: PhysicalLine): LogEntry[] {
    this.own.lines++;
    const texts = this.open(line.text);
    if (texts === null) {
      recordUnparsed(this.own, 'not_postgres', line, line.text);
      return [];
    }
    if (texts.length === 1) return this.inner.push({ text: texts[0]!, offset: line.offset, line: line.line });
    const out: LogEntry[] = [];
    for (const text of texts) out.push(...this.inner.push({ text, offset: line.offset, line: line.line }));
    return out;
  }

  flush(): LogEntry[] {
    return this.inner.flush();
  }

  safeOffset(): number | null {
    return this.inner.safeOffset();
  }

  /** The inner framer's counts, with lines counted as the file's and the skipped ones added. */
  get stats(): FramingStats {
    return mergeStats(this.own, this.inner.stats);
  }
}

function mergeStats(own: FramingStats, inner: FramingStats): FramingStats {
  const byReason = { ...inner.unparsed_by_reason };
  for (const [reason, count] of Object.entries(own.unparsed_by_reason)) byReason[reason as keyof typeof byReason] = count;
  return {
    lines: own.lines,
    entries: inner.entries,
    unparsed_lines: own.unparsed_lines + inner.unparsed_lines,
    unparsed_by_reason: byReason,
    examples: [...own.examples, ...inner.examples],
    truncated_fields: inner.truncated_fields,
  };
}
