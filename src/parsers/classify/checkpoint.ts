/**
 * Checkpoint and restartpoint lines (xlog.c LogCheckpointStart/End, checkpointer.c; LOG;
 * log_checkpoints on by default from 15):
 * - `checkpoint starting: <flags>`; flags as printed (19: `immediate` -> `fast`,
 *   `flush-all` -> `flush-unlogged`).
 * - `checkpoint complete: wrote ...` (13-18) / `checkpoint complete: <flags>: wrote ...` (19).
 *   The figures are read part by part, separated by `;` or `,` (18 turned the `;` after the
 *   buffer percentage into `,`), so 13-15, 16-17 (+ lsn), 18 (+ SLRU) and 19 share one reader.
 * - `checkpoints are occurring too frequently (N second(s) apart)`.
 */
import type { CheckpointDetails } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { LSN_PATTERN, matchPieces, toFloat, toInt, type PieceSpec } from './fields.js';

const HEAD = /^(checkpoint|restartpoint) (starting|complete):(.*)$/;
const TOO_FREQUENT = /^checkpoints are occurring too frequently \((\d+) seconds? apart\)$/;

/** `message` starts with "checkpoint" or "restartpoint"; null when it is not one of the forms above. */
export function classifyCheckpoint(message: string): Classification | null {
  const frequent = TOO_FREQUENT.exec(message);
  if (frequent) {
    const details = empty('too_frequent', false);
    details.seconds_apart = toInt(frequent[1]);
    return { kind: 'checkpoint', details };
  }
  const head = HEAD.exec(message);
  const rest = head?.[3];
  if (!head || rest === undefined) return null;
  const details = empty(head[2] === 'starting' ? 'starting' : 'complete', head[1] === 'restartpoint');
  if (details.phase === 'starting') {
    details.reasons = flags(rest);
    return { kind: 'checkpoint', details };
  }
  const wrote = rest.indexOf(' wrote ');
  // PG 19+: the flags are repeated between "complete:" and ": wrote".
  const flagText = wrote > 0 ? rest.slice(0, wrote).replace(/:$/, '') : '';
  if (flagText !== '') details.reasons = flags(flagText);
  matchPieces(wrote >= 0 ? rest.slice(wrote + 1) : rest.trim(), /[;,] /, FIGURES, details);
  return { kind: 'checkpoint', details };
}

function flags(text: string): string[] {
  return text.split(' ').filter((flag) => flag !== '');
}

const seconds = (set: (d: CheckpointDetails, value: number | null) => void) => (g: RegExpExecArray, d: CheckpointDetails) => set(d, toFloat(g[1]));

const FIGURES: readonly PieceSpec<CheckpointDetails>[] = [
  [/^wrote (\d+) buffers \(([\d.]+)%\)$/, (g, d) => {
    d.buffers_written = toInt(g[1]);
    d.buffers_written_pct = toFloat(g[2]);
  }],
  // PG 18+.
  [/^wrote (\d+) SLRU buffers$/, (g, d) => (d.slru_buffers_written = toInt(g[1]))],
  [/^(\d+) WAL file\(s\) added$/, (g, d) => (d.wal_files_added = toInt(g[1]))],
  [/^(\d+) removed$/, (g, d) => (d.wal_files_removed = toInt(g[1]))],
  [/^(\d+) recycled$/, (g, d) => (d.wal_files_recycled = toInt(g[1]))],
  [/^write=([\d.]+) s$/, seconds((d, v) => (d.write_s = v))],
  [/^sync=([\d.]+) s$/, seconds((d, v) => (d.sync_s = v))],
  [/^total=([\d.]+) s$/, seconds((d, v) => (d.total_s = v))],
  [/^sync files=(\d+)$/, (g, d) => (d.sync_files = toInt(g[1]))],
  [/^longest=([\d.]+) s$/, seconds((d, v) => (d.sync_longest_s = v))],
  [/^average=([\d.]+) s$/, seconds((d, v) => (d.sync_average_s = v))],
  [/^distance=(\d+) kB$/, (g, d) => (d.distance_kb = toInt(g[1]))],
  [/^estimate=(\d+) kB$/, (g, d) => (d.estimate_kb = toInt(g[1]))],
  // PG 16+.
  [new RegExp(`^lsn=(${LSN_PATTERN})$`), (g, d) => (d.lsn = g[1] ?? null)],
  [new RegExp(`^redo lsn=(${LSN_PATTERN})$`), (g, d) => (d.redo_lsn = g[1] ?? null)],
  [/^(.*)$/, (g, d) => d.unknown_parts.push(g[1] ?? '')],
];

function empty(phase: CheckpointDetails['phase'], restartpoint: boolean): CheckpointDetails {
  return {
    phase,
    restartpoint,
    reasons: null,
    buffers_written: null,
    buffers_written_pct: null,
    slru_buffers_written: null,
    wal_files_added: null,
    wal_files_removed: null,
    wal_files_recycled: null,
    write_s: null,
    sync_s: null,
    total_s: null,
    sync_files: null,
    sync_longest_s: null,
    sync_average_s: null,
    distance_kb: null,
    estimate_kb: null,
    lsn: null,
    redo_lsn: null,
    seconds_apart: null,
    unknown_parts: [],
  };
}
