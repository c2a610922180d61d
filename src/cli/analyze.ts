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
import { Command, InvalidArgumentError, Option } from 'commander';
import { promises as fsp } from 'node:fs';
import type { Writable } from 'node:stream';
import { defaultJobs, workersCanRead } from '../analyze/default-jobs.js';
import { readFileHeads, type HeadOrError } from '../analyze/file-head.js';
import { systemClock, type Clock } from '../domain/clock.js';
import type { AnyLogEvent } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import { INPUT_FORMATS, inputFormatName, type InputFormat } from '../parsers/formats/input-format.js';
import { AnalyzeSummaryBuilder } from '../report/analyze-summary.js';
import { LOG_REPORT_SECTIONS } from '../report/log-report/index.js';
import { LogReportFold } from '../report/log-report/log-report-fold.js';
import { reportableEvent } from '../report/log-report/reportable-event.js';
import { foldByMinute } from '../report/log-report/minute-folds.js';
import { DEFAULT_REPORT_LIMITS } from '../report/log-report/section.js';
import type { OfflineAlert } from '../report/alerts-text.js';
import type { AnalyzeFileReport, AnalyzeReport } from '../report/analyze-text.js';
import { compressionOfFile, expandInputs } from '../sources/log-inputs.js';
import { readLines } from '../sources/offline-reader.js';
import { addStats, SourceParser, type ParserLog, type ParserSettings, type PipelineStats } from '../sources/source-parser.js';
import type { Db } from '../store/open-store.js';
import type { StoreWriter } from '../store/store-writer.js';
import type { OfflineRules, RulesConfig } from './analyze-rules.js';
import { AnalyzeProgress } from './analyze-progress.js';
import { chooseFormats, collectFormat, renderAnalyzeOutput, writeAnalyzeOutput, type OutputFormat } from './analyze-output.js';
import { EXIT } from './exit-codes.js';
import { REDACT_LEVELS, redactEvent, redactLine, type RedactLevel } from '../lib/redact.js';
import { offlineLanguage } from '../parsers/lang/index.js';
import { parseTargetSpec, targetsOfFiles } from '../analyze/file-targets.js';
import { isKnownTimeZone } from '../parsers/timestamp.js';

export interface AnalyzeOptions {
  format?: InputFormat;
  prefix?: string;
  tz?: string;
  json?: boolean;
  /** What the result is written as (analyze-output.ts); `json: true` is 'json'. Default text. */
  outputFormat?: OutputFormat;
  /** Write the result to this file instead of stdout (html needs one). */
  outputFile?: string;
  events?: boolean;
  db?: string;
  /**
   * The server each file is the log of (stamped on its events, stored with --db): `name=FILE`, or
   * `name` for every file not named; by default the file's name (src/analyze/file-targets.ts).
   */
  target?: string | readonly string[];
  /** Replay the rules over the log and report their alerts. */
  rules?: boolean;
  /** The rules and thresholds of a config file (-c); default every rule at its defaults. */
  rulesConfig?: RulesConfig;
  /** Statement text kept in what is printed and stored (src/lib/redact.ts). */
  redact?: RedactLevel;
  /** Worker threads parsing in parallel; 1 parses in this thread. */
  jobs?: number;
  /** Bytes per range a worker parses (tests make it tiny). */
  rangeBytes?: number;
  /** The logs' language (lc_messages): `auto` (detected), `en`, or a catalog language such as `de`. */
  lang?: string;
  /** Keep a progress line on stderr (a terminal): analyze-progress.ts. */
  progress?: boolean;
}

export interface AnalyzeIo {
  stdout: Writable;
  stderr: Writable;
  log?: Logger;
  /** The progress line's time (tests step it). */
  clock?: Clock;
}

const MAX_EXAMPLES = 20;

/** What the parsers detected goes nowhere unless the caller gives a logger: pino then never loads. */
const NO_PARSER_LOG: ParserLog = { info: () => {} };

