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
import { firstLine } from './classify/usage-lines.js';
import { CsvlogFramer } from './frame-csvlog.js';
import { JsonlogFramer } from './frame-jsonlog.js';
import { StderrFramer } from './frame-stderr.js';
import type { Framer, FramingStats, LogFormat, PhysicalLine } from './framer.js';
import type { Translator } from './lang/translator.js';

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
  /** The log's language when it is not English: its words and messages are read back into English. */
  translator?: Translator | null;
}

export interface PipelineStats extends FramingStats {
  events: number;
  /** Entries of a translated log whose message or fields were read back into English. */
  translated_entries: number;
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
  const severityWords = o.translator?.severityWords;
  switch (o.format) {
    case 'stderr':
      return new StderrFramer({
        file: o.file, prefix: o.prefix ?? DEFAULT_PREFIX, timezone, syslog: o.syslog,
        interleaveWindowLines: o.interleaveWindowLines, nowMs: () => (o.clock ?? systemClock).nowMs(),
        lineWords: o.translator?.lineWords,
      });
    case 'csvlog':
      return new CsvlogFramer({ file: o.file, timezone, severityWords });
    case 'jsonlog':
      return new JsonlogFramer({ file: o.file, timezone, severityWords });
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
  let translated = 0;
  const translator = o.translator ?? null;

  const classify = (entries: LogEntry[]): AnyLogEvent[] => {
    if (entries.length === 0) return NO_EVENTS;
    const out = new Array<AnyLogEvent>(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as LogEntry;
      const english = translator === null ? entry : translator.translateEntry(entry);
      const event = classifyEntry(english, o.target, entry.tsMs === null ? clock.nowMs() : undefined);
      if (translator !== null) {
        event.language = translator.language;
        if (english !== entry) {
          translated++;
          event.message = originalMessage(event.message, english.message, entry.message);
        }
      }
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
      return { ...framer.stats, events, translated_entries: translated, events_by_kind: { ...byKind, generic } };
    },
  };
}

/**
 * The server's own text for an event read in English: the whole message, or its first line when
 * the classifier kept only that (a report's header), or the message as classified (cut by the
 * classifier in another way: a cursor position) when it was not translated.
 */
function originalMessage(classified: string, english: string, original: string): string {
  if (classified === english) return original;
  if (classified === firstLine(english)) return firstLine(original);
  return english === original ? classified : original;
}
