/**
 * REPACK runs as the server log shows them, for a log without samples (`pgvigil analyze --rules`
 * over an old log) and to tell one run of a session from the next. A run is one execution of one
 * REPACK statement by one session, identified by its pid and its start.
 *
 * What the log shows of a run (PostgreSQL 19; pg-messages.md §6.2, §9.5, §13.5):
 * - its start: the `statement: REPACK ...` line (log_statement = ddl or all: 19rc1 logs REPACK and
 *   CLUSTER at ddl, VACUUM FULL only at all), or a `duration: N ms` line at its end (start = end - N);
 * - lines of the run carrying `STATEMENT: REPACK ...` (lock waits, lock_timeout, deadlock,
 *   statement_timeout), which prove it ran then without giving its start;
 * - its end: the `duration:` line (log_min_duration_statement / log_duration), an ERROR or FATAL of
 *   the session, the session's next statement, a crash of its backend or a server restart. A
 *   successful REPACK logs nothing when it ends without duration logging, so a run with no end in
 *   the log is "still running at the end of the log" only as far as the log can tell.
 *
 * Sessions are found by their REPACK lines (statement, STATEMENT lines, crash DETAIL); their other
 * lines are then read per pid. A REPACK logged only by `duration: ... statement: REPACK` at its end
 * (log_min_duration_statement without log_statement) is not looked for across every session's
 * lines: a rule evaluated while it ran could not have seen that line yet, and a rule does not need
 * a run that ended well.
 *
 * Glossary
 * - exact start: the statement line, or a duration line's end minus its duration; otherwise the
 *   start is the earliest the log proves (a lock wait's start), a lower bound of nothing.
 */
import type { EventKind } from '../domain/index.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { tableCommandOf } from './statements.js';

export type RunEnd = 'finished' | 'failed' | 'killed' | 'server_restart' | 'next_statement';

export interface LogRun {
  target: string;
  pid: number;
  database: string | null;
  statement: string | null;
  /** The table as the statement names it (normalised), null when it names none. */
  relation: string | null;
  concurrently: boolean;
  startMs: number;
  startExact: boolean;
  /** The last event of the run seen in the log. */
  lastSeenMs: number;
  /** null: no end in the log up to the view's instant. */
  endMs: number | null;
  end: RunEnd | null;
  /** The event that ended the run (its error, its duration line, the crash). */
  endEvent: RuleEvent | null;
  /** Its last lock wait line: a `waiting` one for AccessExclusiveLock at its end means it failed at the swap. */
  lastWait: RuleEvent<'lock_wait'> | null;
  eventIds: number[];
}

/** Kinds whose STATEMENT shows a session was running REPACK at that moment. */
const STATEMENT_KINDS = ['lock_wait', 'lock_timeout', 'deadlock', 'statement_timeout'] as const satisfies readonly EventKind[];
/** Of those, the ones that end the statement. */
const FAILURES: ReadonlySet<EventKind> = new Set(['lock_timeout', 'deadlock', 'statement_timeout']);
const ERROR_LEVELS = new Set(['ERROR', 'FATAL', 'PANIC']);
const RESTART_PHASES = new Set(['terminating_others', 'reinitializing', 'shutdown_requested', 'shut_down']);
const DURATION = /^duration: (\d+(?:\.\d+)?) ms(?: {2}(?:statement|execute [^:]*): ([\s\S]*))?$/;

/**
 * Runs already read from one view (one evaluation instant), by target and window: several rules
 * ask for the same runs in one evaluation. Callers get copies of the array; the runs are not
 * changed by any of them.
 */
const runsOfView = new WeakMap<RuleView, Map<string, LogRun[]>>();

/** Every REPACK run of `target` the log shows between sinceMs and the view's instant, oldest first. */
export function logRepackRuns(view: RuleView, target: string, sinceMs: number): LogRun[] {
  let known = runsOfView.get(view);
  if (!known) runsOfView.set(view, (known = new Map()));
  const key = `${target}\u0000${sinceMs}`;
  let runs = known.get(key);
  if (!runs) known.set(key, (runs = readRuns(view, target, sinceMs)));
  return [...runs];
}

