/**
 * How a server stops and starts, for telling a normal start from a restart worth counting
 * (src/report/server-starts.ts, issue #26): a fast shutdown and a start, then an immediate
 * shutdown and the start that recovers from it; and a standby promoted.
 *
 * Not in SCENARIOS: recorded on request into test/fixtures/log-report
 * (`npm run fixtures:record -- --versions 18 --scenarios stops-and-starts,standby-promoted --out test/fixtures/log-report`).
 */
import { ALL_VERSIONS, type Scenario } from './scenario.js';

/** Starting a server and recovering after an immediate shutdown take a few seconds on a loaded machine. */
const START_WAIT_MS = 60_000;

export const stopsAndStarts: Scenario = {
  name: 'stops-and-starts',
  description: 'A fast shutdown and a start (a normal start), then an immediate shutdown and a start (automatic recovery: a restart after an unclean stop).',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({}),
  sessionSettings: {},
  async run({ primary, log }) {
    await primary.stop('fast');
    await primary.start();
    await log.waitFor(/database system was shut down at [^\n]*\n(?:.*\n)*?.*database system is ready to accept connections/, START_WAIT_MS);
    // WAL after the last checkpoint, so the start after the immediate shutdown has something to redo.
    await primary.query('CREATE TABLE ss_unsaved AS SELECT generate_series(1, 1000) AS id');
    await primary.stop('immediate');
    await primary.start();
    await log.waitFor(/automatic recovery in progress\n(?:.*\n)*?.*database system is ready to accept connections/, START_WAIT_MS);
    await primary.query('DROP TABLE ss_unsaved');
  },
};

export const standbyPromoted: Scenario = {
  name: 'standby-promoted',
  description: 'A hot standby promoted with pg_promote(): promote request, new timeline, ready for read-write connections.',
  versions: ALL_VERSIONS,
  logOf: 'standby',
  settings: () => ({}),
  sessionSettings: {},
  async run({ standby, log }) {
    if (!standby) throw new Error('standby-promoted needs a standby');
    await standby.query('SELECT pg_promote()');
    await log.waitFor(/selected new timeline ID: \d+\n(?:.*\n)*?.*database system is ready to accept connections/, START_WAIT_MS);
  },
};
