import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../domain/index.js';
import { eventOf } from '../rules/memory-rule-view.js';
import { autovacuumDetails } from '../rules/test-events.js';
import { CHART_METRICS, LogChartCollector, type ChartMetric, type ReportChart, type SampledMetric } from './report-charts.js';
import { renderChartSvg } from './report-svg.js';

const T0 = Date.UTC(2026, 10, 30, 10);
const MIN = 60_000;

function vacuum(minute: number, database: string, table: string, deadNotRemovable: number, cutoffAge: number, elapsedS: number): AnyLogEvent {
  return eventOf('autovacuum', autovacuumDetails({
    database, table, tuples_dead_not_removable: deadNotRemovable, removable_cutoff_age_xids: cutoffAge, elapsed_s: elapsedS,
  }), { tsMs: T0 + minute * MIN }) as AnyLogEvent;
}

function chartsOf(events: AnyLogEvent[], sampled: Partial<Record<ChartMetric, SampledMetric>> = {}): Map<string, ReportChart> {
  const collector = new LogChartCollector();
  for (const e of events) collector.add(e);
  return new Map(collector.charts((metric) => sampled[metric] ?? []).map((c) => [c.id, c]));
}

describe('report charts', () => {
  it('draws dead rows not removable and cutoff age per database, and elapsed per table, from autovacuum reports alone', () => {
    const charts = chartsOf([vacuum(0, 'shop', 'orders', 100, 50, 1.5), vacuum(5, 'crm', 'leads', 7, 3, 0.2), vacuum(10, 'shop', 'lines', 900, 400, 12)]);
    expect(charts.get('dead_not_removable')!.lines).toEqual([
      { label: 'shop', source: 'log', points: [[T0, 100], [T0 + 10 * MIN, 900]] },
      { label: 'crm', source: 'log', points: [[T0 + 5 * MIN, 7]] },
    ]);
    expect(charts.get('removable_cutoff_age')!.lines.map((l) => l.label)).toEqual(['shop', 'crm']);
    expect(charts.get('autovacuum_elapsed')!.lines.map((l) => l.label)).toEqual(['shop.public.lines', 'shop.public.orders', 'crm.public.leads']);
    // The poller's charts say they were not sampled rather than drawing an empty box.
    for (const id of ['xmin_horizon', 'replica_lag', 'slot_retained_wal']) expect(charts.get(id)).toMatchObject({ lines: [], empty_reason: 'not sampled' });
    expect(charts.get('lock_waits')!.empty_reason).toBe('no lock wait logged or sampled');
  });

  it('names the holder of the xmin horizon as pg_stat_activity describes it, and says why a metric was not read', () => {
    const holder = { kind: 'backend', scope: 'database', owner: '', pid: '4242', datname: 'shop', usename: 'app', application_name: 'psql', backend_type: 'client backend', state: 'idle in transaction', name: '', query: 'SELECT 1' };
    const charts = chartsOf([], {
      [CHART_METRICS.horizonHolder]: [{ target: 'primary', labels: holder, points: [[T0, 10], [T0 + MIN, 2_000]] }],
      [CHART_METRICS.slotRetainedWal]: { unread: 'not drawn: 1200 series match' },
    });
    expect(charts.get('xmin_horizon')!.lines.map((l) => [l.label, l.source])).toEqual([['client backend pid 4242 on shop (idle in transaction): SELECT 1', 'samples']]);
    expect(charts.get('slot_retained_wal')!.empty_reason).toBe('not drawn: 1200 series match');
    expect(charts.get('dead_not_removable')!.empty_reason).toBe('no autovacuum report in this window');
  });

  it('keeps the eight lines with the highest peaks and counts the others', () => {
    const events = Array.from({ length: 11 }, (_, i) => vacuum(i, 'shop', `t${i}`, 0, 0, i));
    const elapsed = chartsOf(events).get('autovacuum_elapsed')!;
    expect(elapsed.lines.map((l) => l.label)).toEqual(['t10', 't9', 't8', 't7', 't6', 't5', 't4', 't3'].map((t) => `shop.public.${t}`));
    expect(elapsed.lines_omitted).toBe(3);
  });

  it('renders a chart as SVG with d3 ticks, one path per line and the alert periods shaded inside the window', () => {
    const chart = chartsOf([vacuum(0, 'shop', 'orders', 1_000, 0, 0), vacuum(30, 'shop', 'orders', 4_000, 0, 0)]).get('dead_not_removable')!;
    const svg = renderChartSvg(chart, { fromMs: T0, toMs: T0 + 60 * MIN }, [{ alertId: 7, fromMs: T0 + 45 * MIN, toMs: T0 + 90 * MIN }, { alertId: 8, fromMs: T0 - 90 * MIN, toMs: T0 - 60 * MIN }]);
    expect(svg.match(/<path /g)).toHaveLength(1);
    expect(svg.match(/<circle /g)).toHaveLength(2);
    // One shaded period: #7 clipped at the window's end; #8 ended before the window.
    expect([...svg.matchAll(/<a href="#alert-(\d+)"><rect class="alert-period" x="([\d.]+)" y="\d+" width="([\d.]+)"/g)].map((m) => [m[1], Number(m[2]) + Number(m[3])])).toEqual([['7', 728]]);
    expect(svg).toMatch(/>4k<\/text>/);
    expect(svg).toMatch(/>10:30<\/text>/);
  });

  it('puts the labels of alerts that start together one under the other', () => {
    const chart = chartsOf([vacuum(0, 'shop', 'orders', 1_000, 0, 0)]).get('dead_not_removable')!;
    const at = (alertId: number, minute: number) => ({ alertId, fromMs: T0 + minute * MIN, toMs: T0 + 60 * MIN });
    const svg = renderChartSvg(chart, { fromMs: T0, toMs: T0 + 60 * MIN }, [at(1, 50), at(2, 50), at(3, 10), at(4, 50)]);
    const labels = [...svg.matchAll(/<text class="alert-label" x="[\d.]+" y="(\d+)">#(\d)</g)].map((m) => [m[2], Number(m[1])]);
    const top = labels[0]![1] as number;
    expect(labels).toEqual([['1', top], ['2', top + 13], ['3', top], ['4', top + 26]]);
  });
});
