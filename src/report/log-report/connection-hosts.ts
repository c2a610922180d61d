/**
 * The client host of a login whose own lines do not name it: `connection authorized` and
 * `password authentication failed` carry no host (unless the prefix has %h or %r), but the same
 * backend's `connection received: host=...` came just before. A login's outcome follows its
 * received line within authentication_timeout (at most 10 minutes), so the two are linked by pid
 * within that window only.
 *
 * Folded apart (ranges, minutes), an outcome whose received line lies in the range before waits in
 * `awaiting` until the merge; only outcomes within the window of the range's first event can wait,
 * so a log without received lines (log_connections off, or PG 18's list without `receipt`) keeps
 * none, and every grouping links as one pass does. Hosts of received lines that never got an
 * outcome (a port probe, a client gone before its startup packet) leave once out of the window.
 *
 * Owns: the link. Never: what is counted per host (sessions.ts says, through `onHost`).
 */

/** authentication_timeout's maximum: the longest a login can take from received line to outcome. */
export const LOGIN_WINDOW_MS = 600_000;

/** What waits for a host: a login outcome, named by the caller (`connection`, `auth_failure`). */
export interface AwaitingHost {
  pid: number;
  ts_ms: number;
  outcome: string;
  /** The login goes on after this outcome (it was authorized): its host stays for a refusal that may follow. */
  keep: boolean;
}

export interface HostLinkState {
  /** The first event the state folded: outcomes within the window of it may find their host earlier. */
  first_ms: number | null;
  /** Per pid (as a string key), the host of its latest received line with no outcome yet. */
  received: Record<string, { host: string; ts_ms: number }>;
  /** Keys in `received`, so that stale ones are dropped every PRUNE_EVERY without counting them each time. */
  received_size: number;
  awaiting: AwaitingHost[];
}

const PRUNE_EVERY = 1_000;

export function emptyHostLink(): HostLinkState {
  return { first_ms: null, received: {}, received_size: 0, awaiting: [] };
}

/** Notes the first event time; every event folded into the section passes here first. */
export function seeEvent(state: HostLinkState, tsMs: number): void {
  state.first_ms ??= tsMs;
}

export function noteReceived(state: HostLinkState, pid: number | null, host: string, tsMs: number): void {
  if (pid === null) return;
  if (state.received[String(pid)] === undefined && ++state.received_size % PRUNE_EVERY === 0) forgetStale(state, tsMs);
  state.received[String(pid)] = { host, ts_ms: tsMs };
}

/**
 * The host of `pid`'s received line within the window before `tsMs`, taken unless `keep` (an
 * authorized login can still be refused: a missing role's FATAL comes after the authorized line);
 * undefined when the range before may hold it (the outcome then waits, and `onHost` is called at
 * the merge); null when no line names it.
 */
export function takeHost(state: HostLinkState, pid: number | null, tsMs: number, outcome: string, keep: boolean): string | null | undefined {
  if (pid === null) return null;
  const key = String(pid);
  const received = state.received[key];
  if (received !== undefined) {
    delete state.received[key];
    state.received_size--;
    if (tsMs - received.ts_ms > LOGIN_WINDOW_MS) return null;
    if (keep) noteReceived(state, pid, received.host, received.ts_ms);
    return received.host;
  }
  if (state.first_ms !== null && tsMs - state.first_ms <= LOGIN_WINDOW_MS) {
    state.awaiting.push({ pid, ts_ms: tsMs, outcome, keep });
    return undefined;
  }
  return null;
}

/** Drops received lines out of the window of `tsMs`: no later outcome can take them, so results do not change. */
function forgetStale(state: HostLinkState, tsMs: number): void {
  for (const [pid, received] of Object.entries(state.received)) {
    if (tsMs - received.ts_ms > LOGIN_WINDOW_MS) delete state.received[pid];
  }
  state.received_size = Object.keys(state.received).length;
}

/**
 * `later` after `earlier` (returned): later's waiting outcomes take earlier's received lines,
 * `onHost` hears each (null when earlier has none for it either: it keeps waiting only if earlier
 * may in turn have a range before it).
 */
export function mergeHostLink(
  earlier: HostLinkState, later: HostLinkState, onHost: (awaiting: AwaitingHost, host: string | null) => void,
): HostLinkState {
  for (const awaiting of later.awaiting) {
    const host = takeHost(earlier, awaiting.pid, awaiting.ts_ms, awaiting.outcome, awaiting.keep);
    // takeHost queued it in earlier.awaiting when earlier's own start is within the window.
    if (host !== undefined) onHost(awaiting, host);
  }
  Object.assign(earlier.received, later.received);
  earlier.received_size = Object.keys(earlier.received).length;
  earlier.first_ms ??= later.first_ms;
  return earlier;
}

/** Outcomes still waiting when nothing comes before the state: no host. */
export function settleAwaiting(state: HostLinkState, onHost: (awaiting: AwaitingHost, host: null) => void): void {
  for (const awaiting of state.awaiting) onHost(awaiting, null);
}
