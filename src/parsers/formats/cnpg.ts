/**
 * CloudNativePG logs: the instance manager reads PostgreSQL's csvlog and writes each record to
 * stdout as one JSON line, among its own lines (other `logger` values), which are skipped and
 * counted as not_postgres (envelope-framer.ts):
 *
 *   {"level":"info","ts":"...","logger":"postgres","msg":"record","logging_pod":"pg-1",
 *    "record":{"log_time":"2026-11-30 07:20:21.476 UTC","process_id":"24946","error_severity":"LOG",...}}
 *
 * `record` holds csvlog's columns under the json tags of CloudNativePG's LoggingRecord
 * (pkg/management/postgres/logpipe/loggingCollector.go), every one `omitempty`: an empty column
 * is an absent key. What `kubectl logs` prints, and what pgvigil reads as a sidecar's input.
 */
import type { OpenEnvelope } from './envelope-framer.js';
import { jsonObjectOf } from './json-line.js';

/** LoggingRecord's json tags, as the instance manager writes them (the ones a LogEntry needs). */
export interface CnpgRecord {
  log_time?: string;
  user_name?: string;
  database_name?: string;
  process_id?: string;
  error_severity?: string;
  sql_state_code?: string;
  message?: string;
  detail?: string;
  hint?: string;
  internal_query?: string;
  context?: string;
  query?: string;
  location?: string;
  application_name?: string;
  backend_type?: string;
}

/** The logger name of PostgreSQL's records (LoggingCollectorRecordName). */
const POSTGRES_LOGGER = 'postgres';
/** csvlog's location column: "func, file:line" (or "file:line"). */
const LOCATION = /^(?:(.*), )?(.+):(\d+)$/;

/**
 * A record as the jsonlog line PostgreSQL would have written for it (pg-messages.md §7.2 keys),
 * which the jsonlog framer reads; the manager's own lines carry none.
 */
export const openCnpg: OpenEnvelope = (text) => {
  const r = parseCnpgLine(text);
  if (r === null) return null;
  const location = r.location === undefined ? null : LOCATION.exec(r.location);
  return [JSON.stringify({
    timestamp: r.log_time,
    user: r.user_name,
    dbname: r.database_name,
    pid: r.process_id === undefined || !/^\d{1,10}$/.test(r.process_id) ? undefined : Number(r.process_id),
    error_severity: r.error_severity,
    state_code: r.sql_state_code,
    message: r.message,
    detail: r.detail,
    hint: r.hint,
    internal_query: r.internal_query,
    context: r.context,
    statement: r.query,
    func_name: location?.[1],
    file_name: location?.[2],
    file_line_num: location?.[3] === undefined ? undefined : Number(location[3]),
    application_name: r.application_name,
    backend_type: r.backend_type,
  })];
};

/** The PostgreSQL record of an instance-manager line; null for the manager's other lines and anything not of its shape. */
export function parseCnpgLine(text: string): CnpgRecord | null {
  const o = jsonObjectOf(text);
  if (o === null || o.logger !== POSTGRES_LOGGER || o.msg !== 'record') return null;
  if (typeof o.record !== 'object' || o.record === null || Array.isArray(o.record)) return null;
  const record = o.record as Record<string, unknown>;
  // Every LoggingRecord field is a string; a record with anything else is not one pgvigil can trust.
  for (const v of Object.values(record)) if (typeof v !== 'string') return null;
  return record as CnpgRecord;
}

/** Whether the line is one of the instance manager's JSON lines (any logger): format detection. */
export function isCnpgManagerLine(text: string): boolean {
  const o = jsonObjectOf(text);
  return o !== null && typeof o.logger === 'string' && typeof o.msg === 'string' && 'level' in o && 'ts' in o;
}
