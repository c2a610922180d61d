/**
 * Episodes of statements cancelled for one cause, as the info rules report them
 * (recovery-conflict-cancellations, lock-timeouts, deadlocks, statement-timeouts): a failure users
 * saw, explained, that needs no one at 3 am. temp-file-spills groups a statement's temporary
 * files the same way.
 *
 * An episode is the events of one cause on one target whose gaps are at most the window. It is
 * news while its last event is within the window: its alert keeps one dedup key while the cause
 * recurs (the count in its summary grows), and resolves once a window passes without a new one.
 * An episode is counted back at most EPISODE_LOOKBACK_MS, so a cause that recurs all day costs
 * a small read per evaluation (reading an hour of a storm at every evaluation cost more than all
 * the other log rules together); its summary then counts "in the last 15 min", and the alert's
 * start says when it began.
 */
import { createHash } from 'node:crypto';
import type { EventKind } from '../domain/index.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { formatDuration, formatTime, quoteStatement } from './summary-format.js';

export interface EpisodeOptions {
  /** A cause without a new event for this long is over. */
  windowMs: number;
}

export const EPISODE_DEFAULTS: EpisodeOptions = { windowMs: 300_000 };

/** How far back an episode's events are counted: read at every evaluation while the cause recurs. */
export const EPISODE_LOOKBACK_MS = 15 * 60_000;

/** Events an alert cites: the latest ones (the cause's own events are cited besides). */
export const EPISODE_EVIDENCE_EVENTS = 20;

export interface Episode<K extends EventKind> {
  target: string;
  /** The cause, as keyOf named it; part of the dedup key. */
  key: string;
  /** Ascending by time; at least one, the last within the window. */
  events: Array<RuleEvent<K>>;
  /** The episode began before the lookback: `events` are its events within it. */
  cutOff: boolean;
}

/**
 * The live episodes of `kind` at `nowMs`, one per target and cause; `keyOf` names an event's
 * cause, or null for an event another rule reports. Reads the lookback only when some event is
 * within the window: a quiet server costs one small read.
 */
export function liveEpisodes<K extends EventKind>(
  view: RuleView, kind: K, options: EpisodeOptions, nowMs: number, keyOf: (e: RuleEvent<K>) => string | null,
): Array<Episode<K>> {
  if (view.events(kind, { sinceMs: nowMs - options.windowMs }).length === 0) return [];
  const groups = new Map<string, Episode<K>>();
  // A window more than the lookback: an episode that reaches into it began before the lookback.
  const countedFromMs = nowMs - EPISODE_LOOKBACK_MS;
  for (const e of view.events(kind, { sinceMs: countedFromMs - options.windowMs })) {
    const key = keyOf(e);
    if (key === null) continue;
    const id = `${e.target}\u0000${key}`;
    const group = groups.get(id);
    if (!group) groups.set(id, { target: e.target, key, events: [e], cutOff: false });
    else if (e.tsMs - group.events.at(-1)!.tsMs > options.windowMs) Object.assign(group, { events: [e], cutOff: false });
    else group.events.push(e);
  }
  const live = [...groups.values()].filter((g) => g.events.at(-1)!.tsMs >= nowMs - options.windowMs);
  for (const g of live) {
    if (g.events[0]!.tsMs >= countedFromMs) continue;
    g.events = g.events.filter((e) => e.tsMs >= countedFromMs);
    g.cutOff = true;
  }
  return live;
}

/**
 * `since 07:20:27 UTC`, one event or many (a second event must not read as news: engine.ts
 * gistOf), or `in the last 15 min` for an episode older than the lookback.
 */
export function episodeSpan(episode: Episode<EventKind>): string {
  return episode.cutOff ? `in the last ${formatDuration(EPISODE_LOOKBACK_MS)}` : `since ${formatTime(episode.events[0]!.tsMs)}`;
}

/** Ids to cite: the episode's latest events. */
export function episodeEventIds(episode: Episode<EventKind>): number[] {
  return episode.events.slice(-EPISODE_EVIDENCE_EVENTS).map((e) => e.id);
}

/** A short stable digest of a long cause (a statement's shape) for its dedup key. */
export function causeDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/** Long enough to tell two statements apart in a key; a summary quotes less. */
const SHAPE_CHARS = 2_000;

/**
 * One statement shape in one database, as a cause key: its literals removed, so every execution
 * of it is one cause whatever its values; a statement that was not logged is a cause of its own.
 */
export function statementCauseKey(database: string | null, statement: string | null): string {
  return `${database ?? ''}/${causeDigest(statement === null ? '' : quoteStatement(statement, SHAPE_CHARS))}`;
}

/** How an alert names a statement's episode: where it ran, the statement quoted, the alert's labels. */
export function statementCause(episode: Episode<EventKind>, statement: string | null): { where: string; what: string; labels: Record<string, string> } {
  const { database } = episode.events.at(-1)!;
  return {
    where: database === null ? episode.target : `${database} on ${episode.target}`,
    what: statement === null ? 'a statement that was not logged' : quoteStatement(statement),
    labels: database === null ? {} : { database },
  };
}

/** The processes of an episode's events, as an evidence fact: `4100, 4101`. */
export function episodePids(episode: Episode<EventKind>): string {
  return [...new Set(episode.events.map((e) => e.pid).filter((p) => p !== null))].join(', ');
}
