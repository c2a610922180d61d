/**
 * A central PostgreSQL set up as docs/fleet.md says (schema migrated, its GRANT block pasted as
 * an operator would), and the row-by-row comparison of a sidecar store with what reached it.
 * Shared by the fleet tests: the stores forwarded by `pgvigil central forward` and by live
 * `pgvigil run` sidecars.
 */
import pg from 'pg';
import { expect } from 'vitest';
import { migrateCentral } from '../../src/central/migrate-central.js';
import { openStore } from '../../src/store/open-store.js';
import { MINUTE_SPAN_MS, ReportMinutesTable } from '../../src/store/report-minutes.js';
import { documentedGrants } from './fleet-grants.js';
import type { PgServer } from './pg-harness.js';

export type FleetRole = 'pgvigil_forward' | 'pgvigil_reader';

/** The central database as a role of docs/fleet.md. */
export function centralDsnAs(central: PgServer, role: FleetRole): string {
  return central.dsn().replace('//postgres@', `//${role}@`);
}

/** Migrates the central schema and creates the two roles with exactly the documented grants. */
export async function prepareCentral(central: PgServer): Promise<void> {
  const client = new pg.Client({ connectionString: central.dsn() });
  await client.connect();
  try {
    await migrateCentral(client, Date.now());
    await client.query(documentedGrants());
  } finally {
    await client.end();
  }
}

/** One query as the central superuser, on its own connection (the server may have restarted since). */
export async function centralQuery<T extends pg.QueryResultRow>(central: PgServer, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: central.dsn() });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function centralEventCount(central: PgServer, target: string): Promise<number> {
  return Number((await centralQuery<{ n: string }>(central, 'SELECT count(*) AS n FROM pgvigil.events WHERE target = $1', [target]))[0]!.n);
}

export function storeIdentity(file: string): string {
  return readStore(file, (db) => db.prepare('SELECT store_id FROM store_identity').pluck().get() as string);
}

export function readStore<T>(file: string, read: (db: ReturnType<typeof openStore>) => T): T {
  const db = openStore(file, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Every event (with its language), alert and alert transition of the store, compared field by field with the central rows. */
export async function expectStoreInCentral(central: PgServer, file: string): Promise<void> {
  const id = storeIdentity(file);
  const local = readStore(file, (db) => ({
    events: db.prepare('SELECT id, target, ts_ms, kind, level, sqlstate, pid, database, user_name, message, details, source_file, source_offset, language FROM events ORDER BY id').all() as Array<Record<string, unknown>>,
    transitions: db.prepare('SELECT t.id, t.alert_id, a.target, t.ts_ms, t.to_state FROM alert_transitions t JOIN alerts a ON a.id = t.alert_id ORDER BY t.id').all(),
    alerts: db.prepare('SELECT id, rule_id, state, summary, evidence, started_ms, resolved_ms FROM alerts ORDER BY id').all() as Array<Record<string, unknown>>,
  }));
  const centralEvents = await centralQuery(central, `
    SELECT local_id::int AS id, target, (extract(epoch FROM ts) * 1000)::float8 AS ts_ms, kind, level, sqlstate, pid, database, user_name,
           message, details::text AS details, source_file, source_offset::int AS source_offset, language
    FROM pgvigil.events WHERE store_id = $1 ORDER BY local_id`, [id]);
  expect(centralEvents.length).toBeGreaterThan(50);
  expect(centralEvents.map((r) => ({ ...r, details: JSON.parse(r.details as string) })))
    .toEqual(local.events.map((r) => ({ ...r, details: JSON.parse(r.details as string) })));

  expect(local.transitions.length).toBeGreaterThan(0);
  expect(await centralQuery(central, `SELECT local_id::int AS id, alert_local_id::int AS alert_id, target, (extract(epoch FROM ts) * 1000)::float8 AS ts_ms, to_state
    FROM pgvigil.alert_transitions WHERE store_id = $1 ORDER BY local_id`, [id])).toEqual(local.transitions);

  const centralAlerts = await centralQuery(central, `SELECT local_id::int AS id, rule_id, state, summary, evidence::text AS evidence,
      (extract(epoch FROM started_at) * 1000)::float8 AS started_ms, (extract(epoch FROM resolved_at) * 1000)::float8 AS resolved_ms
    FROM pgvigil.alerts WHERE store_id = $1 ORDER BY local_id`, [id]);
  expect(centralAlerts.map((a) => ({ ...a, evidence: JSON.parse(a.evidence as string) })))
    .toEqual(local.alerts.map((a) => ({ ...a, evidence: JSON.parse(a.evidence as string) })));
}

/**
 * Every minute of the store's log report, with all its rows, in the central database once: a
 * minute sent again (after a crash, or merged on the sidecar since) replaced its row, never added one.
 */
export async function expectReportMinutesInCentral(central: PgServer, file: string): Promise<void> {
  const id = storeIdentity(file);
  const local = readStore(file, (db) => {
    const table = new ReportMinutesTable(db);
    const minutes = db.prepare(`SELECT DISTINCT target, minute_ms AS minuteMs FROM report_minutes WHERE span_ms = ${MINUTE_SPAN_MS} ORDER BY target, minute_ms`).all() as Array<{ target: string; minuteMs: number }>;
    return minutes.map((m) => ({ ...m, ...table.minute(m.target, m.minuteMs)! }));
  });
  expect(local.length).toBeGreaterThan(0);
  expect(await centralQuery(central, `SELECT target, (extract(epoch FROM ts) * 1000)::float8 AS "minuteMs", through_local_id::int AS "throughId", states
    FROM pgvigil.report_minutes WHERE store_id = $1 ORDER BY target, ts`, [id])).toEqual(local);
}
