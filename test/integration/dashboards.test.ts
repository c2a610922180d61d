/**
 * The shipped Grafana dashboards may only query metrics pgvigil exposes: a renamed metric must
 * fail here, not leave an empty panel on someone's wall.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCollectors } from '../../src/collectors/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Metrics } from '../../src/http/metrics.js';
import { ALERT_FIRING_METRIC } from '../../src/http/firing-alerts.js';
import { SCHEDULER_METRICS } from '../../src/sources/poll-scheduler.js';

async function exposedMetricNames(): Promise<Set<string>> {
  const metrics = new Metrics({ clock: new ManualClock(), sources: { tailers: () => [], collectors: () => [], writer: () => ({ failing: false, lastWriteMs: 0, committedRows: 0, backlogRows: 0 }), storeSizeBytes: () => 0, notifiers: () => [] } });
  const families = [...(await metrics.render()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
    type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!]);
  return new Set([...families, ...createCollectors().flatMap((c) => c.metrics.map((m) => m.name)), ...SCHEDULER_METRICS.map((m) => m.name), ALERT_FIRING_METRIC]);
}

interface Panel { title?: string; targets?: Array<{ expr: string }>; panels?: Panel[] }

function expressions(panels: Panel[]): Array<{ title: string; expr: string }> {
  return panels.flatMap((p) => [...(p.targets ?? []).map((t) => ({ title: p.title ?? '', expr: t.expr })), ...expressions(p.panels ?? [])]);
}

const PROMQL_WORDS = new Set(['sum', 'max', 'min', 'avg', 'by', 'without', 'rate', 'irate', 'increase', 'topk', 'bottomk', 'histogram_quantile', 'label_values', 'le', 'count', 'on', 'ignoring']);

describe('dashboards', () => {
  const dir = 'dashboards';
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

  it('ships at least one dashboard', () => expect(files.length).toBeGreaterThan(0));

  it.each(files)('%s queries only metrics pgvigil exposes', async (file) => {
    const known = await exposedMetricNames();
    const dashboard = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { panels: Panel[] };
    const unknown = expressions(dashboard.panels).flatMap(({ title, expr }) =>
      [...expr.replace(/\{[^}]*\}|\[[^\]]*\]|"[^"]*"/g, '').matchAll(/\b([a-z_][a-z0-9_]*)\b/g)]
        .map((m) => m[1]!)
        .filter((word) => !PROMQL_WORDS.has(word) && /_/.test(word) && !known.has(word))
        .map((name) => `${title}: ${name}`));
    expect(unknown).toEqual([]);
  });
});
