/**
 * `pgvigil analyze FILE...`: offline analysis of server logs (plain or gzip) with the same
 * pipeline the daemon uses. Files are read in the order of their first timestamps. Prints a
 * summary (text, or one JSON document with --json), every event as NDJSON (--events; the summary
 * then goes to stderr), and stores the events for later review (--db). With --rules the rules
 * engine is replayed over the log on its own time (analyze-rules.ts) and its alerts reported.
 *
 * Memory stays flat: files are streamed in 64 KiB chunks, the summary is an incremental fold, and
 * output and store writes drain per chunk.
 */
import { Command, Option } from 'commander';
import type { Writable } from 'node:stream';
import { systemClock } from '../domain/clock.js';
import type { AnyLogEvent } from '../domain/index.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import type { LogFormat } from '../parsers/framer.js';
import { AnalyzeSummaryBuilder } from '../report/analyze-summary.js';
import type { OfflineAlert } from '../report/alerts-text.js';
import { renderAnalyzeText, type AnalyzeFileReport, type AnalyzeReport } from '../report/analyze-text.js';
import { readHeadLines, readLines } from '../sources/offline-reader.js';
import { addStats, SourceParser, type ParserSettings, type PipelineStats } from '../sources/source-parser.js';
import type { Db } from '../store/open-store.js';
import type { StoreWriter } from '../store/store-writer.js';
import type { OfflineRules } from './analyze-rules.js';
import { EXIT } from './exit-codes.js';
import { offlineLanguage } from '../parsers/lang/index.js';

export interface AnalyzeOptions {
  format?: LogFormat | 'auto';
  prefix?: string;
  tz?: string;
  json?: boolean;
  events?: boolean;
  db?: string;
  /** Target name stamped on events (stored with --db). */
  target?: string;
  /** Replay the rules over the log and report their alerts. */
  rules?: boolean;
  /** The logs' language (lc_messages): `auto` (detected), `en`, or a catalog language such as `de`. */
  lang?: string;
}

export interface AnalyzeIo {
  stdout: Writable;
  stderr: Writable;
  log?: Logger;
}

const MAX_EXAMPLES = 20;

