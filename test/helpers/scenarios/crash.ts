/**
 * A backend killed with SIGKILL (what the OOM killer does): the postmaster logs the child's death
 * with the query it was running, terminates the other processes, reinitializes and runs crash
 * recovery.
 */
import { waitUntil } from '../pg-server.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { withSessions } from './session.js';

const RECOVERY_WAIT_MS = 60_000;

export const backendKilledCrashRestart: Scenario = {
  name: 'backend-killed-crash-restart',
  description:
    'A backend running SELECT pg_sleep(60) is killed with SIGKILL: "terminated by signal 9: Killed", all processes ' +
    'terminated, crash recovery, ready again.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  // log_checkpoints is on by default only from 15: the end-of-recovery checkpoint is part of the story.
  settings: () => ({ restart_after_crash: true, log_checkpoints: true }),
  sessionSettings: {},
  async run({ primary, log }) {
    await withSessions(primary, { victim: 'postgres' }, async ({ victim }) => {
      const sleeping = victim.query('SELECT pg_sleep(60)').then(
        () => new Error('pg_sleep(60) returned although its backend was killed'),
        () => null,
      );
      await waitUntil(
        async () =>
          (await primary.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'", [victim.pid]))
            .length > 0,
        10_000,
        `backend ${victim.pid} to run pg_sleep`,
      );
      await primary.kill('SIGKILL', victim.pid);
      const unexpected = await sleeping;
      if (unexpected) throw unexpected;
      await log.waitFor(new RegExp(`\\(PID ${victim.pid}\\) was terminated by signal 9: Killed[^]*all server processes terminated; reinitializing[^]*database system is ready to accept connections`), RECOVERY_WAIT_MS);
      await waitUntil(() => primary.query('SELECT 1').then(() => true, () => false), RECOVERY_WAIT_MS, `PG ${primary.version} to accept connections after crash recovery`);
    });
  },
};
