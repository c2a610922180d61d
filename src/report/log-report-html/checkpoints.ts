/**
 * Checkpoints (pgBadger's "Checkpoints"): one per complete line with the reason of its start,
 * restartpoints apart, buffers, write/sync times, distance and WAL files, the slowest ones, and
 * per minute how many ran. Pure.
 */
import type { CheckpointRow, CheckpointsResult, CheckpointTotals } from '../log-report/checkpoints.js';
import { count, countOrDash, seconds } from '../text-format.js';
import { absent, chartGrid, factsTable, htmlTable, subheading, type PageSection, type TimeWindow } from './html-parts.js';
import { minuteChart } from './minute-charts.js';

const NO_CHECKPOINTS = 'no checkpoint logged: set log_checkpoints = on (the default from PostgreSQL 15)';

export function checkpointsSection(result: CheckpointsResult, window: TimeWindow): PageSection {
  const title = `Checkpoints: ${count(result.checkpoints.count)}${result.restartpoints.count > 0 ? `, restartpoints: ${count(result.restartpoints.count)}` : ''}`;
  if (result.checkpoints.count + result.restartpoints.count === 0 && result.too_frequent.count === 0) return { id: 'checkpoints', title, body: absent(NO_CHECKPOINTS) };
  return {
    id: 'checkpoints',
    title,
    body: [
      chartGrid([minuteChart('checkpoints_per_minute', 'Checkpoints per minute', 'count', result.per_minute, [
        { counter: 'checkpoints', label: 'checkpoints' }, { counter: 'restartpoints', label: 'restartpoints' }, { counter: 'too_frequent', label: 'too frequent (warning)' },
      ], NO_CHECKPOINTS)], window),
      totalsHtml('Checkpoints', result.checkpoints),
      result.restartpoints.count > 0 ? totalsHtml('Restartpoints (standby)', result.restartpoints) : '',
      result.too_frequent.count > 0 ? factsTable([['too frequent (checkpoint_warning)', `${count(result.too_frequent.count)}, closest ${countOrDash(result.too_frequent.min_seconds_apart)} s apart: raise max_wal_size`]]) : '',
      subheading('Slowest checkpoints'),
      htmlTable<CheckpointRow>([
        { header: 'completed', align: 'left', cell: (r) => r.completed_at },
        { header: 'kind', align: 'left', cell: (r) => (r.restartpoint ? 'restartpoint' : 'checkpoint') },
        { header: 'reason', align: 'left', cell: (r) => r.reason },
        { header: 'buffers', align: 'right', cell: (r) => countOrDash(r.buffers_written) },
        { header: 'write s', align: 'right', cell: (r) => seconds(r.write_s) },
        { header: 'sync s', align: 'right', cell: (r) => seconds(r.sync_s) },
        { header: 'total s', align: 'right', cell: (r) => seconds(r.total_s) },
        { header: 'distance kB', align: 'right', cell: (r) => countOrDash(r.distance_kb) },
        { header: 'WAL added/removed/recycled', align: 'right', cell: (r) => [r.wal_files_added, r.wal_files_removed, r.wal_files_recycled].map(countOrDash).join('/') },
      ], result.slowest, 'no checkpoint completed'),
    ].join('\n'),
  };
}

function totalsHtml(what: string, t: CheckpointTotals): string {
  return [
    subheading(what),
    factsTable([
      ['completed', count(t.count)],
      ['started, not completed', count(t.unfinished)],
      ['by reason', t.by_reason.map((r) => `${r.reason} ${count(r.count)}`).join(', ') || '-'],
      ['buffers written', countOrDash(t.buffers_written)],
      ['write / sync / total s', [t.write_s, t.sync_s, t.total_s].map(seconds).join(' / ')],
      ['longest s', seconds(t.max_total_s)],
      ['distance kB (total, largest)', `${countOrDash(t.distance_kb)}, ${countOrDash(t.max_distance_kb)}`],
      ['WAL files added / removed / recycled', [t.wal_files_added, t.wal_files_removed, t.wal_files_recycled].map(countOrDash).join(' / ')],
    ]),
  ].join('\n');
}
