/**
 * `temporary file: path "<path>", size <bytes>` (fd.c ReportTemporaryFileUsage(), LOG, 13-19,
 * log_temp_files). Logged when the file is deleted; a STATEMENT line names the query.
 */
import type { LogEntry } from '../../domain/index.js';
import type { Classification } from './classification.js';

const TEMP_FILE = /^temporary file: path "(.*)", size (\d+)$/;

export function classifyTempFile(entry: LogEntry, message: string): Classification | null {
  const g = TEMP_FILE.exec(message);
  if (!g || g[1] === undefined) return null;
  return { kind: 'temp_file', details: { path: g[1], size_bytes: Number(g[2]), statement: entry.statement } };
}
