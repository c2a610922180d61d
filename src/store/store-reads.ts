/**
 * What the HTTP API, the timeline page and the incident report read from a store: the one read
 * interface of the two stores pgvigil serves from. StoreQueries answers it from a sidecar's SQLite
 * file (at once); CentralReads (src/central/central-reads.ts) from the central PostgreSQL store of
 * a fleet (as a promise). Read-only by contract: nothing here writes. Never: what a reader makes
 * of the rows (the report composes itself in src/report/).
 */
import type { Alert, AlertState, AnyLogEvent } from '../domain/index.js';
import type { AlertDetail, AlertQuery, EventQuery, SeriesQuery, SeriesView, StoredEventView } from './queries.js';

export type Awaitable<T> = T | Promise<T>;

export interface StoreReads {
  /** Newest first. */
  events(query: EventQuery): Awaitable<StoredEventView[]>;
  /** Throws TooManySeriesError when the name and labels match more series than a request may read. */
  series(query: SeriesQuery): Awaitable<SeriesView[]>;
  /** Newest first. */
  alerts(query: AlertQuery): Awaitable<Alert[]>;
  /** With its transitions and the events its evidence names; null when there is no such alert. */
  alert(id: number): Awaitable<AlertDetail | null>;
  /** Everything the incident report of a past window reads, in one answer. */
  reportWindow(query: WindowQuery): Awaitable<StoredWindow>;
}

/** Alerts read for one window: far more than one window's incidents. */
export const MAX_WINDOW_ALERTS = 1_000;

export interface ReportWindow {
  fromMs: number;
  toMs: number;
  /** Only this target's alerts, events, series and minutes; null: every target. */
  target: string | null;
}

export interface WindowQuery extends ReportWindow {
  /** The series the reader will ask StoredWindow.series for (the central store reads them in one query). */
  seriesNames: readonly string[];
  /** Each series thinned to its latest sample per step. */
  stepMs: number;
}

export interface StoredTransition {
  alertId: number;
  tsMs: number;
  toState: AlertState;
}

/** A past window as a store holds it. Ids are the store's: the alerts' evidence names the events' ids. */
export interface StoredWindow {
  /** Alerts firing at some point in the window, newest first, at most MAX_WINDOW_ALERTS. */
  alerts: Alert[];
  /** Those alerts' transitions inside the window, oldest first. */
  transitions: StoredTransition[];
  /** The window's events in time order (a sidecar's are read as they are iterated). */
  events: Iterable<{ id: number; event: AnyLogEvent }>;
  /** Events of the window left out of `events`: the oldest, past what one window reads. */
  eventsLeftOut: number;
  /** One of the query's series in the window; throws TooManySeriesError as StoreReads.series does. */
  series(name: string): SeriesView[];
  /** The log report's stored minute rows (whole minutes, from the one the window starts in). */
  reportMinutes: Iterable<{ states: string }>;
}

export class TooManySeriesError extends Error {
  readonly code = 'too_many_series';
}

/** The store cannot be reached (the central database down or unreachable): the API answers 503. */
export class StoreUnavailableError extends Error {
  readonly code = 'store_unavailable';
  readonly statusCode = 503;
}
