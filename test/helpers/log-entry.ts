/**
 * LogEntry builders for classifier tests. `logEntry` fills the fields a test does not care
 * about; `stderrEntries` turns stderr text written with `log_line_prefix = '%m [%p] %q%u@%d '`
 * (the prefix of the examples in pg-messages.md) into entries the way the framing contract says:
 * TAB continuation lines join the field they follow with "\n", tabs stripped. It is a test aid,
 * not the framing stage (src/parsers/), and knows only that one prefix.
 */
import type { AnyLogEvent, EventDetailsByKind, EventKind, LogEntry, LogLevel } from '../../src/domain/index.js';

export function logEntry(message: string, fields: Partial<LogEntry> = {}): LogEntry {
  return {
    tsMs: Date.UTC(2026, 9, 14, 3, 12, 45, 123),
    pid: 41235,
    level: 'LOG',
    sqlstate: null,
    user: null,
    database: null,
    application: null,
    backendType: null,
    message,
    detail: null,
    hint: null,
    context: null,
    statement: null,
    query: null,
    location: null,
    source: { file: 'test.log', offset: 0, line: 1 },
    ...fields,
  };
}

const LINE =
  /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (\S+) \[(\d+)\] (?:(\S+)@(\S*) )?(DEBUG|LOG|INFO|NOTICE|WARNING|ERROR|FATAL|PANIC|DETAIL|HINT|QUERY|CONTEXT|LOCATION|STATEMENT):  (.*)$/;

type Field = 'message' | 'detail' | 'hint' | 'query' | 'context' | 'location' | 'statement';

const FIELDS: Record<string, Field> = {
  DETAIL: 'detail',
  HINT: 'hint',
  QUERY: 'query',
  CONTEXT: 'context',
  LOCATION: 'location',
  STATEMENT: 'statement',
};

export function stderrEntries(text: string): LogEntry[] {
  const entries: LogEntry[] = [];
  let current: LogEntry | null = null;
  let field: Field = 'message';
  let offset = 0;
  text.split('\n').forEach((line, index) => {
    const lineOffset = offset;
    offset += Buffer.byteLength(line) + 1;
    if (line === '') return;
    if (line.startsWith('\t') && current) {
      current[field] = `${current[field] ?? ''}\n${line.slice(1)}`;
      return;
    }
    const g = LINE.exec(line);
    if (!g) throw new Error(`test input line ${index + 1} does not have the test prefix: ${line}`);
    const [, time, zone, pid, user, database, severity, body] = g as unknown as string[];
    const fieldName = FIELDS[severity ?? ''];
    if (fieldName && current) {
      field = fieldName;
      current[field] = body ?? '';
      return;
    }
    field = 'message';
    current = logEntry(body ?? '', {
      tsMs: parseTime(time ?? '', zone ?? ''),
      pid: Number(pid),
      level: (severity === 'DEBUG' ? 'DEBUG1' : severity) as LogLevel,
      user: user === undefined || user === '[unknown]' ? null : user,
      database: database === undefined || database === '[unknown]' || database === '' ? null : database,
      source: { file: 'test.log', offset: lineOffset, line: index + 1 },
    });
    entries.push(current);
  });
  return entries;
}

/** Exactly one entry from `text`. */
export function stderrEntry(text: string): LogEntry {
  const entries = stderrEntries(text);
  const [only] = entries;
  if (entries.length !== 1 || !only) throw new Error(`expected one entry, got ${entries.length}`);
  return only;
}

function parseTime(time: string, zone: string): number {
  const offset = zone === 'UTC' ? 'Z' : /^[+-]\d\d$/.test(zone) ? `${zone}:00` : zone;
  const ms = Date.parse(`${time.replace(' ', 'T')}${offset}`);
  if (Number.isNaN(ms)) throw new Error(`test input has a bad timestamp: ${time} ${zone}`);
  return ms;
}

/** The details of `event`, which must be of `kind` (fails the test with the message otherwise). */
export function detailsOf<K extends EventKind>(event: AnyLogEvent, kind: K): EventDetailsByKind[K] {
  if (event.kind !== kind) throw new Error(`expected kind ${kind}, got ${event.kind}: ${event.message}`);
  return event.details as EventDetailsByKind[K];
}
