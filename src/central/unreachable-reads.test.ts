import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { buildHttpApp } from '../http/build-http-app.js';
import type { StoreReads, StoredWindow } from '../store/store-reads.js';
import { unreachableAsUnavailable } from './unreachable-reads.js';

/** Reads whose every call fails with the given error (a pg error carries its code). */
function failingReads(error: Error): StoreReads {
  const fail = async (): Promise<never> => { throw error; };
  return { events: fail, series: fail, alerts: fail, alert: fail, reportWindow: fail as () => Promise<StoredWindow> };
}

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

async function apiAnswer(reads: StoreReads, url: string) {
  const app = await buildHttpApp({ queries: reads, clock: new ManualClock(0), listenHost: '127.0.0.1', token: null });
  try {
    const res = await app.inject(url);
    return { status: res.statusCode, body: res.json() as { error: string; message: string } };
  } finally {
    await app.close();
  }
}

describe('the central store unreachable', () => {
  it.each([
    ['refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['terminated by an administrator', withCode('terminating connection due to administrator command', '57P01')],
    ['lost mid-query', new Error('Connection terminated unexpectedly')],
    ['not yet accepted (starting up)', withCode('the database system is starting up', '57P03')],
  ])('is a 503 naming the store when the connection is %s', async (_how, error) => {
    const reads = unreachableAsUnavailable(failingReads(error), 'central store pgvigil_reader@central:5432/fleet');
    for (const url of ['/api/alerts', '/api/events', '/api/alerts/7', '/api/report?from=0&to=1000']) {
      const { status, body } = await apiAnswer(reads, url);
      expect({ url, status, error: body.error }).toEqual({ url, status: 503, error: 'store_unavailable' });
      expect(body.message).toContain('central store pgvigil_reader@central:5432/fleet is unreachable');
      expect(body.message).toContain(error.message);
    }
  });

  it('leaves other failures a 500 that shows nothing of them', async () => {
    const reads = unreachableAsUnavailable(failingReads(withCode('relation "pgvigil.alerts" does not exist', '42P01')), 'central store');
    const { status, body } = await apiAnswer(reads, '/api/alerts');
    expect(status).toBe(500);
    expect(body.message).not.toContain('pgvigil.alerts');
  });

  it('passes answers through unchanged', async () => {
    const alerts: StoreReads['alerts'] = async () => [];
    const reads = unreachableAsUnavailable({ ...failingReads(new Error('unused')), alerts }, 'central store');
    expect(await apiAnswer(reads, '/api/alerts')).toEqual({ status: 200, body: { alerts: [] } });
  });
});
