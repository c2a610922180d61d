/**
 * wal-archiving-failing: the archiver has been failing to archive a WAL segment for `sustainMs`
 * (10 min): in every pg_stat_archiver sample since, the last failure is newer than the last
 * success, nothing was archived, and failed_count kept rising (the archiver retries three times a
 * second apart, then every minute). Names the segment, how many wait behind it, and the failure
 * as the archiver logged it (`archive command failed with exit code N`, with `The failed archive
 * command was: ...` in its DETAIL) when the log has it.
 *
 * Error: every unarchived segment stays in pg_wal until archive_command succeeds, so pg_wal grows
 * until the disk fills and the server stops; meanwhile backups taken with the archive cannot be
 * recovered past the last archived segment. It will not fix itself.
 *
 * Quiet on a normal day: a busy server archives a segment every few seconds to minutes and a
 * failure now and then (a network blip the next retry survives) is followed by a success within
 * the minute; a quiet server archives nothing and fails nothing. archive_mode = off leaves
 * pg_stat_archiver at zero. The two ages are the server's own (now() - last_*_time), so pgvigil's
 * clock never decides which came last.
 */
import type { RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, type CitedSeries } from './sample-evidence.js';
import { formatDuration, heldFor, plural } from './summary-format.js';
import { trailingRun } from './trailing-run.js';

export const ID = 'wal-archiving-failing';

const ARCHIVED = 'pg_stat_archiver_archived_count_total';
const FAILED = 'pg_stat_archiver_failed_count_total';
const ARCHIVED_AGE = 'pg_stat_archiver_last_archived_age_seconds';
const FAILED_AGE = 'pg_stat_archiver_last_failed_age_seconds';
const READY = 'pg_stat_archiver_ready_wal_files';
const INFO = 'pg_stat_archiver_info';

/**
 * What the archiver logs when archive_command fails (shell_archive.c; pgarch.c before 15), at LOG,
 * or FATAL when the shell could not run it (exit 126/127) or a signal ended it.
 */
const FAILURE_LINE = /^archive command (failed with exit code \d+|was terminated by (signal|exception) .*|exited with unrecognized status \d+)$/;

/** archive_command is quoted this short in the summary; the evidence keeps it whole. */
const COMMAND_CHARS = 120;

export interface WalArchivingFailingOptions {
  /** Failing in every sample for this long, with failed_count rising and nothing archived. */
  sustainMs: number;
  /** How far back the samples are read to say since when it fails ("for more than 1 h" beyond). */
  lookbackMs: number;
  /** How far back the archiver's log lines are read for the cause: it retries at least every minute. */
  logWindowMs: number;
}

export const DEFAULTS: WalArchivingFailingOptions = { sustainMs: 600_000, lookbackMs: 3_600_000, logWindowMs: 180_000 };

/** One pg_stat_archiver sample: every column of one collector run. */
interface ArchiverSample {
  tsMs: number;
  archived: number | null;
  failed: number | null;
  archivedAgeSeconds: number | null;
  failedAgeSeconds: number | null;
}

export function walArchivingFailing(options: WalArchivingFailingOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'error',
    description: 'WAL archiving has failed for a sustained time: nothing archived, failures rising; names the segment and archive_command\'s failure.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const latest of view.latest(FAILED_AGE)) {
        const f = failing(view, latest.target, nowMs, options);
        if (f) findings.push(f);
      }
      return findings;
    },
  };
}

