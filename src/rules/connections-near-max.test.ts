import { describe, expect, it } from 'vitest';
import { connectionsNearMax, DEFAULTS } from './connections-near-max.js';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

// Steps of 30 s (the probe runs every 10 s; a coarser grid reads the same): the default sustain (5 min) is ten.
const STEP = 30_000;
const SUSTAIN_STEPS = DEFAULTS.sustainMs / STEP;
const at = (step: number) => T0 + step * STEP;
const rule = connectionsNearMax();
const grid = { stepMs: STEP };

/** max_connections 100 less 3 reserved for superusers (and `reserved` on 16+): 97 ordinary slots. */
function server(available: string, o: { reserved?: number; holders?: boolean } = {}): SeriesData[] {
  const steps = available.trim().split(/\s+/).length;
  const constant = (value: number) => Array<string>(steps).fill(String(value)).join(' ');
  const holder = (usename: string, app: string, datname: string, n: number) =>
    seriesOf(`pg_stat_activity_connections{datname="${datname}",usename="${usename}",application_name="${app}"}`, constant(n), grid);
  return [
    seriesOf('pg_connections_available', available, grid),
    seriesOf('pg_settings_max_connections', constant(100), grid),
    seriesOf('pg_settings_superuser_reserved_connections', constant(3), grid),
    ...(o.reserved === undefined ? [] : [seriesOf('pg_settings_reserved_connections', constant(o.reserved), grid)]),
    ...(o.holders === false ? [] : [
      holder('web', 'rails', 'shop', 60), holder('web', 'rails', 'ledger', 10), holder('etl', 'airflow', 'shop', 15),
      holder('pgvigil_monitor', 'pgvigil', 'postgres', 2), holder('alice', '', 'shop', 1),
    ]),
  ];
}

const repeat = (value: number, n: number) => Array<string>(n).fill(String(value)).join(' ');
const evaluateLast = (series: SeriesData[]) => {
  const last = at(series[0]!.points.length - 1);
  return rule.evaluate(new MemoryRuleView({ series, staleAfterMs: 2 * STEP }).at(last), last);
};

describe('connections-near-max at its defaults', () => {
  it('fires after 5 min at 90% or more of the ordinary slots, naming the users and applications that hold them', () => {
    // 97 ordinary slots; 7 left: 90 in use (93%).
    const [finding] = evaluateLast(server(repeat(7, SUSTAIN_STEPS + 1)));
    expect(finding?.summary).toBe('90 of 97 connection slots for ordinary roles on primary in use (93%) for 5 min (max_connections 100, 3 reserved); ' +
      'most by user (application): 70 web (rails), 15 etl (airflow), 2 pgvigil_monitor (pgvigil): ' +
      'once full, new connections are refused ("sorry, too many clients already")');
    expect(finding?.severity).toBe('warning');
    expect(finding?.evidence.facts).toMatchObject({ used_slots: 90, usable_slots: 97, reserved_slots: 3 });
  });

  it('is an error once no ordinary slot is left: users are refused now', () => {
    const [finding] = evaluateLast(server(`${repeat(5, SUSTAIN_STEPS)} 0`));
    expect(finding?.severity).toBe('error');
    expect(finding?.summary).toMatch(/^97 of 97 connection slots .*: new connections are refused now \("sorry, too many clients already"\)$/);
  });

  it('counts reserved_connections (PG 16+) out of the ordinary slots', () => {
    // 100 - 3 - 10 = 87 ordinary slots; 8 left: 79 in use (91%).
    const [finding] = evaluateLast(server(repeat(8, SUSTAIN_STEPS + 1), { reserved: 10 }));
    expect(finding?.summary).toMatch(/^79 of 87 connection slots for ordinary roles on primary in use \(91%\) for 5 min \(max_connections 100, 13 reserved\)/);
  });

  it('says no holder when pg_stat_activity was not sampled', () => {
    const [finding] = evaluateLast(server(repeat(7, SUSTAIN_STEPS + 1), { holders: false }));
    expect(finding?.summary).toMatch(/\(max_connections 100, 3 reserved\): once full/);
  });

  const quiet: Array<[string, SeriesData[]]> = [
    ['near miss: full one step less than the sustain', server(`50 ${repeat(7, SUSTAIN_STEPS)}`)],
    ['near miss: 89% in use for an hour', server(repeat(11, 120))],
    ['a burst that passed: full for 4 min, then room again', server(`${repeat(2, SUSTAIN_STEPS - 2)} 40`)],
    ['a normal day: a third of the slots', server(repeat(65, 40))],
  ];
  for (const [name, series] of quiet) it(`quiet: ${name}`, () => expect(evaluateLast(series)).toEqual([]));

  it('quiet without max_connections (pg_settings not sampled): no guess at the limit', () => {
    const series = server(repeat(1, SUSTAIN_STEPS + 1)).filter((s) => s.name !== 'pg_settings_max_connections');
    expect(evaluateLast(series)).toEqual([]);
  });

  it('fires once while it lasts and resolves when room comes back', () => {
    const view = new MemoryRuleView({ series: server(`${repeat(50, 2)} ${repeat(5, SUSTAIN_STEPS + 3)} ${repeat(50, 3)}`), staleAfterMs: 2 * STEP });
    const steps = transitionSteps(timeline([rule], view, instants(0, SUSTAIN_STEPS + 7, STEP), { refireMinIntervalMs: 3_600_000 }), T0, STEP);
    expect(steps).toEqual([
      ['fire', 'connections-near-max/primary', SUSTAIN_STEPS + 2],
      ['resolve', 'connections-near-max/primary', SUSTAIN_STEPS + 5],
    ]);
  });
});
