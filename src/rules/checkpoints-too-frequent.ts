/**
 * checkpoints-too-frequent: WAL fills max_wal_size so fast that checkpoints follow each other
 * closer than checkpoint_warning (30 s), for a sustained time: at least `minEvents` (3) of the
 * server's own `checkpoints are occurring too frequently (N seconds apart)` lines in the last
 * `windowMs` (30 min), the first and the last at least `sustainMs` (10 min) apart. Says to raise
 * max_wal_size, and by how much when the WAL rate is known.
 *
 * Warning: every checkpoint writes every dirty buffer, and the first change of each page after it
 * writes a full-page image into WAL, so checkpoints this close multiply the I/O and the WAL
 * itself; it hurts as long as it lasts.
 *
 * Quiet on a normal day: a bulk load or a VACUUM (FREEZE) of a large table may fill max_wal_size a
 * few times in a row, logging these lines for a minute or two; that is a burst, not a
 * configuration too small for the workload. A manual CHECKPOINT, pg_basebackup's or CREATE
 * DATABASE's checkpoint are requested too (pg_stat_checkpointer's num_requested counts them) but
 * never logged as too frequent: only checkpoints WAL volume started are.
 *
 * From the log alone (checkpoint_warning lines are logged at LOG whatever log_checkpoints says),
 * so `analyze --rules` and a log backlog judge it too. The counters and settings, when sampled,
 * are evidence and sizing: requested against scheduled checkpoints, WAL written per second.
 */
import type { RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, SLOW_COLLECTOR_MAX_AGE_MS, type CitedSeries } from './sample-evidence.js';
import { formatBytes, formatCount, formatDuration, formatTime } from './summary-format.js';

export const ID = 'checkpoints-too-frequent';

const REQUESTED = 'pg_stat_checkpointer_num_requested_total';
const TIMED = 'pg_stat_checkpointer_num_timed_total';
// PG 14+: pg_stat_wal.
const WAL_BYTES = 'pg_stat_wal_wal_bytes_total';
const MAX_WAL_SIZE = 'pg_settings_max_wal_size_bytes';
const CHECKPOINT_TIMEOUT = 'pg_settings_checkpoint_timeout_seconds';
const COMPLETION_TARGET = 'pg_settings_checkpoint_completion_target';
/** checkpoint_completion_target's default since 14 (0.5 before). */
const DEFAULT_COMPLETION_TARGET = 0.9;

export interface CheckpointsTooFrequentOptions {
  /** `too frequently` lines in the window. */
  minEvents: number;
  /** The first and the last of them at least this far apart: a burst is no configuration. */
  sustainMs: number;
  windowMs: number;
}

export const DEFAULTS: CheckpointsTooFrequentOptions = { minEvents: 3, sustainMs: 600_000, windowMs: 1_800_000 };

type Checkpoint = RuleEvent<'checkpoint'>;

export function checkpointsTooFrequent(options: CheckpointsTooFrequentOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Checkpoints started by WAL volume closer than checkpoint_warning, sustained: max_wal_size is too small for the write rate.',
    evaluate(view, nowMs) {
      const byTarget = new Map<string, Checkpoint[]>();
      for (const e of view.events('checkpoint', { sinceMs: nowMs - options.windowMs })) {
        if (e.details.phase !== 'too_frequent') continue;
        byTarget.set(e.target, [...(byTarget.get(e.target) ?? []), e]);
      }
      const findings: Finding[] = [];
      for (const [target, lines] of byTarget) {
        const first = lines[0]!;
        const last = lines.at(-1)!;
        if (lines.length >= options.minEvents && last.tsMs - first.tsMs >= options.sustainMs) findings.push(finding(view, target, lines, nowMs, options));
      }
      return findings;
    },
  };
}

