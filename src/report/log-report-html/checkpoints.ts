/**
 * Checkpoints and temporary files (pgBadger's "Checkpoints" and "Temp Files"). Pure.
 */
import type { AnalyzeSummary } from '../analyze-summary.js';
import { count, mb, seconds } from '../text-format.js';
import { absent, factsTable, type PageSection } from './html-parts.js';

export function checkpointsSection(summary: AnalyzeSummary, charts: string): PageSection {
  const c = summary.checkpoints;
  return {
    id: 'checkpoints',
    title: `Checkpoints: ${count(c.completed)}`,
    body: [
      charts,
      c.completed === 0 ? absent('no checkpoint logged: set log_checkpoints = on (the default from PostgreSQL 15)') : factsTable([
        ['completed', count(c.completed)],
        ['longest', `${seconds(c.max_total_s)} s`],
        ['too frequent (checkpoint_warning)', count(c.too_frequent)],
      ]),
    ].join('\n'),
  };
}

export function tempFilesSection(summary: AnalyzeSummary, charts: string): PageSection {
  const t = summary.temp_files;
  return {
    id: 'temp-files',
    title: `Temporary files: ${count(t.count)}`,
    body: [
      charts,
      t.count === 0 ? absent('no temporary file logged: set log_temp_files = 0 (or a size in kB) to have PostgreSQL log each one') : factsTable([
        ['files', count(t.count)],
        ['total size', mb(t.total_bytes)],
        ['largest', t.max_bytes === null ? '-' : mb(t.max_bytes)],
      ]),
    ].join('\n'),
  };
}