/** Runs the analysis; resolves to the exit code (1 when a file could not be read). */
export async function runAnalyze(args: string[], options: AnalyzeOptions, io: AnalyzeIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const log = io.log ?? NO_PARSER_LOG;
  const redactLevel = options.redact ?? 'off';
  let files: string[];
  try {
    files = await expandInputs(args);
  } catch (err) {
    io.stderr.write(`pgvigil analyze: ${(err as Error).message}\n`);
    return EXIT.FAILURE;
  }
  let targets: Map<string, string>;
  try {
    targets = targetsOfFiles(files, [options.target ?? []].flat().map(parseTargetSpec));
  } catch (err) {
    io.stderr.write(`pgvigil analyze: ${(err as Error).message}\n`);
    return EXIT.USAGE;
  }
  const language = offlineLanguage(options.lang);
  if (language.problem !== null) io.stderr.write(`pgvigil analyze: ${language.problem}\n`);
  // The target given to what reads several files at once (their heads); each file is parsed as its own.
  const settings: ParserSettings = {
    target: targets.get(files[0] ?? '') ?? 'stdin', format: options.format ?? 'auto', prefix: options.prefix, timezone: options.tz, language: language.setting,
  };
  const summary = new AnalyzeSummaryBuilder();
  const logReport = new LogReportFold();
  const output = new BufferedOutput(io.stdout);
  const progress = options.progress ? new AnalyzeProgress(io.stderr, await plainBytesOf(files), io.clock ?? systemClock) : null;
  /** What is said on stderr while reading: the progress line goes first. */
  const note = (text: string): void => {
    progress?.end();
    io.stderr.write(text);
  };
  const opened = options.db ? await openStoreWriter(options.db, await storeLogger(io)) : null;
  const store = opened?.writer ?? null;
  const rules = options.rules ? await openOfflineRules(opened, [...targets.values()], await storeLogger(io), options.rulesConfig) : null;
  let storeError: string | null = null;
  const reports: AnalyzeFileReport[] = [];
  let totals: PipelineStats | null = null;
  let overLongLines = 0;
  const examples: AnalyzeReport['unparsed_examples'] = [];
  const firstLines = new Map<string, string>();
  const notUnderstood: AnalyzeFileReport[] = [];
  const mostlyUnread: Array<{ report: AnalyzeFileReport; stats: PipelineStats }> = [];

  let batch: AnyLogEvent[] = [];
  /** The events of `batch` as the log report folds them (reportable-event.ts). */
  let reportBatch: AnyLogEvent[] = [];
  let alerts: OfflineAlert[] | undefined;
  /** The event as printed, stored and reported: redacted; returns it as the log report folds it. */
  const handleEvent = (original: AnyLogEvent): AnyLogEvent => {
    const event = redactEvent(original, redactLevel);
    const reportable = reportableEvent(original, redactLevel, event);
    summary.add(event);
    if (options.events) output.write(`${JSON.stringify(eventJson(event))}\n`);
    // The replay stores what its rules read, in step with their evaluations; the log report's
    // rows are stored here either way.
    if (rules) rules.add(event);
    else if (store) batch.push(event);
    if (store) reportBatch.push(reportable);
    return reportable;
  };
  /** The single-threaded run's events; with -j N each range's worker folds the log report (range-worker.ts). */
  const handle = (events: AnyLogEvent[]): void => {
    for (let i = 0; i < events.length; i++) logReport.add(handleEvent(events[i]!));
  };
  const drain = async (): Promise<void> => {
    if (store && reportBatch.length > 0) {
      // With the log report's rows of these events, as `pgvigil run` commits them (report --db reads them).
      store.enqueue({ events: batch, reportMinutes: foldByMinute(reportBatch, LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS) });
      batch = [];
      reportBatch = [];
      while (!store.accepting) await systemClock.sleep(50);
    }
    await output.drain();
  };

  try {
    const summaryOnly = !options.events && !options.db && !options.rules && redactLevel === 'off';
    const jobs = !(await workersCanRead(files)) ? 1 : options.jobs ?? await defaultJobs(files, { wholeEvents: !summaryOnly });
    // Read once: the order of several files, and the format and language each worker is given.
    const heads = await readFileHeads(files.length > 1 || jobs > 1 ? files : [], settings, log);
    const ordered = orderByFirstTimestamp(files, heads);
    if (jobs > 1) {
      const { parseFilesInParallel } = await import('../analyze/parallel-parse.js');
      const parsed = await parseFilesInParallel(ordered, heads, settings, { jobs, rangeBytes: options.rangeBytes, summaryOnly, targets, redact: redactLevel }, {
        onEvent: handleEvent, onGenericRun: (run) => summary.addGenericRun(run), onReport: (states) => logReport.merge(states),
        afterBatch: (inputBytes) => {
          progress?.update(inputBytes);
          return drain();
        },
      }, log);
      for (const file of parsed) {
        const report: AnalyzeFileReport = {
          path: file.path, format: file.format ? inputFormatName(file.format.format, file.format.envelope) : null, prefix: file.format?.prefix ?? null,
          bytes: file.bytes, lines: file.lines, error: file.error,
        };
        reports.push(report);
        if (report.lines > 0 && report.error === null && (file.stats?.entries ?? 0) === 0) notUnderstood.push(report);
        else if (file.stats && mostlyNotUnderstood(file.stats)) mostlyUnread.push({ report, stats: file.stats });
        if (file.error && options.json) note(`pgvigil analyze: ${file.path}: ${file.error}\n`);
        if (file.language !== null) note(languageNote(file.path, file.language));
        if (file.firstLine !== null) firstLines.set(file.path, file.firstLine);
        overLongLines += file.overLongLines;
        if (file.stats) {
          for (const e of file.stats.examples) if (examples.length < MAX_EXAMPLES) examples.push({ file: file.path, ...e, text: redactLine(e.text, redactLevel) });
          totals = totals ? addStats(totals, file.stats) : file.stats;
        }
      }
    }
    let readBefore = 0;
    for (const file of jobs > 1 ? [] : ordered) {
      const report: AnalyzeFileReport = { path: file, format: null, prefix: null, bytes: 0, lines: 0, error: null };
      reports.push(report);
      const parser = new SourceParser({ ...settings, target: targets.get(file)! }, log);
      parser.openFile(file);
      // A variable, not a look-up in firstLines for every line of the file.
      let firstLine: string | null = null;
      try {
        const read = await readLines(file, (line) => {
          if (firstLine === null && line.text.trim() !== '') firstLine = line.text;
          handle(parser.push(line));
        }, (bytesRead) => {
          progress?.update(readBefore + bytesRead);
          return drain();
        });
        handle(parser.flush());
        readBefore += read.bytes;
        Object.assign(report, { bytes: read.bytes, lines: read.lines });
        overLongLines += read.overLongLines;
      } catch (err) {
        // Whatever was read before the failure (a truncated .gz) is kept and reported.
        handle(parser.flush());
        report.error = (err as Error).message;
        // The text summary lists the file with its error; a JSON one is for machines, so a person reads it here.
        if (options.json) note(`pgvigil analyze: ${file}: ${report.error}\n`);
      }
      if (firstLine !== null) firstLines.set(file, firstLine);
      await drain();
      if (parser.language !== null) note(languageNote(file, parser.language));
      report.format = parser.format ? inputFormatName(parser.format.format, parser.format.envelope) : null;
      report.prefix = parser.format?.prefix ?? null;
      const stats = parser.stats();
      if (report.lines > 0 && report.error === null && (stats?.entries ?? 0) === 0) notUnderstood.push(report);
      else if (stats && mostlyNotUnderstood(stats)) mostlyUnread.push({ report, stats });
      if (stats) {
        // A line not understood may be a statement's: redacted like one.
        for (const e of stats.examples) if (examples.length < MAX_EXAMPLES) examples.push({ file, ...e, text: redactLine(e.text, redactLevel) });
        totals = totals ? addStats(totals, stats) : stats;
      }
    }
    alerts = rules?.finish();
    for (const warning of rules?.overlaps() ?? []) note(`pgvigil analyze: ${warning}\n`);
  } finally {
    rules?.close();
    if (opened) storeError = await closeStore(opened);
  }
  if (storeError) note(`pgvigil analyze: ${options.db}: ${storeError}\n`);

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
    report: logReport.results(),
    ...(alerts && { alerts }),
  };
  progress?.end();
  const summaryText = await renderAnalyzeOutput(report, options.outputFormat ?? (options.json ? 'json' : 'text'));
  let writeError: string | null = null;
  if (options.outputFile !== undefined) writeError = await writeAnalyzeOutput(options.outputFile, summaryText).then(() => null, (err: Error) => err.message);
  else if (options.events) note(summaryText);
  else output.write(summaryText);
  await output.drain();
  if (writeError !== null) note(`pgvigil analyze: ${writeError}\n`);
  // A file of which nothing was read is said even when others were: never a silent zero.
  const notALog = report.entries === 0 && report.lines > 0;
  if (notUnderstood.length > 0) note(nothingUnderstood(notUnderstood, firstLines, options));
  for (const { report: file, stats } of mostlyUnread) note(mostlyUnreadNote(file, stats, options));
  return notALog || mostlyUnread.length > 0 || reports.some((r) => r.error !== null) || storeError || writeError ? EXIT.FAILURE : EXIT.OK;
}

