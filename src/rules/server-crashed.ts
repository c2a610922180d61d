/**
 * server-crashed: a server process died in a way the postmaster treats as a crash (killed by a
 * signal, or an exit code other than 0 and 1): every other connection is terminated and the server
 * reinitialises (pg-messages.md §4.1). Signal 9 (`Killed`) on Linux is almost always the kernel's
 * OOM killer; a REPACK (CONCURRENTLY) keeps ~50 bytes per concurrently changed row in memory with
 * nothing bounding it, so a big one can be what the OOM killer hit (seed 000_ddfba2eacd9de59b.txt).
 *
 * Or the whole server died at once (a host reset, a kill -9 of the postmaster, a cgroup OOM kill
 * of the container): nobody lived to log it. The next start tells: "database system was not
 * properly shut down; automatic recovery in progress" with no crash, reset or shutdown line before
 * it. (The postmaster's own crash reset logs that line too, after "reinitializing"; an immediate
 * shutdown too, after its request; a standby's start from pg_basebackup logs "was interrupted"
 * and enters standby mode, never that line. So a killed standby is not seen this way.)
 *
 * A crash of a backend running REPACK is one cause with two losses: this alert names the REPACK
 * run it ended and the work thrown away, and repack-failed stays quiet about it, so one OOM kill
 * pages once, as the crash it is.
 *
 * Critical. One alert per server: it stays open for `activeForMs` after the last crash (it is news,
 * not a state), and a crash within that time of the one before joins it: a crash loop is one
 * page whose count follows, not a page per crash.
 */
import type { Evidence } from '../domain/index.js';
import { failedRun, describeRun, runStartMs, type RepackRun } from './repack-runs.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Rule } from './rule.js';
import { formatDuration, formatTime, quoteStatement } from './summary-format.js';
import { tableCommandOf } from './statements.js';

export const ID = 'server-crashed';

export interface ServerCrashedOptions {
  activeForMs: number;
}

export const DEFAULTS: ServerCrashedOptions = { activeForMs: 30 * 60_000 };

const SIGKILL = 9;
/** How far before the crash the killed REPACK's start is looked for (as repack-failed does). */
const REPACK_LOOKBACK_MS = 24 * 3_600_000;

/** How far back a crash loop's earlier crashes, and what came before a start, are looked for. */
const LOOKBACK_MS = 24 * 3_600_000;

/** What, logged before a start's automatic recovery, means the server did not just die: a crash reset, a shutdown. */
const NOT_A_DEATH: ReadonlySet<string> = new Set(['terminating_others', 'reinitializing', 'not_restarting', 'shutdown_requested', 'shut_down']);

type Crash = { kind: 'process'; e: RuleEvent<'server_crash'> } | { kind: 'server'; e: RuleEvent<'server_restart'> };

export function serverCrashed(options: ServerCrashedOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'critical',
    description: 'A server process crashed (e.g. killed by the OOM killer), or the whole server died without a word (seen at its next start): PostgreSQL terminated every connection and restarted.',
    evaluate(view, nowMs) {
      const sinceMs = nowMs - LOOKBACK_MS;
      const crashes: Crash[] = [
        ...view.events('server_crash', { sinceMs }).map((e) => ({ kind: 'process' as const, e })),
        ...wholeServerDeaths(view, sinceMs).map((e) => ({ kind: 'server' as const, e })),
      ].sort((a, b) => a.e.tsMs - b.e.tsMs);
      const byTarget = new Map<string, Crash[]>();
      for (const c of crashes) byTarget.set(c.e.target, [...(byTarget.get(c.e.target) ?? []), c]);
      return [...byTarget].flatMap(([target, ofTarget]) => {
        const loop = crashLoop(ofTarget, options.activeForMs);
        if (nowMs - loop[loop.length - 1]!.e.tsMs > options.activeForMs) return [];
        const latest = loop[loop.length - 1]!;
        const one = latest.kind === 'process' ? processCrash(view, latest.e) : serverDeath(view, latest.e);
        const count = loop.length > 1 ? `crash loop: ${loop.length} crashes since ${formatTime(loop[0]!.e.tsMs)}; the latest: ` : '';
        return [{
          dedupKey: findingKey(ID, target),
          target,
          labels: one.labels,
          summary: `${count}${one.summary}`,
          evidence: evidenceOf({
            eventIds: [...loop.slice(0, -1).map((c) => c.e.id), ...one.eventIds],
            series: one.series,
            facts: { ...one.facts, crashes: loop.length, first_crash_ms: loop[0]!.e.tsMs },
          }),
        }];
      });
    },
  };
}

/** The newest crash and those before it, each within activeForMs of the next. */
function crashLoop(crashes: Crash[], activeForMs: number): Crash[] {
  let start = crashes.length - 1;
  while (start > 0 && crashes[start]!.e.tsMs - crashes[start - 1]!.e.tsMs <= activeForMs) start--;
  return crashes.slice(start);
}

interface OneCrash {
  labels: Record<string, string>;
  summary: string;
  eventIds: number[];
  series: Evidence['series'];
  facts: Record<string, string | number | null>;
}

function processCrash(view: RuleView, e: RuleEvent<'server_crash'>): OneCrash {
  const d = e.details;
  const aftermath = restartAfter(view, e);
  const repack = killedRepack(view, e);
  return {
    labels: { process_type: d.worker_type ?? d.process_type, pid: String(d.pid) },
    summary: `${processName(e)} pid ${d.pid} ${howItDied(e)}${running(e)}; ${repack ? `${repack.text}; ` : ''}${aftermath.text}`,
    eventIds: [...(repack?.run.eventIds ?? []), e.id, ...aftermath.eventIds],
    series: repack?.run.series ?? [],
    facts: {
      process_type: d.process_type, worker_type: d.worker_type, pid: d.pid, signal: d.signal, signal_name: d.signal_name,
      exit_code: d.exit_code, statement: d.statement, ...repack?.facts,
    },
  };
}

