/**
 * What the shipped Grafana dashboards query: every panel's expressions and the metric names in
 * them, for the tests that hold them against what pgvigil exposes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const DASHBOARDS_DIR = 'dashboards';

interface Panel { title?: string; targets?: Array<{ expr: string }>; panels?: Panel[] }

export interface PanelQuery { file: string; title: string; expr: string }

const PROMQL_WORDS = new Set(['sum', 'max', 'min', 'avg', 'by', 'without', 'rate', 'irate', 'increase', 'topk', 'bottomk', 'histogram_quantile', 'label_values', 'le', 'count', 'on', 'ignoring']);

export function dashboardFiles(): string[] {
  return readdirSync(DASHBOARDS_DIR).filter((f) => f.endsWith('.json'));
}

export function panelQueries(file: string): PanelQuery[] {
  const dashboard = JSON.parse(readFileSync(join(DASHBOARDS_DIR, file), 'utf8')) as { panels: Panel[] };
  const walk = (panels: Panel[]): PanelQuery[] => panels.flatMap((p) => [
    ...(p.targets ?? []).map((t) => ({ file, title: p.title ?? '', expr: t.expr })),
    ...walk(p.panels ?? []),
  ]);
  return walk(dashboard.panels);
}

/** Metric names an expression reads: words with an underscore outside selectors, ranges and strings. */
export function metricNamesIn(expr: string): string[] {
  return [...expr.replace(/\{[^}]*\}|\[[^\]]*\]|"[^"]*"/g, '').matchAll(/\b([a-z_][a-z0-9_]*)\b/g)]
    .map((m) => m[1]!)
    .filter((word) => !PROMQL_WORDS.has(word) && word.includes('_'));
}

/** Every family an exposition shows, by its TYPE line or its samples (a histogram's as _bucket, _sum, _count). */
export function exposedFamilies(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const typed = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (typed) {
      for (const suffix of typed[2] === 'histogram' ? ['_bucket', '_sum', '_count'] : ['']) names.add(typed[1]! + suffix);
    } else if (line !== '' && !line.startsWith('#')) {
      names.add(/^[^{\s]+/.exec(line)![0]);
    }
  }
  return names;
}
