/**
 * Crashes. A backend killed with SIGKILL (what the OOM killer does): the postmaster logs the
 * child's death with the query it was running, terminates the other processes, reinitializes and
 * runs crash recovery. The whole server killed at once: only the next start tells.
 */
import fs from 'node:fs';
import path from 'node:path';
import { childPids, pidExists } from '../pg-processes.js';
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

/**
 * The whole server killed at once, postmaster and children (a host reset, a cgroup OOM kill of the
 * container): nobody is left to log it. The only trace is at the next start: "database system was
 * interrupted; last known up at ..." and "database system was not properly shut down; automatic
 * recovery in progress", with no crash line before them.
 */
export const serverKilledCrashRecovery: Scenario = {
  name: 'server-killed-crash-recovery',
  description:
    'The postmaster and every child killed with SIGKILL at once (a host reset, or an OOM kill of the whole cgroup), ' +
    'then started again: no line about the death; at start, "not properly shut down; automatic recovery in progress", redo, ready.',
  versions: [15, 18],
  logOf: 'primary',
  settings: () => ({ log_checkpoints: true }),
  sessionSettings: {},
  async run({ primary, log }) {
    // WAL after the last checkpoint, so crash recovery has something to redo.
    await primary.query('CREATE TABLE killed_with_the_server AS SELECT generate_series(1, 1000) AS id');
    const postmaster = Number(fs.readFileSync(path.join(primary.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const everyone = [postmaster, ...childPids(postmaster)];
    // All in one go, as the kernel does to a cgroup: no child lives to notice the postmaster gone.
    for (const pid of everyone) process.kill(pid, 'SIGKILL');
    await waitUntil(() => everyone.every((pid) => !pidExists(pid)), RECOVERY_WAIT_MS, `pids ${everyone.join(', ')} to be gone after SIGKILL`);
    await primary.start();
    await log.waitFor(/database system was not properly shut down; automatic recovery in progress[^]*database system is ready to accept connections/, RECOVERY_WAIT_MS);
    await primary.query('DROP TABLE killed_with_the_server');
  },
};