/** The bytes of the inputs when every one is a plain file (a progress line's total); null otherwise. */
async function plainBytesOf(files: readonly string[]): Promise<number | null> {
  let total = 0;
  for (const file of files) {
    try {
      const stat = await fsp.stat(file);
      if (!stat.isFile() || await compressionOfFile(file) !== null) return null;
      total += stat.size;
    } catch {
      return null;
    }
  }
  return total;
}

/**
 * More than half of a file's lines did not start an entry with the prefix in use: a wrong --prefix
 * (or a detected one that fits only some lines) reads a fraction of the log and counts the rest as
 * unread, which a summary alone does not make plain.
 */
function mostlyNotUnderstood(stats: PipelineStats): boolean {
  return stats.lines > 0 && (stats.unparsed_by_reason.prefix_mismatch ?? 0) * 2 > stats.lines;
}

function mostlyUnreadNote(file: AnalyzeFileReport, stats: PipelineStats, options: Pick<AnalyzeOptions, 'prefix'>): string {
  const mismatched = stats.unparsed_by_reason.prefix_mismatch ?? 0;
  const prefix = options.prefix !== undefined ? `--prefix ${JSON.stringify(options.prefix)}` : `log_line_prefix ${JSON.stringify(file.prefix ?? '')} (detected)`;
  const first = stats.examples.find((e) => e.reason === 'prefix_mismatch');
  const example = first ? `; the first is line ${first.line}: ${JSON.stringify(first.text.length > 120 ? `${first.text.slice(0, 120)}...` : first.text)}` : '';
  return `pgvigil analyze: ${file.path}: ${mismatched} of ${stats.lines} lines do not match ${prefix}${example}\n` +
    "  Give the server's log_line_prefix with --prefix (psql: SHOW log_line_prefix), or leave --prefix out to detect it.\n";
}

