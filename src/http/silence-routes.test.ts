import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { openStore } from '../store/open-store.js';
import { Silences } from '../store/silences.js';
import { registerSilenceRoutes } from './silence-routes.js';

const T0 = Date.UTC(2026, 11, 3, 2, 0, 0);

async function app() {
  const clock = new ManualClock(T0);
  const silences = new Silences(openStore(':memory:'));
  const server = Fastify();
  registerSilenceRoutes(server, silences, clock, { targets: ['db1', 'db2'], rules: ['server-crashed', 'vacuum-held-back'] });
  await server.ready();
  return { server, silences, clock };
}

describe('/api/silences', () => {
  it('adds a silence for a duration, lists it, and expires it', async () => {
    const { server, silences, clock } = await app();
    const added = await server.inject({ method: 'POST', url: '/api/silences', payload: { target: 'db1', rule_id: 'server-crashed', duration: '2h', comment: 'upgrade', created_by: 'ann' } });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toEqual({ id: 1, target: 'db1', rule_id: 'server-crashed', starts_at: '2026-12-03T02:00:00.000Z', ends_at: '2026-12-03T04:00:00.000Z', comment: 'upgrade', created_by: 'ann' });
    expect(silences.covering('db1', 'server-crashed', T0 + 3_600_000)?.id).toBe(1);
    expect((await server.inject('/api/silences')).json().silences).toHaveLength(1);
    await clock.advance(60_000);
    expect((await server.inject({ method: 'POST', url: '/api/silences/1/expire' })).statusCode).toBe(200);
    expect(silences.covering('db1', 'server-crashed', T0 + 120_000)).toBeNull();
    expect((await server.inject({ method: 'POST', url: '/api/silences/1/expire' })).statusCode).toBe(404);
    await server.close();
  });

  it('refuses an unknown target or rule, a silence with no end or one past 30 days, and a body that is not JSON', async () => {
    const { server, silences } = await app();
    const post = (payload: unknown, contentType = 'application/json') => server.inject({ method: 'POST', url: '/api/silences', payload: typeof payload === 'string' ? payload : JSON.stringify(payload), headers: { 'content-type': contentType } });
    expect((await post({ target: 'db9', duration: '1h', comment: 'x' })).statusCode).toBe(400);
    expect((await post({ target: 'db1', rule_id: 'no-such-rule', duration: '1h', comment: 'x' })).statusCode).toBe(400);
    expect((await post({ target: 'db1', comment: 'x' })).statusCode).toBe(400);
    expect((await post({ target: 'db1', duration: '31d', comment: 'x' })).statusCode).toBe(400);
    expect((await post({ target: 'db1', duration: '1h', ends_at: '2026-12-03T05:00:00Z', comment: 'x' })).statusCode).toBe(400);
    // What a form on another site's page can send without a preflight.
    expect((await post('target=db1&duration=1h&comment=x', 'application/x-www-form-urlencoded')).statusCode).toBe(415);
    expect((await post('{"target":"db1","duration":"1h","comment":"x"}', 'text/plain')).statusCode).toBe(400);
    expect(silences.list(0)).toEqual([]);
    await server.close();
  });
});
