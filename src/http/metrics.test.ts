import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseExposition, withoutLiveValues } from '../../test/helpers/exposition.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { fixtureEvents } from '../../test/integration/metrics-real-feed.js';
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { AlertStore } from '../store/alert-store.js';
import { openStore } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';
import { Metrics, type MetricsOptions } from './metrics.js';
import { EventLoopDelays, SELF_REFRESH_MS } from './self-metrics.js';

function setup(options: Partial<MetricsOptions> = {}) {
  const clock = new ManualClock(Date.UTC(2026, 9, 14, 3, 0, 0));
  const db = openStore(':memory:');
  const writer = new StoreWriter(db, clock, silentLogger());
  const metrics = new Metrics({ clock, version: '0.1.0', ...options });
  metrics.attachWriter(writer);
  const scrape = async () => parseExposition(await metrics.render());
  return { clock, db, writer, metrics, scrape };
}

const sample = (name: string, labels: Record<string, string>, value: number | null, target = 'db1'): Sample => ({ target, name, labels, tsMs: 0, value });

describe('Metrics from log events', () => {
  let events: AnyLogEvent[];
  let scraped: Map<string, number>;

  beforeAll(async () => {
    events = await fixtureEvents();
    const { writer, scrape } = setup();
    writer.enqueue({ events });
    expect(writer.flush()).toBe(true);
    scraped = await scrape();
  });

  const of = <K extends AnyLogEvent['kind']>(kind: K) => events.filter((e): e is Extract<AnyLogEvent, { kind: K }> => e.kind === kind);

  it('counts events by kind and level', () => {
    const expected = new Map<string, number>();
    for (const e of events) {
      const key = `pg_log_events_total{target="${e.target}",kind="${e.kind}",level="${e.level}"}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    const got = [...scraped].filter(([k]) => k.startsWith('pg_log_events_total'));
    expect(new Map(got)).toEqual(expected);
  });

  it('counts autovacuum runs and their elapsed time per table', () => {
    const runs = of('autovacuum');
    expect(runs.length).toBeGreaterThan(5);
    let total = 0;
    for (const e of runs) {
      const d = e.details;
      const labels = `target="${e.target}",datname="${d.database}",schemaname="${d.schema}",relname="${d.table}"`;
      const same = runs.filter((r) => r.target === e.target && r.details.database === d.database && r.details.table === d.table && r.details.schema === d.schema);
      expect(scraped.get(`pg_log_autovacuum_elapsed_seconds_count{${labels}}`)).toBe(same.filter((r) => r.details.elapsed_s !== null).length);
      expect(scraped.get(`pg_log_autovacuum_elapsed_seconds_sum{${labels}}`)).toBeCloseTo(same.reduce((s, r) => s + (r.details.elapsed_s ?? 0), 0), 6);
      // The gauge holds what the latest run of the table reported.
      expect(scraped.get(`pg_log_autovacuum_dead_not_removable_tuples{${labels}}`)).toBe(same.at(-1)!.details.tuples_dead_not_removable);
      total += 1;
    }
    const counted = [...scraped].filter(([k]) => k.startsWith('pg_log_autovacuum_runs_total')).reduce((s, [, v]) => s + v, 0);
    expect(counted).toBe(total);
  });

  it('sums parallel workers planned and launched (PG 19)', () => {
    const withParallel = of('autovacuum').filter((e) => e.details.parallel_workers_planned !== null);
    expect(withParallel.length).toBeGreaterThan(0);
    const planned = withParallel.reduce((s, e) => s + e.details.parallel_workers_planned!, 0);
    const launched = withParallel.reduce((s, e) => s + (e.details.parallel_workers_launched ?? 0), 0);
    const sum = (prefix: string) => [...scraped].filter(([k]) => k.startsWith(prefix) && k.includes('phase="index_vacuum"')).reduce((s, [, v]) => s + v, 0);
    expect(sum('pg_log_autovacuum_parallel_workers_planned_total')).toBe(planned);
    expect(sum('pg_log_autovacuum_parallel_workers_launched_total')).toBe(launched);
  });

  it('counts recovery conflicts by reason and the waits that finished', () => {
    const conflicts = of('recovery_conflict');
    expect(conflicts.length).toBeGreaterThan(0);
    for (const e of conflicts) {
      const n = conflicts.filter((c) => c.target === e.target && c.database === e.database && c.details.reason === e.details.reason).length;
      expect(scraped.get(`pg_log_recovery_conflicts_total{target="${e.target}",datname="${e.database ?? ''}",reason="${e.details.reason ?? 'unknown'}"}`)).toBe(n);
    }
    const finished = of('recovery_conflict_wait').filter((e) => e.details.phase === 'finished');
    expect(finished.length).toBeGreaterThan(0);
    const waits = [...scraped].filter(([k]) => k.startsWith('pg_log_recovery_conflict_wait_seconds_count')).reduce((s, [, v]) => s + v, 0);
    expect(waits).toBe(finished.length);
  });

  it('counts deadlocks, lock timeouts, completed checkpoints and crashes', () => {
    const total = (prefix: string) => [...scraped].filter(([k]) => k.startsWith(prefix)).reduce((s, [, v]) => s + v, 0);
    expect(total('pg_log_deadlocks_total')).toBe(of('deadlock').length);
    expect(total('pg_log_lock_timeouts_total')).toBe(of('lock_timeout').length);
    expect(total('pg_log_checkpoints_total')).toBe(of('checkpoint').filter((e) => e.details.phase === 'complete').length);
    expect(total('pg_log_crashes_total')).toBe(of('server_crash').length);
    expect(of('deadlock').length * of('lock_timeout').length * of('server_crash').length).toBeGreaterThan(0);
  });

  it('keeps per-table series to the cap and counts the rest under relname=""', async () => {
    const { writer, scrape } = setup({ maxTablesPerTarget: 1 });
    const runs = of('autovacuum');
    writer.enqueue({ events: runs });
    writer.flush();
    const got = await scrape();
    const series = [...got.keys()].filter((k) => k.startsWith('pg_log_autovacuum_elapsed_seconds_count'));
    // Per target, one table keeps its own series; the others are counted per database under relname="".
    for (const target of new Set(runs.map((e) => e.target))) {
      expect(series.filter((k) => k.includes(`target="${target}"`) && !k.includes('relname=""'))).toHaveLength(1);
    }
    expect(series.filter((k) => k.includes('relname=""')).length).toBeGreaterThan(0);
    expect(series.reduce((s, k) => s + got.get(k)!, 0)).toBe(runs.filter((e) => e.details.elapsed_s !== null).length);
  });
});

describe('Metrics before any event', () => {
  it('exports every log-derived counter at 0 for the configured targets and the databases pg_database lists, and each target\'s cluster', async () => {
    const { writer, scrape } = setup({ targets: [{ name: 'db1', cluster: 'shop' }, { name: 'db2', cluster: null }] });
    const before = await scrape();
    expect(before.get('pgvigil_target_info{target="db1",cluster="shop"}')).toBe(1);
    expect(before.get('pgvigil_target_info{target="db2",cluster="db2"}')).toBe(1);
    expect(before.get('pg_log_events_total{target="db1",kind="lock_timeout",level="ERROR"}')).toBe(0);
    expect(before.get('pg_log_checkpoints_total{target="db1",kind="restartpoint"}')).toBe(0);
    expect(before.get('pg_log_crashes_total{target="db1"}')).toBe(0);
    expect(before.get('pg_log_recovery_conflict_wait_seconds_count{target="db1",reason="lock"}')).toBe(0);
    expect([...before.keys()].some((k) => k.includes('datname='))).toBe(false);

    writer.enqueue({ samples: ['shop', 'template0'].map((datname) => sample('pg_database_datfrozenxid_age_xids', { datname }, 700)) });
    expect(writer.flush()).toBe(true);
    const after = await scrape();
    for (const name of ['pg_log_autovacuum_runs_total', 'pg_log_autoanalyze_runs_total', 'pg_log_lock_timeouts_total', 'pg_log_deadlocks_total']) {
      expect(after.get(`${name}{target="db1",datname="shop"}`)).toBe(0);
    }
    expect(after.get('pg_log_recovery_conflicts_total{target="db1",datname="shop",reason="snapshot"}')).toBe(0);
    expect(after.get('pg_log_autovacuum_parallel_workers_launched_total{target="db1",datname="shop",phase="index_cleanup"}')).toBe(0);
    expect([...after.keys()].some((k) => k.includes('datname="template0"') && k.startsWith('pg_log_'))).toBe(false);
  });
});

describe('Metrics from a malformed event', () => {
  it('counts an event whose details break their kind contract instead of throwing into the writer', async () => {
    const { writer, scrape } = setup();
    const broken = { kind: 'autovacuum', target: 'db1', tsMs: 0, pid: 1, database: 'shop', user: null, level: 'LOG', sqlstate: null, message: 'x', details: null, source: { file: 'f', offset: 0, line: null } };
    writer.enqueue({ events: [broken as unknown as AnyLogEvent] });
    expect(writer.flush()).toBe(true);
    const got = await scrape();
    expect(got.get('pgvigil_metrics_event_errors_total{kind="autovacuum"}')).toBe(1);
    expect(got.get('pg_log_events_total{target="db1",kind="autovacuum",level="LOG"}')).toBe(1);
  });
});

describe('Metrics from polled samples', () => {
  it('exposes the latest value of each series with the target label and the collector help', async () => {
    const { writer, clock, metrics, scrape } = setup({ descriptions: [{ name: 'pg_stat_user_tables_n_dead_tup', type: 'gauge', help: 'Dead rows.' }] });
    writer.enqueue({ samples: [sample('pg_stat_user_tables_n_dead_tup', { datname: 'shop', relname: 'orders', schemaname: 'public' }, 10)] });
    writer.flush();
    await clock.advance(15_000);
    writer.enqueue({ samples: [sample('pg_stat_user_tables_n_dead_tup', { relname: 'orders', schemaname: 'public', datname: 'shop' }, 12)] });
    writer.flush();
    const text = await metrics.render();
    expect(text).toContain('# HELP pg_stat_user_tables_n_dead_tup Dead rows.\n# TYPE pg_stat_user_tables_n_dead_tup gauge\n');
    expect((await scrape()).get('pg_stat_user_tables_n_dead_tup{target="db1",datname="shop",relname="orders",schemaname="public"}')).toBe(12);
  });

  it('hides a series whose latest value is NULL instead of printing 0', async () => {
    const { writer, scrape } = setup();
    writer.enqueue({ samples: [sample('pg_replication_slots_xmin_age_xids', { slot_name: 's' }, 5)] });
    writer.enqueue({ samples: [sample('pg_replication_slots_xmin_age_xids', { slot_name: 's' }, null)] });
    writer.flush();
    expect([...(await scrape()).keys()].filter((k) => k.startsWith('pg_replication_slots'))).toEqual([]);
  });

  it('drops series not updated for staleAfterMs', async () => {
    const { writer, clock, scrape } = setup({ staleAfterMs: 60_000 });
    writer.enqueue({ samples: [sample('pg_a', {}, 1), sample('pg_b', {}, 2)] });
    writer.flush();
    await clock.advance(30_000);
    writer.enqueue({ samples: [sample('pg_b', {}, 3)] });
    writer.flush();
    await clock.advance(30_001);
    const got = await scrape();
    expect(got.has('pg_a{target="db1"}')).toBe(false);
    expect(got.get('pg_b{target="db1"}')).toBe(3);
    expect(got.get('pgvigil_metrics_series')).toBe(1);
  });

  it('serves the same rendering to every scrape until a commit brings new values', async () => {
    const { writer, metrics, scrape } = setup({ targets: [{ name: 'db1', cluster: null }] });
    writer.enqueue({ samples: [sample('pg_a', {}, 1)], events: (await fixtureEvents()).slice(0, 5) });
    writer.flush();
    const polledLines = (text: string) => text.split('\n').filter((l) => /^(pg_|pgvigil_alert)/.test(l));
    const first = await metrics.render();
    const second = await metrics.render();
    expect(polledLines(second)).toEqual(polledLines(first));
    expect((await scrape()).get('pgvigil_metrics_renders_total')).toBe(1);

    writer.enqueue({ samples: [sample('pg_a', {}, 2)] });
    writer.flush();
    const after = await scrape();
    expect(after.get('pg_a{target="db1"}')).toBe(2);
    expect(after.get('pgvigil_metrics_renders_total')).toBe(2);
  });

  it('sends the same exposition gzip\'d: it inflates to the identity bytes, compressed once per change', async () => {
    const { writer, metrics, db } = setup({ targets: [{ name: 'db1', cluster: null }] });
    writer.enqueue({ samples: [sample('pg_a', {}, 1), sample('pg_b', { datname: 'shop' }, 2)], events: (await fixtureEvents()).slice(0, 20) });
    writer.flush();
    const alerts = new AlertStore(db, []);
    metrics.attachAlerts(alerts);
    alerts.fire({ ruleId: 'deadlocks', dedupKey: 'd', severity: 'warning', target: 'db1', labels: {}, summary: 's', evidence: { eventIds: [], series: [], facts: {} } }, 1);
    const identity = Buffer.concat(await metrics.renderChunks('identity')).toString('utf8');
    const gzipped = await metrics.renderChunks('gzip');
    const inflated = gunzipSync(Buffer.concat(gzipped)).toString('utf8');
    expect(withoutLiveValues(inflated)).toBe(withoutLiveValues(identity));
    expect(identity).toContain('pgvigil_alert_firing{target="db1",rule="deadlocks",dedup_key="d",severity="warning"} 1\n');
    expect(identity).toContain('pg_b{target="db1",datname="shop"} 2\n');
    // The compressed cached part is kept: the next scrape sends the same buffer, not a new one.
    expect((await metrics.renderChunks('gzip'))[0]).toBe(gzipped[0]);
    writer.enqueue({ samples: [sample('pg_a', {}, 3)] });
    writer.flush();
    const changed = await metrics.renderChunks('gzip');
    expect(changed[0]).not.toBe(gzipped[0]);
    expect(gunzipSync(Buffer.concat(changed)).toString('utf8')).toContain('pg_a{target="db1"} 3\n');
  });

  it('keeps every metric family in one piece, pgvigil\'s own health last', async () => {
    const { writer, metrics } = setup({ targets: [{ name: 'db1', cluster: null }] });
    writer.enqueue({ samples: [sample('pg_a', {}, 1)], events: await fixtureEvents() });
    writer.flush();
    const text = await metrics.render();
    const families = text.split('\n').filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2]!);
    const familyOf = (line: string): string => {
      if (line.startsWith('#')) return line.split(' ')[2]!;
      const name = /^[^{ ]+/.exec(line)![0];
      return families.includes(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    };
    const runs = text.split('\n').filter((l) => l !== '').map(familyOf);
    const seen = new Set<string>();
    for (const [i, family] of runs.entries()) {
      if (family !== runs[i - 1]) {
        expect(seen.has(family), `${family} appears in two places`).toBe(false);
        seen.add(family);
      }
    }
    expect(families.indexOf('pg_a')).toBeLessThan(families.indexOf('pgvigil_build_info'));
    expect(families.indexOf('pg_log_events_total')).toBeLessThan(families.indexOf('pgvigil_build_info'));
  });

  it('renders again when the oldest series goes stale, with no commit in between', async () => {
    const { writer, clock, scrape } = setup({ staleAfterMs: 60_000 });
    writer.enqueue({ samples: [sample('pg_a', {}, 1)] });
    writer.flush();
    expect((await scrape()).get('pg_a{target="db1"}')).toBe(1);
    await clock.advance(60_001);
    const got = await scrape();
    expect(got.has('pg_a{target="db1"}')).toBe(false);
    expect(got.get('pgvigil_metrics_series')).toBe(0);
  });

  it('hides a target series while its server is unreachable (pg_up 0), keeping pg_up', async () => {
    const { writer, scrape } = setup();
    writer.enqueue({ samples: [sample('pg_up', {}, 1), sample('pg_stat_database_xact_commit_total', { datname: 'shop' }, 5), sample('pg_up', {}, 1, 'db2'), sample('pg_x', {}, 2, 'db2')] });
    writer.flush();
    writer.enqueue({ samples: [sample('pg_up', {}, 0)] });
    writer.flush();
    expect([...(await scrape()).keys()].filter((k) => k.startsWith('pg_'))).toEqual(['pg_up{target="db1"}', 'pg_up{target="db2"}', 'pg_x{target="db2"}']);
    writer.enqueue({ samples: [sample('pg_up', {}, 1)] });
    writer.flush();
    expect((await scrape()).get('pg_stat_database_xact_commit_total{target="db1",datname="shop"}')).toBe(5);
  });

  it('refuses series past the limit and counts them', async () => {
    const { writer, scrape } = setup({ maxSeries: 2 });
    writer.enqueue({ samples: ['a', 'b', 'c', 'd'].map((relname) => sample('pg_x', { relname }, 1)) });
    writer.enqueue({ samples: [sample('pg_x', { relname: 'd' }, 2)] });
    writer.flush();
    const got = await scrape();
    expect([...got.keys()].filter((k) => k.startsWith('pg_x'))).toEqual(['pg_x{target="db1",relname="a"}', 'pg_x{target="db1",relname="b"}']);
    expect(got.get('pgvigil_metrics_dropped_series')).toBe(2);
    expect(got.get('pgvigil_metrics_refused_samples_total{reason="series_limit"}')).toBe(3);
    expect(got.get('pgvigil_metrics_series_limit')).toBe(2);
  });

  it('refuses names and labels Prometheus cannot take, and pgvigil own names', async () => {
    const { writer, scrape } = setup();
    writer.enqueue({ samples: [sample('pg:bad', {}, 1), sample('pg_ok', { 'bad-label': 'x' }, 1), sample('pgvigil_metrics_series', {}, 1), sample('pg_log_events_total', {}, 1)] });
    writer.flush();
    const got = await scrape();
    expect(got.get('pgvigil_metrics_refused_samples_total{reason="invalid_name"}')).toBe(1);
    expect(got.get('pgvigil_metrics_refused_samples_total{reason="invalid_label"}')).toBe(1);
    expect(got.get('pgvigil_metrics_refused_samples_total{reason="reserved_name"}')).toBe(2);
    expect(got.get('pgvigil_metrics_series')).toBe(0);
  });

  it('escapes label values and types counters by their _total suffix', async () => {
    const { writer, metrics } = setup();
    writer.enqueue({ samples: [sample('pg_stat_user_tables_seq_scan_total', { relname: 'we"ird\\na\nme' }, 7)] });
    writer.flush();
    const text = await metrics.render();
    expect(text).toContain('# TYPE pg_stat_user_tables_seq_scan_total counter\n');
    expect(text).toContain('pg_stat_user_tables_seq_scan_total{target="db1",relname="we\\"ird\\\\na\\nme"} 7\n');
  });
});

describe('Metrics without statement text or process ids (the store keeps them for the rules)', () => {
  const HORIZON = 'db1\u0000pg_xmin_horizon\u0000';
  const holder = (pid: string, query: string, age: number, xactStart: number) => [
    sample('pg_xmin_horizon_holder_age_xids', { kind: 'backend', pid, datname: 'shop', usename: 'app', application_name: 'web', state: 'idle in transaction', query }, age),
    sample('pg_xmin_horizon_holder_xact_start_timestamp_seconds', { kind: 'backend', pid, datname: 'shop', usename: 'app', application_name: 'web', state: 'idle in transaction', query }, xactStart),
  ];
  const waiter = (pid: string, wait: number) => sample('pg_lock_waits_session_wait_seconds', { datname: 'shop', pid, relname: 'orders', blocking_pids: '7', query: `UPDATE orders SET note = 'hunter2' WHERE id = ${pid}` }, wait);
  const HOLDER = 'target="db1",application_name="web",datname="shop",kind="backend",state="idle in transaction",usename="app"';

  it('shows sessions that differ only in pid or query as one series: the largest value, the earliest timestamp', async () => {
    const { db, writer, clock, scrape, metrics } = setup();
    writer.enqueue({ samples: [...holder('102', 'SELECT 2', 900, 2_000), ...holder('101', "SELECT 'hunter2'", 500, 1_000), waiter('202', 8), waiter('201', 3)], snapshot: HORIZON });
    writer.flush();
    const text = await metrics.render();
    expect(text).not.toMatch(/hunter2|query=|pid=|blocking_pids=/);
    const got = await scrape();
    expect(got.get(`pg_xmin_horizon_holder_age_xids{${HOLDER}}`)).toBe(900);
    expect(got.get(`pg_xmin_horizon_holder_xact_start_timestamp_seconds{${HOLDER}}`)).toBe(1_000);
    expect(got.get('pg_lock_waits_session_wait_seconds{target="db1",datname="shop",relname="orders"}')).toBe(8);
    // The next run's value replaces the last one's (no merge across runs): the holder of 900 ended.
    await clock.advance(5_000);
    writer.enqueue({ samples: [...holder('101', "SELECT 'hunter2'", 510, 1_000)], snapshot: HORIZON });
    writer.flush();
    expect((await scrape()).get(`pg_xmin_horizon_holder_age_xids{${HOLDER}}`)).toBe(510);
    // What the rules read is stored whole.
    const stored = db.prepare("SELECT labels FROM series WHERE name = 'pg_lock_waits_session_wait_seconds'").all() as Array<{ labels: string }>;
    expect(stored.map((s) => new Map(JSON.parse(s.labels) as Array<[string, string]>).get('pid')).sort()).toEqual(['201', '202']);
  });
});

describe('Metrics from snapshot runs (a run is all of its series)', () => {
  // Keys as the poll scheduler makes them: target, collector, database.
  const SHOP = 'db1\u0000pg_stat_user_tables\u0000shop';
  const CRM = 'db1\u0000pg_stat_user_tables\u0000crm';
  const DATABASES = 'db1\u0000pg_stat_database\u0000postgres';
  const dead = (datname: string, relname: string, value = 1) => sample('pg_stat_user_tables_n_dead_tup', { datname, relname }, value);
  const tables = (got: Map<string, number>) => [...got.keys()].filter((k) => k.startsWith('pg_stat_user_tables_n_dead_tup')).sort();
  const series = (datname: string, relname: string) => `pg_stat_user_tables_n_dead_tup{target="db1",datname="${datname}",relname="${relname}"}`;

  it('drops a series the next completed run of its collector and database lacks, and only that one', async () => {
    const { writer, clock, scrape } = setup();
    writer.enqueue({ samples: [dead('shop', 'orders'), dead('shop', 'dropped')], snapshot: SHOP });
    writer.enqueue({ samples: [dead('crm', 'dropped')], snapshot: CRM });
    writer.enqueue({ samples: [sample('pg_stat_database_xact_commit_total', { datname: 'shop' }, 5)], snapshot: DATABASES });
    writer.flush();
    expect(tables(await scrape())).toEqual([series('crm', 'dropped'), series('shop', 'dropped'), series('shop', 'orders')]);
    await clock.advance(15_000);
    writer.enqueue({ samples: [dead('shop', 'orders', 2)], snapshot: SHOP });
    writer.flush();
    const got = await scrape();
    expect(tables(got)).toEqual([series('crm', 'dropped'), series('shop', 'orders')]);
    expect(got.get(series('shop', 'orders'))).toBe(2);
    expect(got.get('pg_stat_database_xact_commit_total{target="db1",datname="shop"}')).toBe(5);
    expect(got.get('pgvigil_metrics_series')).toBe(3);
  });

  it('keeps everything while no run completes, and shows a series again when a run has it again', async () => {
    const { writer, clock, scrape } = setup();
    writer.enqueue({ samples: [dead('shop', 'orders'), dead('shop', 'audit')], snapshot: SHOP });
    writer.flush();
    // A failed or skipped run sends nothing: other keys' runs go on, this key's series stay.
    await clock.advance(60_000);
    writer.enqueue({ samples: [dead('crm', 'leads')], snapshot: CRM });
    writer.flush();
    expect(tables(await scrape())).toEqual([series('crm', 'leads'), series('shop', 'audit'), series('shop', 'orders')]);
    writer.enqueue({ samples: [dead('shop', 'orders')], snapshot: SHOP });
    writer.flush();
    expect(tables(await scrape())).toEqual([series('crm', 'leads'), series('shop', 'orders')]);
    writer.enqueue({ samples: [dead('shop', 'orders'), dead('shop', 'audit', 7)], snapshot: SHOP });
    writer.flush();
    const got = await scrape();
    expect(got.get(series('shop', 'audit'))).toBe(7);
    expect(got.get('pgvigil_metrics_series')).toBe(3);
  });

  it('retires every series of a run that found nothing (the last table dropped, the database gone)', async () => {
    const { writer, scrape } = setup();
    writer.enqueue({ samples: [dead('shop', 'orders'), dead('shop', 'audit')], snapshot: SHOP });
    writer.flush();
    writer.enqueue({ samples: [], snapshot: SHOP });
    writer.flush();
    const got = await scrape();
    expect(tables(got)).toEqual([]);
    expect(got.get('pgvigil_metrics_series')).toBe(0);
  });

  it('applies several runs of one key in a commit in their order', async () => {
    const { writer, scrape } = setup();
    writer.enqueue({ samples: [dead('shop', 'orders')], snapshot: SHOP });
    writer.enqueue({ samples: [dead('shop', 'orders'), dead('shop', 'audit')], snapshot: SHOP });
    writer.flush();
    expect(tables(await scrape())).toEqual([series('shop', 'audit'), series('shop', 'orders')]);
    writer.enqueue({ samples: [dead('shop', 'orders'), dead('shop', 'audit')], snapshot: SHOP });
    writer.enqueue({ samples: [dead('shop', 'orders')], snapshot: SHOP });
    writer.flush();
    expect(tables(await scrape())).toEqual([series('shop', 'orders')]);
  });

  it('keeps the series count and the dropped-series gauge right as runs retire series', async () => {
    const { writer, scrape } = setup({ maxSeries: 2 });
    writer.enqueue({ samples: [dead('shop', 'a'), dead('shop', 'b'), dead('shop', 'c')], snapshot: SHOP });
    writer.flush();
    let got = await scrape();
    expect([got.get('pgvigil_metrics_series'), got.get('pgvigil_metrics_dropped_series')]).toEqual([2, 1]);
    // b and c are gone: b frees its place, c is no longer a series refused.
    writer.enqueue({ samples: [dead('shop', 'a')], snapshot: SHOP });
    writer.flush();
    got = await scrape();
    expect([got.get('pgvigil_metrics_series'), got.get('pgvigil_metrics_dropped_series')]).toEqual([1, 0]);
    writer.enqueue({ samples: [dead('shop', 'a'), dead('shop', 'c')], snapshot: SHOP });
    writer.flush();
    got = await scrape();
    expect(tables(got)).toEqual([series('shop', 'a'), series('shop', 'c')]);
    expect([got.get('pgvigil_metrics_series'), got.get('pgvigil_metrics_dropped_series')]).toEqual([2, 0]);
  });

  it('does not count a series twice when it went stale before its run retired it', async () => {
    const { writer, clock, scrape } = setup({ staleAfterMs: 60_000 });
    writer.enqueue({ samples: [dead('shop', 'a'), dead('shop', 'b')], snapshot: SHOP });
    writer.flush();
    await clock.advance(60_001);
    writer.enqueue({ samples: [dead('crm', 'x')], snapshot: CRM });
    writer.flush();
    expect((await scrape()).get('pgvigil_metrics_series')).toBe(1);
    writer.enqueue({ samples: [dead('shop', 'a')], snapshot: SHOP });
    writer.flush();
    const got = await scrape();
    expect(tables(got)).toEqual([series('crm', 'x'), series('shop', 'a')]);
    expect(got.get('pgvigil_metrics_series')).toBe(2);
  });
});

describe('Metrics of pgvigil itself', () => {
  it('shows firing alerts and forgets resolved ones', async () => {
    const { db, metrics } = setup();
    const alerts = new AlertStore(db, []);
    alerts.fire({ ruleId: 'before-attach', dedupKey: 'b', severity: 'info', target: 'db1', labels: {}, summary: 's', evidence: { eventIds: [], series: [], facts: {} } }, 1);
    metrics.attachAlerts(alerts);
    alerts.fire({ ruleId: 'vacuum-held-back', dedupKey: 'k', severity: 'critical', target: 'db1', labels: { 'table-name': 'orders', rule: 'spoof' }, summary: 's', evidence: { eventIds: [], series: [], facts: {} } }, 2);
    const text = await metrics.render();
    expect(text).toContain('pgvigil_alert_firing{target="db1",rule="before-attach",dedup_key="b",severity="info"} 1\n');
    expect(text).toContain('pgvigil_alert_firing{target="db1",rule="vacuum-held-back",dedup_key="k",severity="critical",table_name="orders"} 1\n');
    expect(text).toContain('pgvigil_alert_cause_info{target="db1",rule="vacuum-held-back",dedup_key="k",summary="s"} 1\n');
    alerts.resolve('k', 3);
    expect(await metrics.render()).not.toContain('vacuum-held-back');
  });

  it('exports the failure counters at 0 before their first failure, for every known reason', async () => {
    const { scrape, writer } = setup({
      sources: {
        tailers: () => [{ target: 'db1', source: '/pglog', linesRead: 0, bytesRead: 0, parseFailures: {}, lagBytes: null, lagSeconds: null }],
        collectors: () => [{ target: 'db1', collector: 'pg_standby', polls: 0, errorsByCode: {}, lastDurationMs: null }],
        notifiers: () => [{ channel: 'pagerduty', queueDepth: 0, rejected: 0, delivered: 0, failures: {} }],
      },
    });
    writer.enqueue({ samples: [sample('pg_a', {}, 1)] });
    writer.flush();
    const got = await scrape();
    for (const reason of ['prefix_mismatch', 'invalid_timestamp', 'csv_malformed', 'json_malformed', 'not_postgres']) {
      expect(got.get(`pgvigil_log_parse_failures_total{target="db1",source="/pglog",reason="${reason}"}`), reason).toBe(0);
    }
    expect(got.get('pgvigil_collector_errors_total{target="db1",collector="pg_standby",code="57014"}')).toBe(0);
    for (const reason of ['network', 'timeout', 'http_429', 'http_5xx', 'rejected']) {
      expect(got.get(`pgvigil_notifier_failures_total{channel="pagerduty",reason="${reason}"}`), reason).toBe(0);
    }
  });

  it('reads the components stats getters in the background each second, and at a scrape that finds them older', async () => {
    const failures = { network: 2 };
    const { scrape, writer, clock, metrics } = setup({
      sources: {
        tailers: () => [{ target: 'db1', source: '/var/log/postgresql', linesRead: 120, bytesRead: 9_000, parseFailures: { bad_prefix: 3 }, lagBytes: 512, lagSeconds: null }],
        collectors: () => [{ target: 'db1', collector: 'pg_stat_user_tables', polls: 4, errorsByCode: { '57014': 1 }, lastDurationMs: 250 }],
        writer: () => ({ failing: false, committedRows: 77, backlogRows: 5, droppedSamples: 6 }),
        storeSizeBytes: () => 4096,
        notifiers: () => [{ channel: 'pagerduty', queueDepth: 2, rejected: 1, delivered: 9, failures }],
        retention: () => ({ failures: 3, rowsDeleted: 1_200, unforwardedDeleted: { events: 4, samples: 0 } }),
      },
    });
    writer.enqueue({ samples: [sample('pg_a', {}, 1)] });
    writer.flush();
    const got = await scrape();
    const tailer = 'target="db1",source="/var/log/postgresql"';
    expect(got.get(`pgvigil_log_lines_read_total{${tailer}}`)).toBe(120);
    expect(got.get(`pgvigil_log_read_bytes_total{${tailer}}`)).toBe(9_000);
    expect(got.get(`pgvigil_log_parse_failures_total{${tailer},reason="bad_prefix"}`)).toBe(3);
    expect(got.get(`pgvigil_log_lag_bytes{${tailer}}`)).toBe(512);
    expect(got.has(`pgvigil_log_lag_seconds{${tailer}}`)).toBe(false);
    expect(got.get('pgvigil_collector_last_duration_seconds{target="db1",collector="pg_stat_user_tables"}')).toBe(0.25);
    expect(got.get('pgvigil_collector_errors_total{target="db1",collector="pg_stat_user_tables",code="57014"}')).toBe(1);
    expect(got.get('pgvigil_collector_polls_total{target="db1",collector="pg_stat_user_tables"}')).toBe(4);
    expect(got.get('pgvigil_store_rows_written_total')).toBe(77);
    expect(got.get('pgvigil_store_samples_dropped_total')).toBe(6);
    expect(got.get('pgvigil_store_size_bytes')).toBe(4096);
    expect(got.get('pgvigil_retention_failures_total')).toBe(3);
    expect(got.get('pgvigil_retention_deleted_rows_total')).toBe(1_200);
    expect(got.get('pgvigil_retention_unforwarded_deleted_total{table="events"}')).toBe(4);
    expect(got.get('pgvigil_retention_unforwarded_deleted_total{table="samples"}')).toBe(0);
    expect(got.get('pgvigil_store_write_duration_seconds_count')).toBe(1);
    expect(got.get('pgvigil_notifier_queue_depth{channel="pagerduty"}')).toBe(2);
    expect(got.get('pgvigil_notifier_failures_total{channel="pagerduty",reason="network"}')).toBe(2);
    const networkFailures = async (): Promise<number | undefined> => (await scrape()).get('pgvigil_notifier_failures_total{channel="pagerduty",reason="network"}');
    failures.network = 5;
    // Written less than a refresh ago: the scrape copies it.
    await clock.advance(SELF_REFRESH_MS - 1);
    expect(await networkFailures()).toBe(2);
    // Nobody refreshes it (not started): a scrape finding it 1.5 periods old writes it.
    await clock.advance(SELF_REFRESH_MS);
    expect(await networkFailures()).toBe(5);
    // Started: the refresh writes it each period, and a scrape finds what the last one read.
    await metrics.start();
    failures.network = 6;
    expect(await networkFailures()).toBe(5);
    await clock.advance(SELF_REFRESH_MS);
    failures.network = 7;
    expect(await networkFailures()).toBe(6);
    await metrics.stop();
    await clock.advance(SELF_REFRESH_MS);
    expect(await networkFailures()).toBe(6);
  });

  it('exposes the process figures a soak watches: memory, heap, open descriptors and the event loop delay since the last scrape', async () => {
    const { scrape, clock, metrics } = setup();
    await metrics.start();
    await scrape();
    // Block the loop for 150 ms: the window the next refresh writes must show it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const until = performance.now() + 150;
    while (performance.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await clock.advance(SELF_REFRESH_MS);
    const got = await scrape();
    // The same window until a refresh: a scrape in between repeats it.
    expect((await scrape()).get('nodejs_eventloop_lag_max_seconds')).toBe(got.get('nodejs_eventloop_lag_max_seconds'));
    expect(got.get('nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0.15);
    expect(got.get('nodejs_eventloop_lag_p50_seconds')).toBeLessThanOrEqual(got.get('nodejs_eventloop_lag_p99_seconds')!);
    expect(got.get('nodejs_eventloop_lag_p99_seconds')).toBeLessThanOrEqual(got.get('nodejs_eventloop_lag_max_seconds')!);
    // When the next window starts is told by ticks fed one by one (below): a real loop's next
    // window could hold a stall of its own as long as the block on a shared machine.
    await metrics.stop();
    expect(got.get('process_open_fds')).toBeGreaterThan(2);
    expect(got.get('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(got.get('nodejs_heap_size_used_bytes')).toBeLessThanOrEqual(got.get('nodejs_heap_size_total_bytes')!);
    expect(got.get('process_resident_memory_bytes')).toBeGreaterThan(got.get('nodejs_heap_size_used_bytes')!);
  });

  it('survives a stats getter that throws in the background refresh, and the scrape that finds the health stale answers the error', async () => {
    let broken = false;
    const { clock, metrics } = setup({ sources: { writer: () => { if (broken) throw new Error('writer stats unavailable'); return { failing: false, committedRows: 1, backlogRows: 0, droppedSamples: 0 }; } } });
    await metrics.start();
    await metrics.render();
    broken = true;
    await clock.advance(2 * SELF_REFRESH_MS);
    await expect(metrics.render()).rejects.toThrow('writer stats unavailable');
    broken = false;
    expect(await metrics.render()).toContain('pgvigil_store_rows_written_total 1\n');
    await metrics.stop();
  });

});

describe('event-loop delay windows (ticks fed one by one)', () => {
  const tick = (delays: EventLoopDelays, ms: number, times = 1) => {
    for (let i = 0; i < times; i++) delays.record(ms * 1e6);
  };

  it('reports the ticks up to the last refresh, and starts a new window at the first refresh after a scrape took them', () => {
    const delays = new EventLoopDelays();
    expect(delays.figures).toEqual({ p50: 0, p99: 0, max: 0 });
    tick(delays, 10, 99);
    tick(delays, 150);
    delays.refresh();
    expect(delays.figures.max).toBeCloseTo(0.15, 2);
    expect(delays.figures.p50).toBeCloseTo(0.01, 3);
    delays.markReported();
    tick(delays, 12, 5);
    delays.refresh();
    expect(delays.figures).toEqual({ p50: expect.closeTo(0.012, 3), p99: expect.closeTo(0.012, 3), max: expect.closeTo(0.012, 3) });
  });

  it('keeps a block in the window until a scrape reports it, however many refreshes pass unscraped', () => {
    const delays = new EventLoopDelays();
    tick(delays, 150);
    for (let refresh = 0; refresh < 3; refresh++) {
      tick(delays, 10, 100);
      delays.refresh();
    }
    expect(delays.figures.max).toBeCloseTo(0.15, 2);
    delays.markReported();
    tick(delays, 10, 100);
    delays.refresh();
    expect(delays.figures.max).toBeCloseTo(0.01, 3);
  });

  it('keeps the figures it had through a refresh without a tick', () => {
    const delays = new EventLoopDelays();
    tick(delays, 40);
    delays.refresh();
    delays.markReported();
    delays.refresh();
    expect(delays.figures.max).toBeCloseTo(0.04, 3);
  });
});
