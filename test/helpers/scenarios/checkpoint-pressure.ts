/**
 * Checkpoints no quiet test server writes by itself, for the log report's checkpoints section
 * (issue #26): WAL-triggered checkpoints close enough together for `checkpoints are occurring
 * too frequently`, and a standby's restartpoints. Both write WAL in 8 MB steps with max_wal_size
 * at its minimum (32MB), so a few steps request a checkpoint (or a restartpoint) by WAL volume.
 *
 * Not in SCENARIOS: recorded on request into test/fixtures/log-report
 * (`npm run fixtures:record -- --versions 18 --scenarios checkpoint-wal-pressure,restartpoints-on-standby --out test/fixtures/log-report`).
 */
import type { PgServer } from '../pg-harness.js';
import type { LogWatcher } from './log-watcher.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';

/** Steps of WAL at most, each an 8 MB insert: far more than the few the patterns need. */
const MAX_STEPS = 40;
const FILL = "INSERT INTO cp_fill SELECT g, repeat('x', 1000) FROM generate_series(1, 8000) g";

const pressureSettings = () => ({ log_checkpoints: true, max_wal_size: '32MB', min_wal_size: '32MB', checkpoint_warning: '30s' });

/** Writes WAL on the primary (with `between` after each step) until every pattern is in the log. */
async function fillUntil(primary: PgServer, log: LogWatcher, patterns: readonly RegExp[], between?: () => Promise<unknown>): Promise<void> {
  await primary.query('DROP TABLE IF EXISTS cp_fill');
  await primary.query('CREATE TABLE cp_fill (id int, pad text)');
  for (let step = 0; step < MAX_STEPS && !patterns.every((p) => p.test(log.text())); step++) {
    await primary.query(FILL);
    await between?.();
  }
  for (const pattern of patterns) await log.waitFor(pattern);
  await primary.query('DROP TABLE cp_fill');
}

export const checkpointWalPressure: Scenario = {
  name: 'checkpoint-wal-pressure',
  description: 'With max_wal_size = 32MB, 8 MB inserts one after the other: checkpoints requested by WAL volume (checkpoint starting: wal), closer than checkpoint_warning (checkpoints are occurring too frequently), each completed.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: pressureSettings,
  sessionSettings: {},
  async run({ primary, log }) {
    await fillUntil(primary, log, [/checkpoints are occurring too frequently/, /checkpoint starting: wal\n(?:.*\n)*?.*checkpoint complete:/]);
  },
};

export const restartpointsOnStandby: Scenario = {
  name: 'restartpoints-on-standby',
  description: 'A hot standby with max_wal_size = 32MB replays 8 MB inserts, each followed by a CHECKPOINT on the primary: restartpoints requested by WAL volume (restartpoint starting: wal), completed.',
  versions: ALL_VERSIONS,
  logOf: 'standby',
  settings: pressureSettings,
  sessionSettings: {},
  async run({ primary, log }) {
    // A restartpoint restarts at a replayed checkpoint record: the primary must write some.
    await fillUntil(primary, log, [/restartpoint starting: wal\n(?:.*\n)*?.*restartpoint complete:/], () => primary.query('CHECKPOINT'));
  },
};
