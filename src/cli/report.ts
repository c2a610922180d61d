/**
 * `pgvigil report`: the incident report for a past window from the store: the alerts, a
 * timeline of notable events and transitions, charts and the log summary of the window, as
 * text, JSON, Markdown or one self-contained HTML file.
 */
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { DateTime } from 'luxon';
import { isPostgresUrl } from '../lib/conninfo.js';
import { EXIT } from './exit-codes.js';

interface ReportFlags {
  db: string;
  /** --db was given on the command line: it wins over the config's db. */
  dbGiven?: boolean;
  /** A config file: its db (the store `run` writes) and its targets' names. */
  config?: string;
  /** A SQLite store, or a postgres:// URL of the central store (fleet report). */
  store?: string;
  cluster?: string;
  from: string;
  to: string;
  target?: string;
  json?: boolean;
  format?: ReportFormat;
  output?: string;
  /** --from or --to was given: the window is never moved (windowOfOldData). */
  windowGiven?: boolean;
}

export const REPORT_FORMATS = ['text', 'json', 'md', 'html'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

const RELATIVE = /^-?(\d+(?:\.\d+)?)(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "now", an ISO 8601 time, or a duration before now such as 6h, -30m, 2d. Null when unreadable. */
export function parseReportTime(text: string, nowMs: number): number | null {
  if (text === 'now') return nowMs;
  const relative = RELATIVE.exec(text);
  if (relative) return nowMs - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  const parsed = DateTime.fromISO(text, { zone: 'utc' });
  return parsed.isValid ? parsed.toMillis() : null;
}

export function reportCommand(setExitCode: (code: number) => void): Command {
  return new Command('report')
    .description('incident report for a past window from the store: alerts, timeline, log summary')
    .option('--db <file>', 'SQLite store (env PGVIGIL_DB)', process.env.PGVIGIL_DB ?? './pgvigil.db')
    .option('-c, --config <file>', "the config `pgvigil run` was given: its db, and its targets' names for --target")
    .option('--from <time>', 'start: ISO 8601 time, or a duration ago such as 6h, 30m, 2d', '24h')
    .option('--to <time>', 'end: ISO 8601 time, a duration ago, or now', 'now')
    .option('--store <store>', 'a SQLite store, or the central PostgreSQL store as a postgres:// URL: the fleet report, with a per-target summary (read-only role: docs/fleet.md)')
    .option('--target <name>', 'only this target')
    .option('--cluster <name>', 'only the targets of this cluster (central store)')
    .addOption(new Option('--format <format>', 'text, json, md (Markdown) or html (one self-contained file with charts)').choices(REPORT_FORMATS))
    .option('--json', 'same as --format json')
    .option('-o, --output <file>', 'write the report to this file instead of standard output')
    .action(async (flags: ReportFlags, command: Command) => {
      const windowGiven = command.getOptionValueSource('from') !== 'default' || command.getOptionValueSource('to') !== 'default';
      setExitCode(await runReport({ ...flags, windowGiven, dbGiven: command.getOptionValueSource('db') === 'cli' }, Date.now()));
    });
}

export async function runReport(flags: ReportFlags, nowMs: number): Promise<number> {
  const fromMs = parseReportTime(flags.from, nowMs);
  const toMs = parseReportTime(flags.to, nowMs);
  if (fromMs === null || toMs === null || fromMs > toMs) {
    process.stderr.write(`pgvigil report: --from ${JSON.stringify(flags.from)} / --to ${JSON.stringify(flags.to)}: give ISO 8601 times or durations ago (6h, 30m, 2d), from before to\n`);
    return EXIT.USAGE;
  }
  if (flags.config !== undefined && flags.store !== undefined) {
    process.stderr.write('pgvigil report: -c reads the store its config names (db); --store names another: give one of them\n');
    return EXIT.USAGE;
  }
  if (flags.store !== undefined && isPostgresUrl(flags.store)) {
    const { runCentralReport } = await import('./central-report.js');
    return runCentralReport(flags.store, { fromMs, toMs, target: flags.target ?? null, cluster: flags.cluster ?? null }, flags.format ?? (flags.json ? 'json' : 'text'), flags.output);
  }
  if (flags.cluster !== undefined) {
    process.stderr.write('pgvigil report: --cluster reads the central store: give --store postgres://...\n');
    return EXIT.USAGE;
  }
  // Loaded here, not with the CLI: SQLite's native addon is start-up every other command would pay.
  const [{ openStore, StoreError }, { StoreQueries }, { storedIncidentReport }, { renderIncidentReport }] = await Promise.all([
    import('../store/open-store.js'), import('../store/queries.js'), import('../report/stored-incident-report.js'), import('../report/render-incident-report.js'),
  ]);
  const { storeOfConfig, unknownTarget } = await import('./store-of-config.js');
  const fromConfig = flags.config === undefined ? null : storeOfConfig(flags.config, flags.dbGiven === true ? flags.db : undefined);
  const problem = fromConfig && unknownTarget(flags.target, fromConfig.targets);
  if (problem) {
    process.stderr.write(`pgvigil report: ${problem}\n`);
    return EXIT.USAGE;
  }
  let db;
  try {
    db = openStore(flags.store ?? fromConfig?.dbPath ?? flags.db, { readonly: true });
  } catch (err) {
    process.stderr.write(`pgvigil report: ${err instanceof StoreError ? err.message : String(err)}\n`);
    return EXIT.FAILURE;
  }
  try {
    const queries = new StoreQueries(db);
    const moved = flags.windowGiven ? null : windowOfOldData(queries.dataSpan(), { fromMs, toMs });
    if (moved) {
      process.stderr.write(`pgvigil report: nothing in the last ${flags.from}; the store's data ends at ${new Date(moved.dataEndMs).toISOString()}, ` +
        `so this is ${new Date(moved.fromMs).toISOString()} to ${new Date(moved.toMs).toISOString()} (--from and --to choose another window)\n`);
    }
    const window = moved ?? { fromMs, toMs };
    const report = storedIncidentReport(queries, { fromMs: window.fromMs, toMs: window.toMs, target: flags.target ?? null });
    const rendered = renderIncidentReport(report, flags.format ?? (flags.json ? 'json' : 'text'));
    return writeReport(rendered, flags.output);
  } finally {
    db.close();
  }
}

/**
 * The window of a report asked for without --from and --to, when the store's data ends before the
 * default one (a store `pgvigil analyze --db` made of an old log): the data's last stretch as long
 * as the default (from its oldest event, if later), with a margin of 5% each side, so the charts
 * show the incident, not 24 h of nothing with it at the edge. Null when the default window holds data.
 */
export function windowOfOldData(
  span: { oldestEventMs: number | null; newestMs: number } | null,
  window: { fromMs: number; toMs: number },
): { fromMs: number; toMs: number; dataEndMs: number } | null {
  if (span === null || span.newestMs >= window.fromMs) return null;
  const fromMs = Math.max(span.oldestEventMs ?? -Infinity, span.newestMs - (window.toMs - window.fromMs));
  const marginMs = Math.max(1_000, (span.newestMs - fromMs) * 0.05);
  return { fromMs: Math.floor(fromMs - marginMs), toMs: Math.ceil(span.newestMs + marginMs), dataEndMs: span.newestMs };
}

/** To standard output, or to the -o file. */
export function writeReport(rendered: string, output: string | undefined): number {
  if (output === undefined) {
    process.stdout.write(rendered);
    return EXIT.OK;
  }
  try {
    writeFileSync(output, rendered);
  } catch (err) {
    process.stderr.write(`pgvigil report: -o ${output}: cannot write it (${(err as Error).message})\n`);
    return EXIT.FAILURE;
  }
  return EXIT.OK;
}
