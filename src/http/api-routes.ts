/**
 * The JSON API: /api/events, /api/series, /api/alerts, /api/alerts/:id, /api/report (also as
 * text, Markdown or HTML). Query strings are checked
 * by JSON schema (unknown parameters included) and by api-params.ts; bad input is a 400 with a
 * message, never a 500. Reads only through StoreReads: the local store (`pgvigil run`, `pgvigil
 * serve --store file.db`) or the central one (`pgvigil serve --store postgres://...`).
 */
import type { FastifyInstance } from 'fastify';
import { EVENT_KINDS, type Clock, type EventKind } from '../domain/index.js';
import { TooManySeriesError, type StoreReads } from '../store/store-reads.js';
import { renderIncidentReport } from '../report/render-incident-report.js';
import { readIncidentReport } from '../report/stored-incident-report.js';
import { alertDetailJson, alertJson, eventJson } from './api-json.js';
import { BadRequest, checkRange, parseDuration, parseLabels, parseTime } from './api-params.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/**
 * Longest /api/report window: the report reads every event of it, synchronously, on the
 * daemon's event loop; longer reviews are for `pgvigil report` on the store file.
 */
const MAX_REPORT_WINDOW_MS = 7 * DAY_MS;
/**
 * Longest window of /api/events and /api/series: with the row and point limits, what one request
 * may make the store read (a month of 5 s samples is ~535k rows a series). The page zooms out no
 * further (web/timeline.js); longer reviews are for `pgvigil report` on the store file.
 */
export const MAX_WINDOW_MS = 31 * DAY_MS;
const MAX_POINTS_PER_SERIES = 11_000;
const DEFAULT_POINTS = 500;
const REPORT_TYPES = { text: 'text/plain', md: 'text/markdown', html: 'text/html' } as const;

const timeParams = { from: { type: 'string' }, to: { type: 'string' } } as const;
const limit = (byDefault: number) => ({ type: 'integer', minimum: 1, maximum: 10_000, default: byDefault }) as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;

interface EventsQuery { kind?: EventKind; from?: string; to?: string; database?: string; target?: string; limit: number }
interface SeriesQuery { name: string; labels?: string; target?: string; from?: string; to?: string; step?: string }
interface AlertsQuery { state?: 'firing' | 'resolved'; from?: string; to?: string; limit: number }
interface ReportQuery { from?: string; to?: string; target?: string; format: 'json' | 'text' | 'md' | 'html' }

export function registerApiRoutes(app: FastifyInstance, reads: StoreReads, clock: Clock): void {
  app.get<{ Querystring: EventsQuery }>('/api/events', {
    schema: {
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { kind: { type: 'string', enum: [...EVENT_KINDS] }, ...timeParams, database: nonEmpty, target: nonEmpty, limit: limit(500) },
      },
    },
  }, async (request) => {
    const q = request.query;
    const { fromMs, toMs } = timeRange(q, clock.nowMs());
    const events = await reads.events({ fromMs, toMs, kind: q.kind, database: q.database, target: q.target, limit: q.limit });
    return { from_ms: fromMs, to_ms: toMs, truncated: events.length === q.limit, events: events.map(eventJson) };
  });

  app.get<{ Querystring: SeriesQuery }>('/api/series', {
    schema: {
      querystring: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: { name: { type: 'string', pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }, labels: { type: 'string' }, target: nonEmpty, ...timeParams, step: nonEmpty },
      },
    },
  }, async (request) => {
    const q = request.query;
    const { fromMs, toMs } = timeRange(q, clock.nowMs());
    const stepMs = q.step === undefined ? Math.max(1_000, Math.ceil((toMs - fromMs) / DEFAULT_POINTS)) : parseDuration('step', q.step);
    if (stepMs < 1) throw new BadRequest('step must be at least 1 ms');
    if ((toMs - fromMs) / stepMs > MAX_POINTS_PER_SERIES) {
      throw new BadRequest(`from..to / step gives more than ${MAX_POINTS_PER_SERIES} points per series: use a larger step or a shorter range`);
    }
    try {
      const series = await reads.series({ name: q.name, labels: parseLabels(q.labels), target: q.target, fromMs, toMs, stepMs });
      return { name: q.name, from_ms: fromMs, to_ms: toMs, step_ms: stepMs, series };
    } catch (err) {
      if (err instanceof TooManySeriesError) throw new BadRequest(err.message);
      throw err;
    }
  });

  app.get<{ Querystring: AlertsQuery }>('/api/alerts', {
    schema: {
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { state: { type: 'string', enum: ['firing', 'resolved'] }, ...timeParams, limit: limit(200) },
      },
    },
  }, async (request) => {
    const q = request.query;
    const nowMs = clock.nowMs();
    const toMs = q.to === undefined ? undefined : parseTime('to', q.to, nowMs, nowMs);
    const fromMs = q.from === undefined ? undefined : parseTime('from', q.from, nowMs, nowMs);
    if (fromMs !== undefined && toMs !== undefined) checkRange(fromMs, toMs);
    return { alerts: (await reads.alerts({ state: q.state, fromMs, toMs, limit: q.limit })).map(alertJson) };
  });

  app.get<{ Querystring: ReportQuery }>('/api/report', {
    schema: {
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { ...timeParams, target: nonEmpty, format: { type: 'string', enum: ['json', 'text', 'md', 'html'], default: 'json' } },
      },
    },
  }, async (request, reply) => {
    const q = request.query;
    // As `pgvigil report`: the last 24 hours unless told otherwise.
    const { fromMs, toMs } = timeRange(q, clock.nowMs(), DAY_MS, MAX_REPORT_WINDOW_MS);
    const { report } = await readIncidentReport((query) => reads.reportWindow(query), { fromMs, toMs, target: q.target ?? null });
    if (q.format === 'json') return report;
    return reply.type(`${REPORT_TYPES[q.format]}; charset=utf-8`).send(renderIncidentReport(report, q.format));
  });

  app.get<{ Params: { id: number } }>('/api/alerts/:id', {
    schema: { params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] } },
  }, async (request, reply) => {
    const detail = await reads.alert(request.params.id);
    if (!detail) return reply.code(404).send({ error: 'not_found', message: `no alert with id ${request.params.id}` });
    return alertDetailJson(detail);
  });
}

/** from/to of a query: to defaults to now, from to `defaultWindowMs` (an hour) before to; at most `maxWindowMs` apart. */
function timeRange(q: { from?: string; to?: string }, nowMs: number, defaultWindowMs = HOUR_MS, maxWindowMs = MAX_WINDOW_MS): { fromMs: number; toMs: number } {
  const toMs = parseTime('to', q.to, nowMs, nowMs);
  const fromMs = parseTime('from', q.from, toMs - defaultWindowMs, nowMs);
  checkRange(fromMs, toMs);
  if (toMs - fromMs > maxWindowMs) {
    throw new BadRequest(`from..to is longer than ${maxWindowMs / DAY_MS} days: use a shorter window, or \`pgvigil report\` on the store file`);
  }
  return { fromMs, toMs };
}
