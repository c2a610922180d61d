/**
 * /api/silences: the maintenance windows of `pgvigil silence`, over HTTP (local store only: the
 * daemon's). GET lists those in force, to come, and ended in the last day; POST adds one (JSON body:
 * target, rule_id, duration or ends_at, comment, created_by); POST /api/silences/:id/expire ends
 * one. A POST body must be a JSON object: a form another site's page could send is refused
 * (415, or 400 for text), so a browser cannot be made to silence pgvigil.
 */
import type { FastifyInstance } from 'fastify';
import { durationTextToMs } from '../config/duration.js';
import type { Clock } from '../domain/index.js';
import type { Silence, Silences } from '../store/silences.js';

const DAY_MS = 86_400_000;
const MAX_SILENCE_MS = 30 * DAY_MS;

interface SilenceBody { target: string; rule_id?: string; duration?: string; ends_at?: string; comment: string; created_by?: string }

const silenceJson = (s: Silence) => ({
  id: s.id, target: s.target, rule_id: s.ruleId, starts_at: new Date(s.startsMs).toISOString(), ends_at: new Date(s.endsMs).toISOString(),
  comment: s.comment, created_by: s.createdBy,
});

export function registerSilenceRoutes(app: FastifyInstance, silences: Silences, clock: Clock, known: { targets: readonly string[]; rules: readonly string[] }): void {
  app.get('/api/silences', async () => {
    const nowMs = clock.nowMs();
    return { silences: silences.list(nowMs - DAY_MS).map(silenceJson) };
  });

  app.post<{ Body: SilenceBody }>('/api/silences', {
    schema: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['target', 'comment'],
        properties: {
          target: { type: 'string', enum: [...known.targets] },
          rule_id: { type: 'string', enum: [...known.rules] },
          duration: { type: 'string', minLength: 1 },
          ends_at: { type: 'string', minLength: 1 },
          comment: { type: 'string', minLength: 1, maxLength: 1000 },
          created_by: { type: 'string', minLength: 1, maxLength: 200 },
        },
      },
    },
  }, async (request, reply) => {
    const body = request.body;
    const nowMs = clock.nowMs();
    const duration = body.duration === undefined ? undefined : durationTextToMs(body.duration);
    const endsMs = body.ends_at !== undefined ? Date.parse(body.ends_at) : typeof duration === 'number' ? nowMs + duration : Number.NaN;
    if (!Number.isFinite(endsMs) || endsMs <= nowMs || endsMs - nowMs > MAX_SILENCE_MS || (body.duration !== undefined) === (body.ends_at !== undefined)) {
      return reply.code(400).send({ error: 'bad_request', message: 'give either duration (30m, 2h, 1d) or ends_at (an ISO time), ending in the future and within 30 days' });
    }
    const silence = silences.add({ target: body.target, ruleId: body.rule_id ?? null, startsMs: nowMs, endsMs, comment: body.comment, createdBy: body.created_by ?? 'api' });
    return reply.code(201).send(silenceJson(silence));
  });

  app.post<{ Params: { id: number } }>('/api/silences/:id/expire', {
    schema: { params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] } },
  }, async (request, reply) => {
    if (!silences.expire(request.params.id, clock.nowMs())) return reply.code(404).send({ error: 'not_found', message: `no silence #${request.params.id} in force` });
    return { id: request.params.id, expired: true };
  });
}
