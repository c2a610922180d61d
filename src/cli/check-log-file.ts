/**
 * `pgvigil check`'s log line: the exact file `run` will tail (or why there is none), whether
 * pgvigil's user can read it (and how to let it), and the format it will be read in. It finds the
 * file as the tailer does: the configured file, else the newest file of the directory named by
 * --log-pattern, the server's log_filename, or Debian's postgresql-<major>-<cluster>.log.
 */
import { promises as fsp, statSync } from 'node:fs';
import type { Target } from '../config/load-config.js';
import type { LogSourceConfig } from '../config/schema.js';
import { detectFormat } from '../parsers/detect-format.js';
import { namesDirectory } from '../sources/file-identity.js';
import { DEFAULT_LOG_FILENAME, fileNameForFormat, listLogFiles, patternToRegExp } from '../sources/log-file-set.js';
import { locateServerLog, readableHere } from '../sources/locate-server-log.js';
import { readServerLogSettings, resolveLogSettings, type LogSettings } from '../sources/server-log-settings.js';
import type { CheckResult } from './check-results.js';

/** Enough of the file's start to tell its format and prefix. */
const SAMPLE_BYTES = 64 * 1024;

const READ_ACCESS_HINT = 'on Debian/Ubuntu the server\'s log is postgres:adm, mode 0640: add pgvigil\'s user to group adm ' +
  '(usermod -aG adm pgvigil; SupplementaryGroups=adm in deploy/pgvigil.service); with the logging collector, ' +
  'set log_file_mode = 0640 and add pgvigil\'s user to the server\'s group';

export async function checkLogFile(target: Target, server?: Readonly<Record<string, string>>): Promise<CheckResult> {
  const aspect = `${target.name}: log`;
  const settings = server ?? (await readServerLogSettings(target).catch(() => ({})));
  let source: LogSourceConfig;
  if (target.log) {
    source = target.log;
  } else {
    const located = locateServerLog(settings);
    if (located.source === null) {
      return { aspect, state: 'warn', message: `no log configured and ${located.why}: only statistics will be polled`, hint: 'set --log to the server\'s log file or directory (and --log-pattern for a directory whose files are not named by the server\'s log_filename)' };
    }
    source = located.source;
  }
  if (!readableHere(source.path)) return unreadable(aspect, source.path);
  const resolved = resolveLogSettings(source, settings, namesDirectory(source.path));
  const file = await fileToTail(source, resolved);
  if (typeof file !== 'string') return { aspect, state: 'fail', message: file.why, hint: 'name the file with --log-pattern (log_filename escapes such as %Y), or give the file itself as --log' };
  if (!readableHere(file)) return unreadable(aspect, file);
  return { aspect, state: 'ok', message: `will tail ${file} (${await describeFormat(file, resolved)}); readable` };
}

/** The file the tailer starts on: a configured file, else the newest in the directory that matches. */
async function fileToTail(source: LogSourceConfig, settings: LogSettings): Promise<string | { why: string }> {
  if (settings.logFilename === null && !namesDirectory(source.path)) return source.path;
  const name = fileNameForFormat(settings.logFilename ?? DEFAULT_LOG_FILENAME, settings.format === 'auto' ? 'stderr' : settings.format);
  const files = await listLogFiles(source.path, patternToRegExp(name));
  const newest = files?.at(-1);
  if (newest) return newest.path;
  const whose = settings.logFilename === null ? 'PostgreSQL\'s default log_filename'
    : source.filename_pattern !== null ? 'the configured pattern' : 'the server\'s log_filename';
  return { why: `no file in ${source.path} is named like ${name} (${whose}) yet` };
}

async function describeFormat(file: string, settings: LogSettings): Promise<string> {
  if (settings.format !== 'auto') {
    const from = settings.origin === 'server' ? 'the server\'s settings' : settings.origin === 'config' ? 'the config' : 'the file name';
    return settings.format === 'stderr' && settings.prefix !== null ? `stderr, log_line_prefix '${settings.prefix}' from ${from}` : `${settings.format} from ${from}`;
  }
  const handle = await fsp.open(file, 'r');
  let text: string;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SAMPLE_BYTES), 0, SAMPLE_BYTES, 0);
    text = buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
  if (text.length === 0) return 'empty so far: the format will be detected from its first lines';
  const detected = detectFormat(text.split('\n').slice(0, -1), { final: true, ...(settings.prefix !== null ? { prefix: settings.prefix } : {}) });
  if (detected === null) return 'format not recognised from its first lines: give --format and --prefix';
  return detected.format === 'stderr' && detected.prefix !== undefined ? `stderr, log_line_prefix '${detected.prefix}' detected from its first lines` : `${detected.format}, detected from its first lines`;
}

function unreadable(aspect: string, file: string): CheckResult {
  let owner = '';
  try {
    const stats = statSync(file);
    owner = ` (uid ${stats.uid}, gid ${stats.gid}, mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')})`;
  } catch (err) {
    return { aspect, state: 'fail', message: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, hint: 'is the log on this host? give --log the path where the server writes it' };
  }
  return { aspect, state: 'fail', message: `pgvigil's user cannot read ${file}${owner}`, hint: READ_ACCESS_HINT };
}