/** Runs the analysis; resolves to the exit code (1 when a file could not be read). */
export async function runAnalyze(files: string[], options: AnalyzeOptions, io: AnalyzeIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const log = io.log ?? silentLogger();
  const language = offlineLanguage(options.lang);
  if (language.problem !== null) io.stderr.write(`pgvigil analyze: ${language.problem}\n`);
  const settings: ParserSettings = {
    target: options.target ?? 'offline', format: options.format ?? 'auto', prefix: options.prefix, timezone: options.tz, language: language.setting,
  };
  const summary = new AnalyzeSummaryBuilder();
  const output = new BufferedOutput(io.stdout);
  const opened = options.db ? await openStoreWriter(options.db, log) : null;
  const store = opened?.writer ?? null;
  const rules = options.rules ? await openOfflineRules(opened, settings.target, log) : null;
  let storeError: string | null = null;
  const reports: AnalyzeFileReport[] = [];
  let totals: PipelineStats | null = null;
  let overLongLines = 0;
  const examples: AnalyzeReport['unparsed_examples'] = [];
  const firstLines = new Map<string, string>();

  let batch: AnyLogEvent[] = [];
  let alerts: OfflineAlert[] | undefined;
  const handle = (events: AnyLogEvent[]): void => {
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      summary.add(event);
      if (options.events) output.write(`${JSON.stringify(eventJson(event))}\n`);
      // The replay stores what its rules read, in step with their evaluations.
      if (rules) rules.add(event);
      else if (store) batch.push(event);
    }
  };
  const drain = async (): Promise<void> => {
    if (store && batch.length > 0) {
      store.enqueue({ events: batch });
      batch = [];
      while (!store.accepting) await systemClock.sleep(50);
    }
    await output.drain();
  };

  try {
    for (const file of await orderByFirstTimestamp(files, settings, log)) {
      const report: AnalyzeFileReport = { path: file, format: null, prefix: null, bytes: 0, lines: 0, error: null };
      reports.push(report);
      const parser = new SourceParser(settings, log);
      parser.openFile(file);
      try {
        const read = await readLines(file, (line) => {
          if (!firstLines.has(file) && line.text.trim() !== '') firstLines.set(file, line.text);
          handle(parser.push(line));
        }, drain);
        handle(parser.flush());
        Object.assign(report, { bytes: read.bytes, lines: read.lines });
        overLongLines += read.overLongLines;
      } catch (err) {
        // Whatever was read before the failure (a truncated .gz) is kept and reported.
        handle(parser.flush());
        report.error = (err as Error).message;
        io.stderr.write(`pgvigil analyze: ${file}: ${report.error}\n`);
      }
      await drain();
      if (parser.language !== null) io.stderr.write(`pgvigil analyze: ${file}: read in language ${parser.language} (PostgreSQL message catalogs)\n`);
      report.format = parser.format?.format ?? null;
      report.prefix = parser.format?.prefix ?? null;
      const stats = parser.stats();
      if (stats) {
        for (const e of stats.examples) if (examples.length < MAX_EXAMPLES) examples.push({ file, ...e });
        totals = totals ? addStats(totals, stats) : stats;
      }
    }
    alerts = rules?.finish();
  } finally {
    rules?.close();
    if (opened) storeError = await closeStore(opened);
  }
  if (storeError) io.stderr.write(`pgvigil analyze: ${options.db}: ${storeError}\n`);

  const result = summary.result();
  const report: AnalyzeReport = {
    files: reports,
    lines: totals?.lines ?? 0,
    entries: totals?.entries ?? 0,
    unparsed_lines: totals?.unparsed_lines ?? 0,
    unparsed_by_reason: { ...(totals?.unparsed_by_reason ?? {}) } as Record<string, number>,
    unparsed_examples: examples,
    over_long_lines: overLongLines,
    events_by_kind: result.events_by_kind,
    summary: result,
    ...(alerts && { alerts }),
  };
  const summaryOut = options.events ? io.stderr : io.stdout;
  summaryOut.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderAnalyzeText(report));
  await output.drain();
  const notALog = report.entries === 0 && report.lines > 0;
  if (notALog) io.stderr.write(nothingUnderstood(reports, firstLines, options));
  return notALog || reports.some((r) => r.error !== null) || storeError ? EXIT.FAILURE : EXIT.OK;
}

/** Lines but not one entry: the wrong file, or a format or prefix pgvigil did not guess. Says what was tried and which flag fixes it. */
export function nothingUnderstood(files: readonly AnalyzeFileReport[], firstLines: ReadonlyMap<string, string>, options: Pick<AnalyzeOptions, 'format' | 'prefix'>): string {
  const tried = files.filter((f) => f.lines > 0).map((f) => {
    const format = !options.format || options.format === 'auto' ? `format ${f.format ?? 'unknown'} (detected)` : `--format ${options.format}`;
    const prefix = f.format !== 'stderr' ? '' : options.prefix !== undefined ? `, --prefix ${JSON.stringify(options.prefix)}`
      : f.prefix !== null ? `, log_line_prefix ${JSON.stringify(f.prefix)} (detected)` : ', no log_line_prefix detected';
    const first = firstLines.get(f.path) ?? '';
    return `  ${f.path}: tried ${format}${prefix}; first line: ${JSON.stringify(first.length > 120 ? `${first.slice(0, 120)}...` : first)}\n`;
  });
  return 'pgvigil analyze: no line was understood as a PostgreSQL log entry:\n' + tried.join('') +
    "  If these are PostgreSQL logs, give their format with --format stderr|csvlog|jsonlog and, for stderr, the server's " +
    "log_line_prefix with --prefix (psql: SHOW log_line_prefix).\n";
}

/** The snake_case envelope of `--events` (and of stored events' JSON). */
export function eventJson(event: AnyLogEvent): Record<string, unknown> {
  return {
    kind: event.kind, target: event.target, ts: new Date(event.tsMs).toISOString(), pid: event.pid,
    database: event.database, user: event.user, level: event.level, sqlstate: event.sqlstate,
    message: event.message, details: event.details, source: event.source,
  };
}

