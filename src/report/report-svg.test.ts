import { describe, expect, it } from 'vitest';
import type { ReportChart } from './report-charts.js';
import { renderChartSvg } from './report-svg.js';

const AT = Date.parse('2026-11-30T13:00:00Z');
const MINUTE_MS = 60_000;

function ticks(spanMs: number): string[] {
  const chart: ReportChart = { id: 'c', title: 'c', unit: 'count', lines: [{ label: 'l', source: 'log', points: [[AT, 1], [AT + spanMs, 2]] }], empty_reason: null, lines_omitted: 0 };
  const svg = renderChartSvg(chart, { fromMs: AT, toMs: AT + spanMs }, []);
  return [...svg.matchAll(/<text class="tick" x="[\d.]+" y="[\d.]+" text-anchor="middle">([^<]*)<\/text>/g)].map((m) => m[1]!);
}

describe('the time axis', () => {
  it('reads as a 24-hour UTC clock, with seconds over a few minutes and the date over days', () => {
    expect(ticks(60 * MINUTE_MS)).toContain('13:10');
    expect(ticks(60 * MINUTE_MS).join(' ')).not.toMatch(/\b01:/);
    expect(ticks(3 * MINUTE_MS)).toContain('13:01:00');
    expect(ticks(3 * 24 * 60 * MINUTE_MS)).toContain('Dec 01 00:00');
  });
});
