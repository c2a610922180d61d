/**
 * The shipped Grafana dashboards may only query metrics pgvigil exposes: a renamed metric must
 * fail here, not leave an empty panel on someone's wall. This checks the names pgvigil can
 * expose; test/integration/demo.test.ts checks them against the exposition of a real run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCollectors } from '../../src/collectors/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Metrics } from '../../src/http/metrics.js';
import { ALERT_FIRING_METRIC } from '../../src/http/firing-alerts.js';
import { SCHEDULER_METRICS } from '../../src/sources/poll-scheduler.js';
import { DASHBOARDS_DIR, dashboardFiles, metricNamesIn, panelQueries } from '../helpers/dashboards.js';

async function exposedMetricNames(): Promise<Set<string>> {
  const metrics = new Metrics({ clock: new ManualClock(), sources: { tailers: () => [], collectors: () => [], writer: () => ({ failing: false, lastWriteMs: 0, committedRows: 0, backlogRows: 0, droppedSamples: 0 }), storeSizeBytes: () => 0, notifiers: () => [] } });
  const families = [...(await metrics.render()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
    type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!]);
  return new Set([...families, ...createCollectors().flatMap((c) => c.metrics.map((m) => m.name)), ...SCHEDULER_METRICS.map((m) => m.name), ALERT_FIRING_METRIC]);
}

describe('dashboards', () => {
  const files = dashboardFiles();

  it('ships the overview and one dashboard per area', () => {
    expect(files.sort()).toEqual(['pgvigil-locks.json', 'pgvigil-overview.json', 'pgvigil-repack.json', 'pgvigil-replication.json', 'pgvigil-self.json', 'pgvigil-vacuum.json']);
  });

  it.each(files)('%s takes its datasource as an input and queries only metrics pgvigil can expose', async (file) => {
    const dashboard = JSON.parse(readFileSync(join(DASHBOARDS_DIR, file), 'utf8')) as { __inputs?: Array<{ name: string; pluginId: string }> };
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    const known = await exposedMetricNames();
    const unknown = panelQueries(file).flatMap(({ title, expr }) => metricNamesIn(expr).filter((name) => !known.has(name)).map((name) => `${title}: ${name}`));
    expect(unknown).toEqual([]);
  });

  it.each(files)('%s tells sidecars apart: cluster, instance and target variables, and every query narrowed by instance', (file) => {
    const dashboard = JSON.parse(readFileSync(join(DASHBOARDS_DIR, file), 'utf8')) as { templating: { list: Array<{ name: string }> } };
    expect(dashboard.templating.list.map((v) => v.name).slice(0, 3)).toEqual(['cluster', 'instance', 'target']);
    // Two sidecars may watch servers of the same name (two 'main' clusters): the instance keeps them apart.
    expect(panelQueries(file).filter(({ expr }) => !expr.includes('instance=~"$instance"')).map(({ title }) => title)).toEqual([]);
  });
});
