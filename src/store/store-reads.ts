/**
 * What the HTTP API and the timeline page read from a store: the one read interface of the two
 * stores pgvigil serves from. StoreQueries answers it from a sidecar's SQLite file (at once);
 * CentralReads (src/central/central-reads.ts) from the central PostgreSQL store of a fleet (as a
 * promise). Read-only by contract: nothing here writes.
 */
import type { Alert } from '../domain/index.js';
import type { IncidentReport } from '../report/incident-report.js';
import type { ReportWindow } from '../report/stored-incident-report.js';
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
  incidentReport(window: ReportWindow): Awaitable<IncidentReport>;
}

export class TooManySeriesError extends Error {
  readonly code = 'too_many_series';
}

/** The store cannot be reached (the central database down or unreachable): the API answers 503. */
export class StoreUnavailableError extends Error {
  readonly code = 'store_unavailable';
  readonly statusCode = 503;
}