function readRuns(view: RuleView, target: string, sinceMs: number): LogRun[] {
  const q = { sinceMs, target };
  const marks: RuleEvent[] = [
    ...view.events('ddl', q).filter((e) => e.details.command === 'REPACK'),
    ...STATEMENT_KINDS.flatMap((kind) => view.events(kind, q) as RuleEvent[]).filter((e) => isRepack(statementOf(e))),
    ...view.events('server_crash', q).filter((e) => isRepack(e.details.statement)),
  ];
  const pids = [...new Set(marks.map((e) => pidOf(e)).filter((p): p is number => p !== null))];
  const restarts = view.events('server_restart', q).filter((e) => RESTART_PHASES.has(e.details.phase));
  const runs: LogRun[] = [];
  for (const pid of pids) {
    const own: RuleEvent[] = [
      ...view.events('ddl', { ...q, pid }),
      ...STATEMENT_KINDS.flatMap((kind) => view.events(kind, { ...q, pid }) as RuleEvent[]),
      ...view.events('generic', { ...q, pid }),
      ...view.events('server_crash', q).filter((e) => e.details.pid === pid),
      ...restarts,
    ];
    own.sort((a, b) => a.tsMs - b.tsMs || a.id - b.id);
    runs.push(...runsOfSession(target, pid, own));
  }
  return runs.sort((a, b) => a.startMs - b.startMs);
}

/** Walks one session's events in time order, opening a run at each REPACK and closing it at its end. */
function runsOfSession(target: string, pid: number, events: RuleEvent[]): LogRun[] {
  const runs: LogRun[] = [];
  let open: LogRun | null = null;
  const close = (e: RuleEvent, end: RunEnd) => {
    if (!open) return;
    open.endMs = e.tsMs;
    open.end = end;
    open.endEvent = e;
    open.lastSeenMs = e.tsMs;
    if (end !== 'next_statement' && end !== 'server_restart') open.eventIds.push(e.id);
    open = null;
  };
  const start = (e: RuleEvent, statement: string | null, startMs: number, exact: boolean): LogRun => {
    const command = tableCommandOf(statement);
    const run: LogRun = {
      target, pid, database: e.database, statement, relation: command?.relation ?? null, concurrently: command?.concurrently ?? false,
      startMs, startExact: exact, lastSeenMs: e.tsMs, endMs: null, end: null, endEvent: null, lastWait: null, eventIds: [e.id],
    };
    runs.push(run);
    return run;
  };
  for (const e of events) {
    if (isKind(e, 'server_restart')) {
      close(e, 'server_restart');
    } else if (isKind(e, 'ddl')) {
      close(e, 'next_statement');
      if (e.details.command === 'REPACK') open = start(e, repackStatementOf(e), e.tsMs, true);
    } else if (isKind(e, 'server_crash')) {
      // The crash DETAIL names what the backend ran: another statement means the REPACK had ended.
      if (e.details.statement !== null && !isRepack(e.details.statement)) {
        close(e, 'next_statement');
        continue;
      }
      open ??= start(e, e.details.statement, e.tsMs, false);
      close(e, 'killed');
    } else if (isKind(e, 'generic')) {
      const duration = DURATION.exec(e.message);
      if (duration) {
        const statement = duration[2] ?? null;
        const startMs = e.tsMs - Number(duration[1]);
        if (statement !== null && !isRepack(statement)) {
          close(e, 'next_statement');
          continue;
        }
        open ??= start(e, statement, startMs, true);
        open.startMs = startMs;
        open.startExact = true;
        close(e, 'finished');
      } else if (open && ERROR_LEVELS.has(e.level)) {
        close(e, 'failed');
      }
    } else {
      // A lock wait or failure whose STATEMENT is this session's REPACK (or has none while one runs).
      const statement = statementOf(e);
      if (!isRepack(statement) && !(statement === null && open !== null)) {
        if (open && FAILURES.has(e.kind)) close(e, 'failed');
        continue;
      }
      const waitStartMs = isKind(e, 'lock_wait') ? e.tsMs - (e.details.wait_ms ?? 0) : e.tsMs;
      if (!open) open = start(e, statement, waitStartMs, false);
      else if (e.id !== open.eventIds[0]) open.eventIds.push(e.id);
      open.lastSeenMs = e.tsMs;
      if (isKind(e, 'lock_wait')) open.lastWait = e;
      if (FAILURES.has(e.kind)) close(e, 'failed');
    }
  }
  return runs;
}

/** The statement of a ddl event is not kept; rebuild what the rules read from its details. */
function repackStatementOf(e: RuleEvent<'ddl'>): string {
  const options = e.details.concurrently ? ' (CONCURRENTLY)' : '';
  return `REPACK${options}${e.details.relation === null ? '' : ` ${e.details.relation}`}`;
}

function statementOf(e: RuleEvent): string | null {
  const details = e.details as { statement?: string | null };
  return details.statement ?? null;
}

function isRepack(statement: string | null): boolean {
  return tableCommandOf(statement)?.command === 'REPACK';
}

function pidOf(e: RuleEvent): number | null {
  return isKind(e, 'server_crash') ? e.details.pid : e.pid;
}

export function isKind<K extends EventKind>(e: RuleEvent, kind: K): e is RuleEvent<K> {
  return e.kind === kind;
}