/** Files sorted by the timestamp of their first event; files without one keep their place at the end. */
async function orderByFirstTimestamp(files: string[], settings: ParserSettings, log: Logger): Promise<string[]> {
  if (files.length < 2) return files;
  // One file at a time: a thousand rotated files must not mean a thousand open descriptors.
  const firsts: Array<{ file: string; index: number; first: number | null }> = [];
  for (const [index, file] of files.entries()) firsts.push({ file, index, first: await firstTimestamp(file, settings, log) });
  firsts.sort((a, b) => (a.first ?? Infinity) - (b.first ?? Infinity) || a.index - b.index);
  return firsts.map((f) => f.file);
}

async function firstTimestamp(file: string, settings: ParserSettings, log: Logger): Promise<number | null> {
  try {
    const parser = new SourceParser(settings, log);
    parser.openFile(file);
    let first: number | null = null;
    const seen = (events: AnyLogEvent[]): void => {
      for (const e of events) if (first === null || e.tsMs < first) first = e.tsMs;
    };
    for (const line of await readHeadLines(file)) seen(parser.push(line));
    seen(parser.flush());
    return first;
  } catch {
    return null; // reported when the file is read for real
  }
}

/** The store modules (and SQLite's native addon) load only with --db: start-up of every other run. */
async function openStoreWriter(file: string, log: Logger): Promise<{ db: Db; writer: StoreWriter }> {
  const [{ openStore }, { StoreWriter }] = await Promise.all([import('../store/open-store.js'), import('../store/store-writer.js')]);
  const db = openStore(file);
  const writer = new StoreWriter(db, systemClock, log);
  void writer.start();
  return { db, writer };
}

/** Loaded only with --rules, like the store. */
async function openOfflineRules(opened: { db: Db; writer: StoreWriter } | null, target: string, log: Logger): Promise<OfflineRules> {
  const { OfflineRules } = await import('./analyze-rules.js');
  return OfflineRules.open(opened, target, log);
}

/** Commits what is left and closes; says what could not be stored, if anything. */
async function closeStore({ db, writer }: { db: Db; writer: StoreWriter }): Promise<string | null> {
  await writer.stop();
  const lost = writer.backlogRows;
  db.close();
  return lost > 0 ? `${lost} events could not be stored: committing to the store failed (disk full or not writable?)` : null;
}

/** Collects the output of one input chunk into one write and waits for 'drain' so a slow pipe bounds memory. */
class BufferedOutput {
  private parts: string[] = [];
  private chars = 0;
  constructor(private readonly stream: Writable) {}

  write(text: string): void {
    this.parts.push(text);
    this.chars += text.length;
  }

  async drain(): Promise<void> {
    if (this.chars === 0) return;
    const ok = this.stream.write(this.parts.join(''));
    this.parts = [];
    this.chars = 0;
    if (!ok) await new Promise<void>((resolve) => this.stream.once('drain', resolve));
  }
}

/** The `analyze` subcommand; the exit code goes to `setExitCode`. */
export function analyzeCommand(setExitCode: (code: number) => void): Command {
  return new Command('analyze')
    .description('analyze server log files (plain or .gz) offline and print a summary')
    .argument('<files...>', 'log files, read in the order of their first timestamps')
    .addOption(new Option('--format <format>', 'log format').choices(['auto', 'stderr', 'csvlog', 'jsonlog']).default('auto'))
    .option('--prefix <prefix>', "log_line_prefix of stderr logs (default: detected)")
    .option('--tz <zone>', 'time zone for timestamps without one (IANA name)')
    .option('--json', 'print one JSON document instead of text')
    .option('--events', 'print every event as NDJSON on stdout (the summary goes to stderr)')
    .option('--db <file>', 'also store the events in this SQLite file (with --rules, the alerts too)')
    .option('--rules', 'replay the rules over the log on its own time and report their alerts')
    .option('--lang <language>', "language of the log's messages (the server's lc_messages): auto, en, de, ja, ru, es, ...", 'auto')
    .action(async (files: string[], flags: AnalyzeOptions) => {
      setExitCode(await runAnalyze(files, flags));
    });
}
