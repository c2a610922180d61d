/**
 * The sections of the log report, in the order the report shows them (section.ts). Each
 * section's result is under its `key` in `analyze --json`'s `report` and in the store.
 */
import { checkpointsSection } from './checkpoints.js';
import { errorsSection } from './errors.js';
import { locksSection } from './locks.js';
import { maintenanceSection } from './maintenance.js';
import { queriesSection } from './queries.js';
import { sessionsSection } from './sessions.js';
import type { ReportSection } from './section.js';
import { tempFilesSection } from './temp-files.js';

// Each section has its own State and Result; the registry only needs the contract's shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const LOG_REPORT_SECTIONS: ReadonlyArray<ReportSection<any, any>> = [
  queriesSection,
  errorsSection,
  sessionsSection,
  checkpointsSection,
  tempFilesSection,
  maintenanceSection,
  locksSection,
];
