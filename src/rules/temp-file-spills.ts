/**
 * temp-file-spills: statements whose sorts, hashes or materialisations did not fit in work_mem
 * (maintenance_work_mem for CREATE INDEX) and wrote temporary files, one alert per statement shape
 * (literals removed) per database, once `minBytes` (1 GB) of them were written within `windowMs`
 * (5 min). From PostgreSQL's `temporary file: path "...", size N` lines (log_temp_files), each
 * logged when its file is removed, with the STATEMENT that wrote it.
 *
 * Info: nothing fails, but the statement reads and writes its data to disk once more, competing
 * with everyone's I/O, and a few of them at once can fill the temp tablespace's disk.
 *
 * The files of one shape whose gaps are at most the window are one episode (cancel-episodes.ts):
 * the alert keeps one key while the statement keeps spilling, its summary counts the episode's
 * files and bytes, and it resolves a window after the last file. An episode counts once some
 * window of it holds `minBytes`: a report that spills 100 MB once an hour is not news.
 *
 * Quiet on a normal day: log_temp_files is off (-1) by default; where it is on, ordinary OLTP
 * statements fit in work_mem, and the nightly reports, CREATE INDEX or pg_dump's COPY that
 * spill stay under a GB per 5 minutes, or are worth knowing about (info, never paged).
 */
import type { RuleEvent } from './rule-view.js';
import { EPISODE_DEFAULTS, episodeEventIds, episodePids, episodeSpan, liveEpisodes, statementCause, statementCauseKey, type Episode } from './cancel-episodes.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { formatBytes, plural } from './summary-format.js';

export const ID = 'temp-file-spills';

export interface TempFileSpillsOptions {
  /** Bytes of temporary files one statement shape wrote within one window. */
  minBytes: number;
  /** Files of one statement at most this far apart are one episode; the bytes are counted per window this long. */
  windowMs: number;
}

export const DEFAULTS: TempFileSpillsOptions = { minBytes: 1024 ** 3, windowMs: EPISODE_DEFAULTS.windowMs };

type TempFile = RuleEvent<'temp_file'>;

export function tempFileSpills(options: TempFileSpillsOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'Statements writing temporary files (past work_mem) by the GB, one alert per statement shape and database, with the statement.',
    evaluate(view, nowMs) {
      return liveEpisodes(view, 'temp_file', options, nowMs, (e) => statementCauseKey(e.database, e.details.statement))
        .filter((episode) => heaviestWindowBytes(episode.events, options.windowMs) >= options.minBytes)
        .map(finding);
    },
  };
}

/** The most bytes of files logged within any `windowMs` of the (time-ordered) files. */
function heaviestWindowBytes(files: readonly TempFile[], windowMs: number): number {
  let heaviest = 0;
  let inWindow = 0;
  let first = 0;
  for (const file of files) {
    inWindow += file.details.size_bytes;
    while (file.tsMs - files[first]!.tsMs > windowMs) inWindow -= files[first++]!.details.size_bytes;
    heaviest = Math.max(heaviest, inWindow);
  }
  return heaviest;
}

function finding(episode: Episode<'temp_file'>): Finding {
  const files = episode.events;
  const last = files.at(-1)!;
  const statement = last.details.statement;
  const totalBytes = files.reduce((sum, f) => sum + f.details.size_bytes, 0);
  // Not Math.max(...): an episode's files are unbounded, a spread of 100k+ arguments throws.
  const largestBytes = files.reduce((max, f) => Math.max(max, f.details.size_bytes), 0);
  const { where, what, labels } = statementCause(episode, statement);
  return {
    dedupKey: findingKey(ID, episode.target, episode.key),
    target: episode.target,
    labels,
    summary: `${plural(files.length, 'temporary file')}, ${formatBytes(totalBytes)} written ${episodeSpan(episode)} ` +
      `(largest ${formatBytes(largestBytes)}) by ${what} in ${where}: its sorts or hashes outgrow work_mem ` +
      '(maintenance_work_mem for CREATE INDEX); raise it for this statement, or make it read fewer rows',
    evidence: evidenceOf({
      eventIds: episodeEventIds(episode),
      facts: {
        temp_files: files.length,
        total_bytes: totalBytes,
        largest_bytes: largestBytes,
        statement,
        database: last.database,
        pids: episodePids(episode),
      },
    }),
  };
}
