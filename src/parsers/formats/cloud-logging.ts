/**
 * Google Cloud Logging exports of Cloud SQL and AlloyDB for PostgreSQL (`gcloud logging read
 * --format=json` flattened to one object per line, or a Logs Router sink to Cloud Storage): one
 * LogEntry per line, the server's stderr line in `textPayload` (or `jsonPayload.message`), with
 * the export's own `timestamp`, `severity`, `logName` (`.../logs/cloudsql.googleapis.com%2Fpostgres.log`)
 * and `resource.labels.database_id` ("project:instance").
 *
 * The PostgreSQL text keeps its log_line_prefix (Cloud SQL's is `%m [%p]: [%l-1] db=%d,user=%u `),
 * which carries the time and pid, so the entry is read from it; the export's fields only tell
 * PostgreSQL's entries from other services'. A payload with newlines is the lines of one entry,
 * and Cloud SQL drops the TAB that starts a continuation line
 * ("...: [1-1] db=,user= LOG:  automatic analyze of table ...\nI/O timings: read: ..."): a line
 * after the first that does not start with the prefix gets it back.
 */
import type { OpenEnvelope } from './envelope-framer.js';
import type { StartsLine } from './joined-lines.js';
import { jsonObjectOf } from './json-line.js';

interface CloudLogEntry {
  textPayload?: unknown;
  jsonPayload?: { message?: unknown };
  logName?: unknown;
}

/** Opens an exported entry into its PostgreSQL lines; null for another service's entry or a line that is not one. */
export function cloudLoggingOpener(startsLine: StartsLine): OpenEnvelope {
  return (text) => {
    const lines = payloadLines(text);
    if (lines === null) return null;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.charCodeAt(0) !== 9 && !startsLine(line)) lines[i] = `\t${line}`;
    }
    return lines;
  };
}

/** The first line of each entry's payload: the entry starts, which is what format detection needs. */
export const openCloudLoggingFirstLines: OpenEnvelope = (text) => payloadLines(text)?.slice(0, 1) ?? null;

function payloadLines(text: string): string[] | null {
  const entry = cloudLogEntry(text);
  if (entry === null) return null;
  if (typeof entry.logName === 'string' && !entry.logName.includes('postgres')) return null;
  const payload = typeof entry.textPayload === 'string' ? entry.textPayload : entry.jsonPayload?.message;
  if (typeof payload !== 'string') return null;
  return (payload.endsWith('\n') ? payload.slice(0, -1) : payload).split('\n');
}

/** The object on the line when it has the shape of a Cloud Logging entry, else null. */
export function cloudLogEntry(text: string): CloudLogEntry | null {
  const o = jsonObjectOf(text);
  if (o === null) return null;
  const hasPayload = 'textPayload' in o || (typeof o.jsonPayload === 'object' && o.jsonPayload !== null);
  return hasPayload && ('logName' in o || 'resource' in o || 'insertId' in o) ? (o as CloudLogEntry) : null;
}
