/**
 * Incidents recorded on a real PostgreSQL 19rc1 (test/fixtures/logs), end to end from the rules'
 * side: the raw log through the real pipeline, events (and, where the incident needs them,
 * samples from the real pg_replication_slots mapping) committed by the StoreWriter, the engine
 * evaluating every rule over the SQLite store, and the alerts, their transitions and their outbox
 * rows written by the real AlertStore. Each scenario also checks that no other rule fired.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mapReplicationSlots } from '../../src/collectors/pg-replication-slots.js';
import { mapXminHorizon } from '../../src/collectors/pg-xmin-horizon.js';
import type { AnyLogEvent, Sample } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { WebhookNotifier } from '../../src/notify/webhook.js';
import { RULES_DEFAULTS, buildRules } from '../../src/rules/catalog.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { caseName, FIXTURES_DIR, readCase } from '../helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';

const TARGET = 'pg19';
const FORMATS = ['stderr', 'csvlog', 'jsonlog'] as const;

async function fixtureEvents(format: (typeof FORMATS)[number], scenario: string): Promise<AnyLogEvent[]> {
  const dir = path.join(FIXTURES_DIR, caseName(19, format, scenario));
  const fixture = readCase(dir);
  const parsed = await parseLogFile(path.join(dir, fixture.log_file), {
    format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone, target: TARGET,
  });
  return parsed.events;
}

interface Rig {
  db: Db;
  clock: ManualClock;
  engine: RuleEngine;
  at(tsMs: number): ReturnType<RuleEngine['evaluate']>;
  alerts(): Array<{ rule_id: string; state: string; severity: string; summary: string; evidence: string }>;
  transitions(ruleId: string): string[];
  outbox(ruleId: string): string[];
}

let open: Db[] = [];
afterEach(() => {
  for (const db of open) db.close();
  open = [];
});

/** A store holding `events` and `samples`, written the way the daemon writes them, and an engine over it. */
function rig(events: AnyLogEvent[], samples: Sample[] = []): Rig {
  const db = openStore(':memory:');
  open.push(db);
  const clock = new ManualClock(events[0]?.tsMs ?? 0);
  const writer = new StoreWriter(db, clock, silentLogger());
  writer.enqueue({ events, samples });
  expect(writer.flush()).toBe(true);
  const alerts = new AlertStore(db, [new WebhookNotifier({ url: 'http://127.0.0.1:9/hook' })]);
  const views = new StoreRuleViewSource(db, { targets: [{ name: TARGET, cluster: null }], staleAfterMs: 5_000 });
  const engine = new RuleEngine({ rules: buildRules(RULES_DEFAULTS), views, alerts, clock, log: silentLogger(), options: { holdDownMs: 60_000 } });
  return {
    db,
    clock,
    engine,
    at: (tsMs) => engine.evaluate(tsMs),
    alerts: () => db.prepare('SELECT rule_id, state, severity, summary, evidence FROM alerts ORDER BY id').all() as ReturnType<Rig['alerts']>,
    transitions: (ruleId) => db.prepare(
      'SELECT t.to_state FROM alert_transitions t JOIN alerts a ON a.id = t.alert_id WHERE a.rule_id = ? ORDER BY t.id',
    ).pluck().all(ruleId) as string[],
    outbox: (ruleId) => db.prepare(
      'SELECT o.action FROM outbox o JOIN alerts a ON a.id = o.alert_id WHERE a.rule_id = ? ORDER BY o.id',
    ).pluck().all(ruleId) as string[],
  };
}

const lastTs = (events: AnyLogEvent[], pick: (e: AnyLogEvent) => boolean) => events.filter(pick).at(-1)!.tsMs;

