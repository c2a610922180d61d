import { describe, expect, it } from 'vitest';
import type { ReportChart } from './report-charts.js';
import { renderChartSvg } from './report-svg.js';

const AT = Date.parse('2026-11-30T13:00:00Z');
const MINUTE_MS = 60_000;

function svgOf(spanMs: number, unit: ReportChart['unit'] = 'count', peak = 2): string {
  const chart: ReportChart = { id: 'c', title: 'c', unit, lines: [{ label: 'l', source: 'log', points: [[AT, 1], [AT + spanMs, peak]] }], empty_reason: null, lines_omitted: 0 };
  return renderChartSvg(chart, { fromMs: AT, toMs: AT + spanMs }, []);
}

function ticks(spanMs: number): string[] {
  return [...svgOf(spanMs).matchAll(/<text class="tick" x="[\d.]+" y="[\d.]+" text-anchor="middle">([^<]*)<\/text>/g)].map((m) => m[1]!);
}

describe('the time axis', () => {
  it('reads as a 24-hour UTC clock, with seconds over a few minutes and the date over days', () => {
    expect(ticks(60 * MINUTE_MS)).toContain('13:10');
    expect(ticks(60 * MINUTE_MS).join(' ')).not.toMatch(/\b01:/);
    expect(ticks(3 * MINUTE_MS)).toContain('13:01:00');
    expect(ticks(3 * 24 * 60 * MINUTE_MS)).toContain('Dec 01 00:00');
  });
});

describe('the value axis', () => {
  it('writes seconds as plain numbers, never in exponent form', () => {
    const labels = [...svgOf(MINUTE_MS, 'seconds', 40).matchAll(/text-anchor="end">([^<]*)<\/text>/g)].map((m) => m[1]!);
    expect(labels).toEqual(['0 s', '10 s', '20 s', '30 s', '40 s']);
  });
});
