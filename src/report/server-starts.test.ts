import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../domain/index.js';
import { fixtureEvents } from '../../test/helpers/report-section.js';
import { parseLogFile } from '../../test/helpers/scenarios/parse-log.js';
import { ServerStarts } from './server-starts.js';

function startsOf(events: readonly AnyLogEvent[]) {
  const starts = new ServerStarts();
  for (const event of events) if (event.kind === 'server_restart') starts.add(event.details);
  return starts.counts();
}

const NONE = { after_crash: 0, normal: 0, promotions: 0, clean_shutdowns: 0, immediate_shutdowns: 0 };

describe('server starts (real logs)', () => {
  it('a backend killed: the postmaster resets every process and recovers, one restart after a crash', async () => {
    expect(startsOf(await fixtureEvents('pg18-stderr-backend-killed-crash-restart'))).toEqual({ ...NONE, after_crash: 1 });
  });

  it('the whole server killed: the next start finds it interrupted and recovers, one restart after a crash', async () => {
    expect(startsOf(await fixtureEvents('pg15-stderr-server-killed-crash-recovery'))).toEqual({ ...NONE, after_crash: 1 });
    expect(startsOf(await fixtureEvents('pg18-stderr-server-killed-crash-recovery'))).toEqual({ ...NONE, after_crash: 1 });
  });

  it('a fast shutdown and a start: one clean shutdown, one normal start, no restart', async () => {
    expect(startsOf(await fixtureEvents('pg15-stderr-multixact-members-run-short'))).toEqual({ ...NONE, normal: 1, clean_shutdowns: 1 });
  });

  it('a fast shutdown and a start, then an immediate shutdown and a start that recovers: one normal start, one restart', async () => {
    for (const format of ['stderr', 'csvlog', 'jsonlog']) {
      expect(startsOf(await fixtureEvents(`../log-report/pg18-${format}-stops-and-starts`))).toEqual({
        ...NONE, normal: 1, after_crash: 1, clean_shutdowns: 1, immediate_shutdowns: 1,
      });
    }
  });

  it('a standby promoted: one promotion, no start', async () => {
    expect(startsOf(await fixtureEvents('../log-report/pg18-stderr-standby-promoted'))).toEqual({ ...NONE, promotions: 1 });
  });

  it('a log that opens with a clean start: one normal start', async () => {
    const file = path.resolve(import.meta.dirname, '../../test/fixtures/pg18-stderr-analyze-mixed/postgresql.log');
    const { events } = await parseLogFile(file, { format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'UTC' });
    expect(startsOf(events)).toEqual({ ...NONE, normal: 1 });
  });
});
