import { describe, expect, it } from 'vitest';
import { alertLines, type ApiAlert } from './alert-feed.js';

const page = (id: number) => `http://127.0.0.1:9899/api/alerts/${id}`;
const alert = (id: number, state: ApiAlert['state'], summary = `summary ${id}`): ApiAlert =>
  ({ id, rule_id: 'xmin-horizon-held', severity: 'warning', state, target: 'primary', summary });

describe('alertLines', () => {
  it('prints a firing alert once with its page, then its resolution once', () => {
    const printed = new Map<number, string>();
    expect(alertLines([alert(1, 'firing')], printed, page).map((l) => l.text)).toEqual([
      'FIRING   xmin-horizon-held (warning, primary): summary 1\n         http://127.0.0.1:9899/api/alerts/1',
    ]);
    expect(alertLines([alert(1, 'firing', 'a newer summary')], printed, page)).toEqual([]);
    expect(alertLines([alert(1, 'resolved', 'last summary')], printed, page).map((l) => l.text)).toEqual([
      'RESOLVED xmin-horizon-held (primary): last summary',
    ]);
    expect(alertLines([alert(1, 'resolved')], printed, page)).toEqual([]);
  });

  it('tells an alert that fired and resolved between two reads, oldest first', () => {
    const lines = alertLines([alert(3, 'firing'), alert(2, 'resolved')], new Map(), page);
    expect(lines.map((l) => [l.id, l.state])).toEqual([[2, 'resolved'], [3, 'firing']]);
  });
});
