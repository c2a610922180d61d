/**
 * The same events in csvlog and jsonlog: the entries of a stderr corpus file, framed by the real
 * stderr framer, written back as PostgreSQL writes them in the other two formats (columns and
 * keys per pg-messages.md §7), so the three formats are timed on identical events.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import type { LogEntry } from '../../src/domain/log-entry.js';
import { StderrFramer } from '../../src/parsers/frame-stderr.js';
import { readLines } from '../../src/sources/offline-reader.js';

function stamp(tsMs: number | null): string {
  return new Date(tsMs ?? 0).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

function csvText(value: string | null): string {
  return value === null ? '' : `"${value.replaceAll('"', '""')}"`;
}

function csvRecord(e: LogEntry, n: number): string {
  const t = stamp(e.tsMs);
  // 26 columns (PG 14+): log_time .. query_id.
  return [t, csvText(e.user), csvText(e.database), e.pid ?? '', '"[local]"', `6529a1b2.${(e.pid ?? 0).toString(16)}`, n, '"idle"', t, '3/1', '0',
    e.level, e.sqlstate ?? '', csvText(e.message), csvText(e.detail), csvText(e.hint), csvText(e.query), '', csvText(e.context), csvText(e.statement), '',
    csvText(e.location), csvText(e.application), csvText(e.backendType), '', '0'].join(',');
}

function jsonRecord(e: LogEntry): string {
  const o: Record<string, unknown> = { timestamp: stamp(e.tsMs), user: e.user ?? undefined, dbname: e.database ?? undefined, pid: e.pid ?? undefined, error_severity: e.level, state_code: e.sqlstate ?? undefined, message: e.message, detail: e.detail ?? undefined, hint: e.hint ?? undefined, internal_query: e.query ?? undefined, context: e.context ?? undefined, statement: e.statement ?? undefined, application_name: e.application ?? undefined, backend_type: e.backendType ?? undefined };
  return JSON.stringify(o);
}

/** Writes `csvFile` and `jsonFile` from the stderr log `stderrFile` (cached: kept when present). */
export async function writeOtherFormats(stderrFile: string, prefix: string, csvFile: string, jsonFile: string): Promise<void> {
  if (existsSync(csvFile) && existsSync(jsonFile)) return;
  const framer = new StderrFramer({ file: stderrFile, prefix });
  const csv = createWriteStream(csvFile);
  const json = createWriteStream(jsonFile);
  let n = 0;
  const write = async (entries: LogEntry[]): Promise<void> => {
    if (entries.length === 0) return;
    const okCsv = csv.write(`${entries.map((e) => csvRecord(e, ++n)).join('\n')}\n`);
    const okJson = json.write(`${entries.map(jsonRecord).join('\n')}\n`);
    // Both waits start now: one stream may drain while the other is waited for.
    await Promise.all([okCsv || once(csv, 'drain'), okJson || once(json, 'drain')]);
  };
  let pending: LogEntry[] = [];
  await readLines(stderrFile, (line) => { pending.push(...framer.push(line)); }, async () => {
    const entries = pending;
    pending = [];
    await write(entries);
  });
  await write([...pending, ...framer.flush()]);
  csv.end();
  json.end();
  await Promise.all([once(csv, 'finish'), once(json, 'finish')]);
}
