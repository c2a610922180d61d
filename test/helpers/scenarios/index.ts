/**
 * Every scenario, in the order a recording runs them on one server. Order matters only where a
 * scenario leaves the server changed for good: the crashes restart it, so they run last.
 */
import { autovacuumFourIndexes, autovacuumHeldBackBySnapshot } from './autovacuum.js';
import { checkpointWalPressure, restartpointsOnStandby } from './checkpoint-pressure.js';
import { backendKilledCrashRestart, serverKilledCrashRecovery } from './crash.js';
import { deadlock, lockWaitsAndLockTimeout } from './locks.js';
import { logReportWorkload } from './log-report-workload.js';
import { statementLogging } from './statement-logging.js';
import { sessionsAndErrors } from './sessions-and-errors.js';
import { checkpointRequested, logStatementAll, logStatementDdl, tempFilesSort } from './maintenance.js';
import { parallelAutovacuum, parallelAutovacuumInsertOnly, parallelAutovacuumStarved } from './parallel-autovacuum.js';
import { standbyBufferPinConflicts, standbyRecoveryConflicts, standbyTablespaceConflict } from './recovery-conflicts.js';
import { repackConcurrentlyHoldsBackVacuum, repackLockTimeoutAtSwap } from './repack.js';
import type { Scenario } from './scenario.js';
import { standbyFeedbackHoldsVacuum } from './standby-feedback.js';
import { logicalSlotHoldsCatalogs } from './logical-slot-catalogs.js';
import { logicalSlotInvalidated } from './slot-invalidation.js';
import { multixactMembersRunShort } from './multixact-members.js';
import { errorsWithContext, idleInTransactionTimeout, statementTimeout, transactionTimeout } from './timeouts.js';
import { standbyPromoted, stopsAndStarts } from './stops-and-starts.js';
import { cancelledByHand } from './cancelled-by-hand.js';
import { rowDataInErrors } from './row-data-in-errors.js';

export const SCENARIOS: readonly Scenario[] = [
  autovacuumFourIndexes,
  autovacuumHeldBackBySnapshot,
  lockWaitsAndLockTimeout,
  deadlock,
  statementTimeout,
  idleInTransactionTimeout,
  transactionTimeout,
  errorsWithContext,
  checkpointRequested,
  tempFilesSort,
  logStatementDdl,
  logStatementAll,
  logicalSlotInvalidated,
  parallelAutovacuumInsertOnly,
  parallelAutovacuum,
  parallelAutovacuumStarved,
  repackConcurrentlyHoldsBackVacuum,
  repackLockTimeoutAtSwap,
  standbyRecoveryConflicts,
  standbyBufferPinConflicts,
  standbyTablespaceConflict,
  standbyFeedbackHoldsVacuum,
  logicalSlotHoldsCatalogs,
  backendKilledCrashRestart,
  serverKilledCrashRecovery,
  // Leaves the members offset near its wrap: after everything else.
  multixactMembersRunShort,
];

/** Recorded on request only, into a folder of their own (not golden-log cases). */
const WORKLOADS: readonly Scenario[] = [logReportWorkload, sessionsAndErrors, statementLogging, checkpointWalPressure, restartpointsOnStandby, stopsAndStarts, standbyPromoted, cancelledByHand, rowDataInErrors];

export function scenarioByName(name: string): Scenario {
  const known = [...SCENARIOS, ...WORKLOADS];
  const scenario = known.find((candidate) => candidate.name === name);
  if (!scenario) throw new Error(`no scenario named ${name}; known: ${known.map((candidate) => candidate.name).join(', ')}`);
  return scenario;
}

export type { Scenario, ScenarioContext } from './scenario.js';
export { runScenarioInOwnLog, scenarioServerSettings, FORMAT_SUFFIX, type LogFormat, type ScenarioLog } from './scenario-log.js';
