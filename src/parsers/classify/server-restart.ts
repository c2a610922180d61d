/**
 * The server's stop / crash-reset / recovery / start sequence (postmaster.c, xlog.c,
 * xlogrecovery.c 15+; LOG, 13-19), one phase per line:
 * terminating_others -> reinitializing (or not_restarting) -> interrupted -> automatic_recovery ->
 * redo_start -> redo_done / redo_not_required -> ready; shutdown_requested -> shut_down; and a
 * standby's promotion: promote_requested -> redo_done -> new_timeline -> ready.
 */
import type { ServerRestartDetails, ServerRestartPhase } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { LSN_PATTERN, parseRusage } from './fields.js';

type Fill = (g: RegExpExecArray, d: ServerRestartDetails) => void;

const none: Fill = () => undefined;

const FORMS: ReadonlyArray<readonly [RegExp, ServerRestartPhase, Fill]> = [
  [/^terminating any other active server processes$/, 'terminating_others', none],
  [/^all server processes terminated; reinitializing$/, 'reinitializing', none],
  // 14-16 unquoted, 17+ quoted GUC name; 13 says "aborting startup ...".
  [/^(?:shutting down because "?restart_after_crash"? is off|shutting down due to startup process failure|aborting startup due to startup process failure)$/, 'not_restarting', none],
  [/^database system (?:was interrupted|shutdown was interrupted); last known up at (.+)$/, 'interrupted', (g, d) => (d.last_known_up = g[1] ?? null)],
  [/^database system was interrupted while in recovery at (?:log time )?(.+)$/, 'interrupted', (g, d) => (d.last_known_up = g[1] ?? null)],
  [/^database system was not properly shut down; automatic recovery in progress$/, 'automatic_recovery', none],
  [new RegExp(`^redo starts at (${LSN_PATTERN})$`), 'redo_start', (g, d) => (d.lsn = g[1] ?? null)],
  // PG 14+: followed by " system usage: CPU: ...".
  [new RegExp(`^redo done at (${LSN_PATTERN})(?: system usage: (.*))?$`), 'redo_done', (g, d) => {
    d.lsn = g[1] ?? null;
    if (g[2] !== undefined) parseRusage(g[2], d);
  }],
  [/^redo is not required$/, 'redo_not_required', none],
  // 13: "read only", 14+: "read-only" (a standby).
  [/^database system is ready to accept (read[ -]only )?connections$/, 'ready', (g, d) => (d.read_only = g[1] !== undefined)],
  [/^received (smart|fast|immediate) shutdown request$/, 'shutdown_requested', (g, d) => {
    d.shutdown_mode = g[1] === 'smart' || g[1] === 'fast' || g[1] === 'immediate' ? g[1] : null;
  }],
  [/^database system is shut down$/, 'shut_down', none],
  // A standby promoted (pg_ctl promote, pg_promote()); xlogrecovery.c, xlog.c.
  [/^received promote request$/, 'promote_requested', none],
  [/^selected new timeline ID: (\d+)$/, 'new_timeline', (g, d) => (d.timeline_id = Number(g[1]))],
];

export function classifyServerRestart(message: string): Classification | null {
  for (const [pattern, phase, fill] of FORMS) {
    const g = pattern.exec(message);
    if (!g) continue;
    const details: ServerRestartDetails = {
      phase,
      lsn: null,
      last_known_up: null,
      read_only: null,
      shutdown_mode: null,
      cpu_user_s: null,
      cpu_system_s: null,
      elapsed_s: null,
    };
    fill(g, details);
    return { kind: 'server_restart', details };
  }
  return null;
}
