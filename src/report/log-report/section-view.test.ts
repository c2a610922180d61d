import { describe, expect, it } from 'vitest';
import { sectionsMarkdown, sectionsText } from './section-render.js';
import { cellText, sectionView } from './section-view.js';

describe('any section result as facts and tables', () => {
  const result = {
    queries: 3, total_ms: 12.34567, other: { count: 0, total_ms: 0 },
    by_count: Array.from({ length: 12 }, (_, i) => ({ text: `SELECT ${i} | x`, count: 12 - i, users: [{ name: 'app', count: 2 }, { name: 'b', count: 1 }, { name: 'c', count: 1 }, { name: 'd', count: 1 }], max_ms: null })),
    per_minute: [{ minute: '2026-11-30T02:00:00.000Z', queries: 3 }],
  };

  it('prints numbers, name lists and objects on one line, long text cut', () => {
    expect(cellText(12.34567)).toBe('12.346');
    expect(cellText([{ name: 'app', count: 2 }, { name: 'b', count: 1 }, { name: 'c', count: 1 }, { name: 'd', count: 1 }])).toBe('app (2), b (1), c (1), +1');
    expect(cellText({ count: 1, total_ms: 2 })).toBe('count 1, total ms 2');
    expect(cellText(null)).toBe('');
    expect(cellText(`SELECT\n  ${'x'.repeat(200)}`)).toHaveLength(160);
  });

  it('keeps the ranked lists as tables and leaves the per-minute rows to the JSON', () => {
    const view = sectionView('temp_files', result);
    expect(view.title).toBe('Temp files');
    expect(view.facts).toEqual([['queries', '3'], ['total ms', '12.346'], ['other', 'count 0, total ms 0']]);
    expect(view.tables.map((t) => [t.title, t.columns, t.rows.length])).toEqual([['by count', ['text', 'count', 'users', 'max_ms'], 12]]);
    expect(view.notShown).toEqual([['per_minute', 1]]);
  });

  it('prints the top 10 rows of a list in text and Markdown, pipes escaped', () => {
    const text = sectionsText([sectionView('queries', result)]);
    expect(text).toContain('  by count (top 10 of 12)');
    expect(text).toContain('  per minute: 1 minutes (in --json)');
    expect(text.filter((line) => line.startsWith('    SELECT'))).toHaveLength(10);
    const md = sectionsMarkdown([sectionView('queries', result)]);
    expect(md).toContain('| SELECT 0 \\| x | 12 | app (2), b (1), c (1), +1 |  |');
  });
});