/** The starts whose automatic recovery followed no crash, reset or shutdown line: the whole server had died. */
function wholeServerDeaths(view: RuleView, sinceMs: number): Array<RuleEvent<'server_restart'>> {
  const restarts = view.events('server_restart', { sinceMs: sinceMs - LOOKBACK_MS });
  const crashes = view.events('server_crash', { sinceMs: sinceMs - LOOKBACK_MS });
  return restarts.filter((r) => r.details.phase === 'automatic_recovery' && r.tsMs >= sinceMs).filter((r) => {
    const before = (e: { target: string; tsMs: number }) => e.target === r.target && e.tsMs <= r.tsMs;
    const lastRestart = restarts.filter((e) => before(e) && e !== r && e.details.phase !== 'interrupted' && e.details.phase !== 'automatic_recovery').at(-1);
    const lastCrash = crashes.filter(before).at(-1);
    if (lastCrash && (!lastRestart || lastCrash.tsMs >= lastRestart.tsMs)) return false;
    return !lastRestart || !NOT_A_DEATH.has(lastRestart.details.phase);
  });
}

function serverDeath(view: RuleView, e: RuleEvent<'server_restart'>): OneCrash {
  const interrupted = view.events('server_restart', { sinceMs: e.tsMs - 60_000, target: e.target })
    .filter((r) => r.details.phase === 'interrupted' && r.tsMs <= e.tsMs).at(-1);
  const lastUp = interrupted?.details.last_known_up ?? null;
  const aftermath = view.events('server_restart', { sinceMs: e.tsMs, target: e.target }).find((r) => r.details.phase === 'ready');
  return {
    labels: { process_type: 'postmaster', pid: '' },
    summary: 'the whole server died without logging why (a host reset, a kill -9 of the postmaster, or an OOM kill of the whole ' +
      `container): no crash or shutdown line before its start at ${formatTime(e.tsMs)}, which found it not properly shut down` +
      `${lastUp ? ` (last known up at ${lastUp})` : ''} and ran crash recovery; ` +
      (aftermath ? 'it accepts connections again' : 'it is still recovering'),
    eventIds: [...(interrupted ? [interrupted.id] : []), e.id, ...(aftermath ? [aftermath.id] : [])],
    series: [],
    facts: { process_type: 'postmaster', pid: null, last_known_up: lastUp },
  };
}

function processName(e: RuleEvent<'server_crash'>): string {
  const d = e.details;
  return d.worker_type ? `background worker "${d.worker_type}"` : d.process_type;
}

function howItDied(e: RuleEvent<'server_crash'>): string {
  const d = e.details;
  if (d.signal === SIGKILL) return `was killed by signal 9 (${d.signal_name ?? 'Killed'}: on Linux almost always the OOM killer)`;
  if (d.signal !== null) return `was terminated by signal ${d.signal}${d.signal_name ? ` (${d.signal_name})` : ''}`;
  if (d.exit_code !== null) return `exited with exit code ${d.exit_code}`;
  if (d.exception !== null) return `was terminated by exception ${d.exception}`;
  return 'died';
}

function running(e: RuleEvent<'server_crash'>): string {
  const statement = e.details.statement;
  if (statement === null) return '';
  const repack = tableCommandOf(statement)?.command === 'REPACK' && e.details.signal === SIGKILL
    ? ' (REPACK keeps about 50 bytes per concurrently changed row in memory)'
    : '';
  return ` while running: ${quoteStatement(statement)}${repack}`;
}

/**
 * The REPACK run the crashed process was executing, from the crash DETAIL, the session's logged
 * statement or its sampled slot (repack-runs.ts), and the work the crash threw away.
 */
function killedRepack(view: RuleView, e: RuleEvent<'server_crash'>): { run: RepackRun; text: string; facts: Record<string, string | number | null> } | null {
  const { run, logged } = failedRun(view, e, e.details.pid, REPACK_LOOKBACK_MS);
  if (!run) return null;
  const startMs = run.logOnly && run.xactStartMs === null ? null : runStartMs(run);
  const command = logged && !logged.concurrently ? 'REPACK' : 'REPACK (CONCURRENTLY)';
  const lost = startMs === null ? 'all its work lost' : `${formatDuration(e.tsMs - startMs)} of work lost`;
  return {
    run,
    text: `its ${describeRun(run, command)} was rolled back, ${lost}`,
    facts: {
      repack_relation: run.table ? [run.table.schema, run.table.table].filter((p) => p !== null).join('.') : null,
      repack_work_started_ms: startMs,
      repack_work_lost_seconds: startMs === null ? null : Math.round((e.tsMs - startMs) / 1000),
    },
  };
}

/** What the postmaster did next, from the server_restart lines that followed. */
function restartAfter(view: RuleView, e: RuleEvent<'server_crash'>): { text: string; eventIds: number[] } {
  const after = view.events('server_restart', { sinceMs: e.tsMs, target: e.target });
  const find = (phase: string) => after.find((r) => r.details.phase === phase);
  const ready = find('ready');
  if (ready) return { text: 'the server terminated every connection, recovered and accepts connections again', eventIds: [ready.id] };
  const stopped = find('not_restarting');
  if (stopped) return { text: 'the server terminated every connection and stayed down (restart_after_crash is off)', eventIds: [stopped.id] };
  const reinit = find('reinitializing') ?? find('terminating_others');
  return { text: 'the server terminated every connection and is reinitializing', eventIds: reinit ? [reinit.id] : [] };
}
