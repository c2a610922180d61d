/**
 * The parsing pipeline of one log file: framing (lines -> LogEntry) then classification
 * (LogEntry -> LogEvent). The tailer and the offline reader feed it lines; it does no I/O and
 * never throws on data. Its stats are the framer's plus the events counted by kind.
 */
import { systemClock, type Clock } from '../domain/clock.js';
import type { LogEntry } from '../domain/log-entry.js';
import { EVENT_KINDS, type AnyLogEvent, type EventKind } from '../domain/log-event.js';
import { classifyEntry } from './classify/index.js';
import { createEnvelopeFramer } from './formats/envelope-framers.js';
import type { Envelope } from './formats/input-format.js';
import { CsvlogFramer } from './frame-csvlog.js';
import { JsonlogFramer } from './frame-jsonlog.js';
import { StderrFramer } from './frame-stderr.js';
import type { Framer, FramingStats, LogFormat, PhysicalLine } from './framer.js';

/** log_line_prefix used when a stderr log comes without one: PostgreSQL's default since 10. */
export const DEFAULT_PREFIX = '%m [%p] ';

export interface LogPipelineOptions {
  /** Target name stamped on every event. */
  target: string;
  format: LogFormat;
  /** log_line_prefix (stderr only); DEFAULT_PREFIX when absent. */
  prefix?: string;
  /**
   * The server's log_timezone (IANA name). Needed for zone abbreviations that are ambiguous (CST,
   * IST) or unknown, and for syslog headers without a zone; printed numeric offsets and
   * unambiguous abbreviations (UTC, CET, EST) never need it.
   */
  timezone?: string;
  /** Path recorded in each event's source position. */
  file: string;
  /** stderr lines carry a syslog header (log_destination = 'syslog' written to a file). */
  syslog?: boolean;
  /** The lines come inside an envelope (formats/input-format.ts) around `format`. */
  envelope?: Envelope;
  /** Lines after which an unfinished stderr entry is given up on (see StderrFramer). */
  interleaveWindowLines?: number;
  /** Time of entries whose prefix has none (and the year of RFC 3164 syslog headers). */
  clock?: Clock;
}

export interface PipelineStats extends FramingStats {
  events: number;
  events_by_kind: Record<EventKind, number>;
}

/** What push() returns for a line that completes no entry (most lines): shared, so frozen. */
const NO_EVENTS = Object.freeze([]) as unknown as AnyLogEvent[];

export interface LogPipeline {
  /** The events the line completed; an empty result is shared and must not be modified. */
  push(line: PhysicalLine): AnyLogEvent[];
  flush(): AnyLogEvent[];
  safeOffset(): number | null;
  readonly stats: PipelineStats;
}

/** Throws (configuration error) on an unknown format or time zone; never on log data. */
export function createFramer(o: LogPipelineOptions): Framer {
  if (o.envelope !== undefined) {
    const inner = { ...o, envelope: undefined };
    return createEnvelopeFramer(o.envelope, () => createFramer(inner), { prefix: o.prefix ?? DEFAULT_PREFIX, syslog: o.syslog === true });
  }
  const timezone = o.timezone ?? null;
  switch (o.format) {
    case 'stderr':
      return new StderrFramer({
        file: o.file, prefix: o.prefix ?? DEFAULT_PREFIX, timezone, syslog: o.syslog,
        interleaveWindowLines: o.interleaveWindowLines, nowMs: () => (o.clock ?? systemClock).nowMs(),
      });
    case 'csvlog':
      return new CsvlogFramer({ file: o.file, timezone });
    case 'jsonlog':
      return new JsonlogFramer({ file: o.file, timezone });
    default: {
      const format: never = o.format;
      throw new Error(`unknown log format "${String(format)}": use stderr, csvlog or jsonlog`);
    }
  }
}

export function createLogPipeline(o: LogPipelineOptions): LogPipeline {
  const framer = createFramer(o);
  const clock = o.clock ?? systemClock;
  const byKind = Object.fromEntries(EVENT_KINDS.map((kind) => [kind, 0])) as Record<EventKind, number>;
  // Most events of a busy log are generic: a counter of their own spares a keyed store per event.
  let generic = 0;
  let events = 0;

  const classify = (entries: LogEntry[]): AnyLogEvent[] => {
    if (entries.length === 0) return NO_EVENTS;
    const out = new Array<AnyLogEvent>(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as LogEntry;
      const event = classifyEntry(entry, o.target, entry.tsMs === null ? clock.nowMs() : undefined);
      if (event.kind === 'generic') generic++;
      else byKind[event.kind]++;
      out[i] = event;
    }
    events += entries.length;
    return out;
  };

  return {
    push: (line) => classify(framer.push(line)),
    flush: () => classify(framer.flush()),
    safeOffset: () => framer.safeOffset(),
    get stats(): PipelineStats {
      return { ...framer.stats, events, events_by_kind: { ...byKind, generic } };
    },
  };
}