/** Lines but not one entry: the wrong file, or a format or prefix pgvigil did not guess. Says what was tried and which flag fixes it. */
export function nothingUnderstood(files: readonly AnalyzeFileReport[], firstLines: ReadonlyMap<string, string>, options: Pick<AnalyzeOptions, 'format' | 'prefix'>): string {
  const tried = files.filter((f) => f.lines > 0).map((f) => {
    const format = !options.format || options.format === 'auto' ? `format ${f.format ?? 'unknown'} (detected)` : `--format ${options.format}`;
    const prefix = f.format === null || f.format === 'csvlog' || f.format === 'jsonlog' || f.format === 'cnpg' ? '' : options.prefix !== undefined ? `, --prefix ${JSON.stringify(options.prefix)}`
      : f.prefix !== null ? `, log_line_prefix ${JSON.stringify(f.prefix)} (detected)` : ', no log_line_prefix detected';
    const first = firstLines.get(f.path) ?? '';
    return `  ${f.path}: tried ${format}${prefix}; first line: ${JSON.stringify(first.length > 120 ? `${first.slice(0, 120)}...` : first)}\n`;
  });
  return 'pgvigil analyze: no line was understood as a PostgreSQL log entry:\n' + tried.join('') +
    `  If these are PostgreSQL logs, give their format with --format ${INPUT_FORMATS.filter((f) => f !== 'auto').join('|')} and, for stderr ` +
    "(and the stderr lines inside joined, cloud-logging and logplex), the server's log_line_prefix with --prefix (psql: SHOW log_line_prefix).\n";
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
function orderByFirstTimestamp(files: string[], heads: ReadonlyMap<string, HeadOrError>): string[] {
  if (files.length < 2) return files;
  const first = (file: string): number => {
    const head = heads.get(file);
    return head === undefined || 'error' in head ? Infinity : head.firstTsMs ?? Infinity;
  };
  return files.map((file, index) => ({ file, index, first: first(file) }))
    .sort((a, b) => a.first - b.first || a.index - b.index)
    .map((f) => f.file);
}

function languageNote(file: string, language: string): string {
  return `pgvigil analyze: ${file}: read in language ${language} (PostgreSQL message catalogs)\n`;
}

/** The store's and the rules' logger: the caller's, or a silent one (pino loads only with --db or --rules). */
async function storeLogger(io: AnalyzeIo): Promise<Logger> {
  return io.log ?? (await import('../lib/logger.js')).silentLogger();
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
async function openOfflineRules(opened: { db: Db; writer: StoreWriter } | null, targets: readonly string[], log: Logger, rulesConfig?: RulesConfig): Promise<OfflineRules> {
  const { OfflineRules } = await import('./analyze-rules.js');
  return OfflineRules.open(opened, targets, log, rulesConfig);
}

/** Commits what is left and closes; says what could not be stored, if anything. */
async function closeStore({ db, writer }: { db: Db; writer: StoreWriter }): Promise<string | null> {
  await writer.stop();
  const lost = writer.backlogRows;
  // Each commit's log report rows merged by minute and hour, as `pgvigil run` merges them.
  const { ReportMinutesCompactor } = await import('../report/log-report/report-minutes-compactor.js');
  let mergeError: string | null = null;
  new ReportMinutesCompactor(db, systemClock, { error: (obj) => { mergeError = String((obj as { err?: unknown }).err); } }).runOnce(true);
  db.close();
  if (lost > 0) return `${lost} events could not be stored: committing to the store failed (disk full or not writable?)`;
  return mergeError === null ? null : `the log report's minutes could not be merged (${mergeError}); pgvigil report reads them unmerged, more slowly`;
}

/**
 * Collects the output of one input chunk into one write and waits for 'drain' so a slow pipe
 * bounds memory. Once the stream failed (its reader went away, as `| head` does, or a full disk:
 * main.ts tells which), later output is dropped and the analysis goes on, so the store and the
 * summary on stderr still get everything.
 */
class BufferedOutput {
  private parts: string[] = [];
  private chars = 0;
  private failure: Error | null = null;

  constructor(private readonly stream: Writable) {
    stream.on('error', (err: Error) => {
      this.failure ??= err;
    });
  }

  write(text: string): void {
    if (this.failure) return;
    this.parts.push(text);
    this.chars += text.length;
  }

  async drain(): Promise<void> {
    if (this.chars === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.chars = 0;
    if (this.failure || this.stream.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        for (const event of ['drain', 'error', 'close']) this.stream.off(event, done);
        resolve();
      };
      for (const event of ['drain', 'error', 'close']) this.stream.once(event, done);
    });
  }
}

function positiveInteger(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number of at least 1');
  return n;
}

function timeZone(text: string): string {
  if (!isKnownTimeZone(text)) throw new InvalidArgumentError('not a time zone: give the server\'s log_timezone as an IANA name (e.g. "Europe/Paris", "UTC") or "UTC+3"');
  return text;
}

/** The `analyze` subcommand; the exit code goes to `setExitCode`. */
export function analyzeCommand(setExitCode: (code: number) => void): Command {
  return new Command('analyze')
    .description('analyze server log files (plain, .gz, .bz2, .xz, .zst) offline and print a summary')
    .argument('<files...>', "log files, directories, quoted globs ('logs/*.gz') or - for stdin; read in the order of their first timestamps")
    .option('--format <format>', "the logs' format (README: Formats; default auto) and/or the output's: text (default), json, html (with -o); repeatable: --format csvlog --format html", collectFormat, [] as string[])
    .option('-o, --output <file>', 'write the result to this file instead of standard output')
    .option('--prefix <prefix>', "log_line_prefix of stderr logs (default: detected)")
    .option('--tz <zone>', 'time zone for timestamps without one (IANA name)', timeZone)
    .option('--json', 'print one JSON document instead of text (= --format json)')
    .option('--events', 'print every event as NDJSON on stdout (the summary goes to stderr)')
    .option('--db <file>', 'also store the events in this SQLite file (with --rules, the alerts too)')
    .option('--rules', 'replay the rules over the log on its own time and report their alerts')
    .option('-c, --config <file>', "with --rules: the rules this config file turns off (rules.disabled) and its thresholds (rules.thresholds)")
    .option('--target <name[=file]>', "the server a file is the log of: name=FILE for that file, name for every file not named (repeatable; default: the file's name without extensions and rotation suffix, so a primary's and a standby's logs are two servers)", (value: string, all: string[]) => [...all, value], [] as string[])
    .addOption(new Option('--redact <level>', 'statement text kept in what is printed and stored: off, literals (literals become ?, parameters dropped) or statements (no statement text; the report shows each statement by fingerprint)').choices(REDACT_LEVELS).default('off'))
    .option('-j, --jobs <n>', 'threads parsing in parallel (default, when only the summary is printed: the number of cores, at most 8, from 1 GiB of input; otherwise 1; a .gz file is read by one)', positiveInteger)
    .option('--lang <language>', "language of the log's messages (the server's lc_messages): auto, en, de, ja, ru, es, ...", 'auto')
    .action(async (files: string[], { format, output, config, ...flags }: Omit<AnalyzeOptions, 'format'> & { format: string[]; output?: string; config?: string }) => {
      const formats = chooseFormats(format, { json: flags.json, outputFile: output });
      // -c sets only what --rules replays: without it the file would be read for nothing.
      if (typeof formats === 'string' || (config !== undefined && flags.rules !== true)) {
        process.stderr.write(`pgvigil analyze: ${typeof formats === 'string' ? formats : '-c sets the rules of --rules: give --rules too'}\n`);
        setExitCode(EXIT.USAGE);
        return;
      }
      const rulesConfig = config === undefined ? undefined : await rulesConfigOf(config);
      // On a terminal, unless --events writes its lines to the same one meanwhile.
      const progress = process.stderr.isTTY === true && !(flags.events === true && process.stdout.isTTY === true);
      setExitCode(await runAnalyze(files, { ...flags, format: formats.input, outputFormat: formats.output, outputFile: output, progress, rulesConfig }));
    });
}

/** The rules part of a config file; the whole file is checked as `run` would (a ConfigError exits 2). */
async function rulesConfigOf(file: string): Promise<RulesConfig> {
  const { loadConfig } = await import('../config/load-config.js');
  const { rules } = loadConfig({ file });
  return { disabled: rules.disabled, thresholds: rules.thresholds };
}