describe('rules on real PostgreSQL 19rc1 incidents', () => {
  for (const format of FORMATS) {
    it(`REPACK (CONCURRENTLY) cancelled by lock_timeout at the swap loses its run (${format})`, async () => {
      const events = await fixtureEvents(format, 'repack-lock-timeout-at-swap');
      const r = rig(events);
      const failedAt = lastTs(events, (e) => e.kind === 'lock_timeout');
      expect(r.at(failedAt + 1_000).fired).toHaveLength(1);
      const [alert] = r.alerts();
      expect(alert).toMatchObject({
        rule_id: 'repack-lost-at-swap',
        state: 'firing',
        severity: 'error',
        summary: 'REPACK (CONCURRENTLY) of repack_swap.accounts threw away 1 s of work at the final swap: ' +
          'lock_timeout expired after 1 s waiting for AccessExclusiveLock behind pid 27629',
      });
      // The REPACK statement (log_statement = ddl), its lock wait and the lock_timeout are the evidence.
      const cited = (JSON.parse(alert!.evidence) as { eventIds: number[] }).eventIds;
      const kinds = r.db.prepare(`SELECT kind FROM events WHERE id IN (${cited.join(',')}) ORDER BY id`).pluck().all();
      expect(kinds).toEqual(['ddl', 'lock_wait', 'lock_timeout']);

      // Gone after activeForMs (30 min) plus the hold-down: resolved, and the resolve is queued to notify.
      r.at(failedAt + 20 * 60_000);
      expect(r.alerts()[0]?.state).toBe('firing');
      r.at(failedAt + 31 * 60_000);
      r.at(failedAt + 32 * 60_000);
      expect(r.alerts().map((a) => a.state)).toEqual(['resolved']);
      expect(r.transitions('repack-lost-at-swap')).toEqual(['firing', 'resolved']);
      expect(r.outbox('repack-lost-at-swap')).toEqual(['trigger', 'resolve']);
    });
  }

  /**
   * pg_replication_slots as the 19rc1 server showed REPACK's slot (pg-messages.md §13.2, §13.3): the
   * decoding worker 27043 (the pid that logged "logical decoding found consistent point") holds it
   * for session 27041, which pg_xmin_horizon lists too; sampled every second while it existed,
   * mapped by the real collector code. `olderSnapshot`: a pg_dump whose transaction began a minute
   * before the REPACK is sampled as a holder beside it.
   */
  function repackSamples(started: number, ended: number, olderSnapshot: boolean): Sample[] {
    const samples: Sample[] = [];
    const ctx = (ts: number) => ({ target: TARGET, server: { versionNum: 190000, version: '19rc1', inRecovery: false, startedAtMs: 0 }, nowMs: ts });
    const session = (pid: number, application: string, ageXids: number, xactStartMs: number, query: string) => ({
      kind: 'backend', pid, datname: 'shop', usename: 'postgres', application_name: application, state: 'active', backend_type: 'client backend',
      name: null, plugin: null, slot_type: null, temporary: null, leader_pid: null, age_xids: ageXids, xact_start: xactStartMs / 1000,
      query_start: xactStartMs / 1000, query, kind_total: olderSnapshot ? 2 : 1, rank: 1,
    });
    for (let ts = started + 500; ts < ended; ts += 1_000) {
      samples.push(...mapReplicationSlots([{
        slot_name: 'pg_repack_27043', plugin: 'pgrepack', slot_type: 'logical', database: 'shop', temporary: true, active: true,
        active_pid: 27043, xmin_age_xids: null, catalog_xmin_age_xids: 3, restart_lsn_bytes: 220_821_664, confirmed_flush_lsn_bytes: null,
        retained_wal_bytes: 8192, wal_status: 'reserved', safe_wal_size: null, conflicting: false, invalidation_reason: null,
        inactive_since: null, active_backend_type: 'REPACK decoding worker', active_leader_pid: 27041, active_application_name: '',
        failover: false, synced: false,
      }], ctx(ts)));
      samples.push(...mapXminHorizon([
        session(27041, '', 3, started, 'REPACK (CONCURRENTLY) orders;'),
        ...(olderSnapshot ? [session(26990, 'pg_dump', 40, started - 60_000, 'COPY public.orders TO stdout;')] : []),
      ], ctx(ts)));
    }
    return samples;
  }

  it('REPACK (CONCURRENTLY) in database shop holds vacuum of other.public.hot_counters at one cutoff', async () => {
    const events = await fixtureEvents('stderr', 'repack-concurrently-holds-back-vacuum');
    const started = lastTs(events, (e) => e.kind === 'ddl' && e.details.command === 'REPACK');
    const ended = lastTs(events, (e) => e.message.startsWith('logical decoding is disabled'));
    const r = rig(events, repackSamples(started, ended, false));
    const lastVacuum = lastTs(events, (e) => e.kind === 'autovacuum');
    const report = r.at(lastVacuum + 100);
    expect(report.fired).toEqual(['repack-holds-vacuum/pg19/pg_repack_27043']);
    const [alert] = r.alerts();
    expect(alert?.summary).toMatch(
      /^REPACK \(CONCURRENTLY\) of shop\.orders has held vacuum back in 1 database \(1 table\) for 1[01] s: removable cutoff stuck at XID 753, 1,000 dead rows not removable$/,
    );
    const facts = (JSON.parse(alert!.evidence) as { facts: Record<string, unknown> }).facts;
    expect(facts).toMatchObject({ slot: 'pg_repack_27043', repack_pid: 27041, held_databases: 'other', held_tables: 'other.public.hot_counters' });

    // The slot is gone at `ended`: stale after 5 s, resolved after the 60 s hold-down.
    r.at(ended + 10_000);
    r.at(ended + 71_000);
    expect(r.transitions('repack-holds-vacuum')).toEqual(['firing', 'resolved']);
    expect(r.outbox('repack-holds-vacuum')).toEqual(['trigger', 'resolve']);
  });

  it('the same REPACK beside a pg_dump that took its snapshot first: the older snapshot holds vacuum, not REPACK', async () => {
    const events = await fixtureEvents('stderr', 'repack-concurrently-holds-back-vacuum');
    const started = lastTs(events, (e) => e.kind === 'ddl' && e.details.command === 'REPACK');
    const ended = lastTs(events, (e) => e.message.startsWith('logical decoding is disabled'));
    const r = rig(events, repackSamples(started, ended, true));
    expect(r.at(lastTs(events, (e) => e.kind === 'autovacuum') + 100).fired).not.toContain('repack-holds-vacuum/pg19/pg_repack_27043');
  });

  it('a backend killed by signal 9 takes the server through crash recovery: critical', async () => {
    const events = await fixtureEvents('stderr', 'backend-killed-crash-restart');
    const r = rig(events);
    const crashedAt = lastTs(events, (e) => e.kind === 'server_crash');
    r.at(crashedAt + 1_000);
    expect(r.alerts()).toEqual([expect.objectContaining({
      rule_id: 'server-crashed',
      severity: 'critical',
      summary: expect.stringMatching(
        /^client backend pid 28068 was killed by signal 9 \(Killed: on Linux almost always the OOM killer\).*; the server terminated every connection, recovered and accepts connections again$/,
      ),
    })]);
    expect(r.outbox('server-crashed')).toEqual(['trigger']);
  });
});