function failing(view: RuleView, target: string, nowMs: number, o: WalArchivingFailingOptions): Finding | null {
  const samples = archiverSamples(view, target, nowMs - o.lookbackMs);
  const streak = failingStreak(samples);
  const first = streak[0];
  const last = streak.at(-1);
  if (!first || !last || nowMs - first.tsMs < o.sustainMs) return null;
  if (first.failed === null || last.failed === null || last.failed <= first.failed) return null;

  const info = view.latest(INFO, { target })[0];
  const ready = view.latest(READY, { target })[0];
  const wal = info?.labels.last_failed_wal || null;
  const cause = view.events('generic', { target, sinceMs: nowMs - o.logWindowMs }).filter((e) => FAILURE_LINE.test(e.message)).at(-1);
  const command = cause?.details.detail?.replace(/^The failed archive command was: /, '') ?? null;
  const since = heldFor(first.tsMs, samples[0]?.tsMs, nowMs, o.lookbackMs);
  const waiting = ready?.value ? `; ${plural(ready.value, 'WAL file')} wait in pg_wal` : '';
  const lastSuccess = last.archivedAgeSeconds === null ? '; nothing archived since the statistics were reset'
    : `; last success ${formatDuration(last.archivedAgeSeconds * 1000)} ago`;
  const logged = cause ? `; the archiver logged "${cause.message}"${command === null ? '' : ` for ${quoteCommand(command)}`}` : '';
  const cited: CitedSeries[] = [ARCHIVED, FAILED, ARCHIVED_AGE, FAILED_AGE]
    .flatMap((name) => view.latest(name, { target }).map(citeSample));
  return {
    dedupKey: findingKey(ID, target),
    target,
    labels: {},
    summary: `WAL archiving on ${target} has failed ${since}: ${wal ?? 'a WAL segment'} is not archived, ` +
      `${plural(last.failed - first.failed, 'failed attempt')} in that time${waiting}${lastSuccess}${logged}: pg_wal grows until archive_command succeeds`,
    evidence: evidenceOf({
      eventIds: cause ? [cause.id] : [],
      series: [...cited, ...(info ? [citeSample(info)] : []), ...(ready ? [citeSample(ready)] : [])],
      facts: {
        failing_since_ms: first.tsMs, last_failed_wal: wal, failed_attempts: last.failed - first.failed,
        ready_wal_files: ready?.value ?? null, last_archived_age_seconds: last.archivedAgeSeconds,
        failure: cause?.message ?? null, archive_command: command,
      },
    }),
  };
}

/** archive_command as logged, on one line and cut: it can be long (a pgBackRest or WAL-G invocation). It is no SQL: nothing to redact. */
function quoteCommand(command: string): string {
  const flat = command.replace(/\s+/g, ' ').trim();
  return `\`${flat.length <= COMMAND_CHARS ? flat : `${flat.slice(0, COMMAND_CHARS - 1)}…`}\``;
}

/** The samples of one target's archiver, oldest first, joined by collector run. */
function archiverSamples(view: RuleView, target: string, sinceMs: number): ArchiverSample[] {
  const byTs = new Map<number, ArchiverSample>();
  const fill = (name: string, key: Exclude<keyof ArchiverSample, 'tsMs'>) => {
    for (const s of view.series(name, { sinceMs, target })) {
      for (const p of s.points) {
        const sample = byTs.get(p.tsMs) ?? { tsMs: p.tsMs, archived: null, failed: null, archivedAgeSeconds: null, failedAgeSeconds: null };
        sample[key] = p.value;
        byTs.set(p.tsMs, sample);
      }
    }
  };
  fill(ARCHIVED, 'archived');
  fill(FAILED, 'failed');
  fill(ARCHIVED_AGE, 'archivedAgeSeconds');
  fill(FAILED_AGE, 'failedAgeSeconds');
  return [...byTs.values()].sort((a, b) => a.tsMs - b.tsMs);
}

/**
 * The newest run of samples in which the archiver was failing (its last failure newer than its last
 * success, or no success at all) and archived nothing (archived_count unchanged), oldest first.
 */
function failingStreak(samples: readonly ArchiverSample[]): ArchiverSample[] {
  const archived = samples.at(-1)?.archived;
  return trailingRun(samples, (s) => isFailing(s) && s.archived === archived);
}

function isFailing(s: ArchiverSample): boolean {
  if (s.failedAgeSeconds === null) return false;
  return s.archivedAgeSeconds === null || s.failedAgeSeconds < s.archivedAgeSeconds;
}