function finding(view: RuleView, target: string, lines: Checkpoint[], nowMs: number, o: CheckpointsTooFrequentOptions): Finding {
  const apart = lines.map((e) => e.details.seconds_apart).filter((s): s is number => s !== null).sort((a, b) => a - b);
  const median = apart[Math.floor(apart.length / 2)] ?? null;
  const sinceMs = nowMs - o.windowMs;
  const requested = counterRise(view, REQUESTED, target, sinceMs);
  const timed = counterRise(view, TIMED, target, sinceMs);
  const setting = (name: string) => view.latest(name, { target, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0];
  const maxWal = setting(MAX_WAL_SIZE);
  const advice = sizeAdvice(view, target, sinceMs, setting);
  const counted = requested && timed ? `; ${formatCount(requested.rise)} requested and ${formatCount(timed.rise)} scheduled checkpoints in ${formatDuration(o.windowMs)}` : '';
  return {
    dedupKey: findingKey(ID, target),
    target,
    labels: {},
    summary: `checkpoints on ${target} are occurring too frequently: ${lines.length} times since ${formatTime(lines[0]!.tsMs)}` +
      `${median === null ? '' : `, typically ${median} s apart`}${counted}: WAL fills max_wal_size` +
      `${maxWal?.value != null ? ` (${formatBytes(maxWal.value)})` : ''} long before checkpoint_timeout; ` +
      `raise max_wal_size${advice ? ` to about ${formatBytes(advice.suggestedBytes)} (${formatBytes(advice.walPerSecond)}/s of WAL over checkpoint_timeout ${formatDuration(advice.timeoutSeconds * 1000)}, with room for checkpoint_completion_target)` : ''}`,
    evidence: evidenceOf({
      eventIds: lines.map((e) => e.id),
      series: [requested?.cited, timed?.cited, maxWal && citeSample(maxWal)].filter((s): s is CitedSeries => s !== undefined),
      facts: {
        too_frequent_lines: lines.length, median_seconds_apart: median, requested_checkpoints: requested?.rise ?? null,
        scheduled_checkpoints: timed?.rise ?? null, max_wal_size_bytes: maxWal?.value ?? null, suggested_max_wal_size_bytes: advice?.suggestedBytes ?? null,
      },
    }),
  };
}

/** How much a counter rose since `sinceMs`, with its newest sample cited; null without two samples. */
function counterRise(view: RuleView, name: string, target: string, sinceMs: number): { rise: number; cited: CitedSeries } | null {
  const s = view.series(name, { target, sinceMs })[0];
  const values = s?.points.filter((p) => p.value !== null) ?? [];
  const first = values[0];
  const last = values.at(-1);
  if (!s || !first || !last || first === last) return null;
  // A counter that went down was reset (a restart, pg_stat_reset_shared): no rise to tell.
  if (last.value! < first.value!) return null;
  return { rise: last.value! - first.value!, cited: { name, labels: s.labels, value: last.value, tsMs: last.tsMs } };
}

/**
 * A checkpoint is started by WAL once max_wal_size / (1 + checkpoint_completion_target) of WAL
 * was written since the last one (xlog.c's CalculateCheckPointSegments); for checkpoint_timeout
 * to start them instead, max_wal_size must hold (1 + target) times what is written per timeout.
 * Rounded up to the next GB.
 */
function sizeAdvice(view: RuleView, target: string, sinceMs: number, setting: (name: string) => { value: number | null } | undefined):
  { suggestedBytes: number; walPerSecond: number; timeoutSeconds: number } | null {
  const wal = view.series(WAL_BYTES, { target, sinceMs })[0]?.points.filter((p) => p.value !== null) ?? [];
  const first = wal[0];
  const last = wal.at(-1);
  const timeoutSeconds = setting(CHECKPOINT_TIMEOUT)?.value ?? null;
  if (!first || !last || last.tsMs <= first.tsMs || last.value! < first.value! || timeoutSeconds === null) return null;
  const walPerSecond = (last.value! - first.value!) / ((last.tsMs - first.tsMs) / 1000);
  const completion = setting(COMPLETION_TARGET)?.value ?? DEFAULT_COMPLETION_TARGET;
  const gb = 1024 ** 3;
  const suggestedBytes = Math.ceil((walPerSecond * timeoutSeconds * (1 + completion)) / gb) * gb;
  return walPerSecond > 0 ? { suggestedBytes, walPerSecond, timeoutSeconds } : null;
}
