/**
 * server-crashed: a server process died in a way the postmaster treats as a crash (killed by a
 * signal, or an exit code other than 0 and 1): every other connection is terminated and the server
 * reinitialises (pg-messages.md §4.1). Signal 9 (`Killed`) on Linux is almost always the kernel's
 * OOM killer; a REPACK (CONCURRENTLY) keeps ~50 bytes per concurrently changed row in memory with
 * nothing bounding it, so a big one can be what the OOM killer hit (seed 000_ddfba2eacd9de59b.txt).
 *
 * A crash of a backend running REPACK is one cause with two losses: this alert names the REPACK
 * run it ended and the work thrown away, and repack-failed stays quiet about it, so one OOM kill
 * pages once, as the crash it is.
 *
 * Critical. The alert stays open for `activeForMs` after the crash: it is news, not a state.
 */
import { failedRun, describeRun, runStartMs, type RepackRun } from './repack-runs.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Rule } from './rule.js';
import { formatDuration } from './summary-format.js';
import { quoteStatement } from './summary-format.js';
import { tableCommandOf } from './statements.js';

export const ID = 'server-crashed';

export interface ServerCrashedOptions {
  activeForMs: number;
}

export const DEFAULTS: ServerCrashedOptions = { activeForMs: 30 * 60_000 };

const SIGKILL = 9;
/** How far before the crash the killed REPACK's start is looked for (as repack-failed does). */
const REPACK_LOOKBACK_MS = 24 * 3_600_000;

export function serverCrashed(options: ServerCrashedOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'critical',
    description: 'A server process crashed (e.g. killed by the OOM killer): PostgreSQL terminated every connection and restarted.',
    evaluate(view, nowMs) {
      return view.events('server_crash', { sinceMs: nowMs - options.activeForMs }).map((e) => {
        const d = e.details;
        const aftermath = restartAfter(view, e);
        const repack = killedRepack(view, e);
        return {
          dedupKey: findingKey(ID, e.target, d.pid, e.tsMs),
          target: e.target,
          labels: { process_type: d.worker_type ?? d.process_type, pid: String(d.pid) },
          summary: `${processName(e)} pid ${d.pid} ${howItDied(e)}${running(e)}; ${repack ? `${repack.text}; ` : ''}${aftermath.text}`,
          evidence: evidenceOf({
            eventIds: [...(repack?.run.eventIds ?? []), e.id, ...aftermath.eventIds],
            series: repack?.run.series ?? [],
            facts: {
              process_type: d.process_type, worker_type: d.worker_type, pid: d.pid, signal: d.signal, signal_name: d.signal_name,
              exit_code: d.exit_code, statement: d.statement, ...repack?.facts,
            },
          }),
        };
      });
    },
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
