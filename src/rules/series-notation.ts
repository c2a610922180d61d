/**
 * Compact series notation for rule tests:
 *
 *   seriesOf('pg_standby_replay_pending_bytes', '0 0 5e6 9e6 9e6')
 *   seriesOf('pg_stat_replication_replay_lag_seconds{application_name="s1"}', '1 2 _ 70 null', { target: 'primary' })
 *
 * One value per step (`stepMs`, default 5 s) from `startMs` (default NOTATION_T0, ManualClock's
 * default start): a number, `null` for a sample whose value was NULL, `_` for no sample at all.
 * A malformed notation throws: it is a bug in the test, not data.
 */
import type { Labels } from '../domain/index.js';
import type { SeriesData, SeriesPoint } from './rule-view.js';

/** 2026-01-01T00:00:00Z, where ManualClock starts by default. */
export const NOTATION_T0 = Date.UTC(2026, 0, 1);
export const NOTATION_STEP_MS = 5_000;

export interface NotationOptions {
  target?: string;
  startMs?: number;
  stepMs?: number;
}

const SPEC = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$/;
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*$/;

export function parseSeriesSpec(spec: string): { name: string; labels: Labels } {
  const g = SPEC.exec(spec.trim());
  if (!g || g[1] === undefined) throw new Error(`series notation: bad name or labels in ${JSON.stringify(spec)}`);
  const labels: Record<string, string> = {};
  const body = g[2]?.trim() ?? '';
  if (body !== '') {
    for (const part of splitLabels(body)) {
      const l = LABEL.exec(part);
      if (!l || l[1] === undefined || l[2] === undefined) {
        throw new Error(`series notation: bad label ${JSON.stringify(part)} in ${JSON.stringify(spec)} (expected key="value")`);
      }
      labels[l[1]] = l[2].replace(/\\(.)/g, '$1');
    }
  }
  return { name: g[1], labels };
}

/** Splits `a="x,y",b="z"` on the commas outside quotes. */
function splitLabels(body: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts.filter((p) => p.trim() !== '');
}

export function parseSeriesValues(values: string, startMs: number, stepMs: number): SeriesPoint[] {
  const points: SeriesPoint[] = [];
  values.trim().split(/\s+/).forEach((token, i) => {
    const tsMs = startMs + i * stepMs;
    if (token === '_' || token === '') return;
    if (token === 'null') return void points.push({ tsMs, value: null });
    const value = Number(token);
    if (!Number.isFinite(value)) throw new Error(`series notation: bad value ${JSON.stringify(token)} at step ${i} of ${JSON.stringify(values)}`);
    points.push({ tsMs, value });
  });
  return points;
}

export function seriesOf(spec: string, values: string, options: NotationOptions = {}): SeriesData {
  const { name, labels } = parseSeriesSpec(spec);
  const points = parseSeriesValues(values, options.startMs ?? NOTATION_T0, options.stepMs ?? NOTATION_STEP_MS);
  return { name, target: options.target ?? 'primary', labels, points };
}
