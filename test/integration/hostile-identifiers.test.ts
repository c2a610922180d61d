/**
 * Identifiers from the server are data, never SQL: databases, schemas and tables named with
 * quotes, backslashes, spaces, line breaks, unicode, every character a URL reserves and the full
 * 63 bytes are polled through a connection per database (database-pools.ts builds the connection,
 * the database a field of its own: never a URL path, a `\c` or SQL text),
 * land in /metrics with label values escaped so the exposition still parses (promtool), and are
 * found again through the API by the same names. PostgreSQL 18 from the harness.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-processes.js';
import { describeWithTool, toolPath } from '../helpers/tools.js';
import { startOutputs, type OutputsRig } from './metrics-real-feed.js';

// NAMEDATALEN - 1 = 63 bytes: 31 two-byte characters and one more byte.
const SIXTY_THREE_BYTES = `${'é'.repeat(31)}x`;
// Every character a URL reserves: the database is a connection field of its own, never a URL path.
const DATABASES = ['we"ird db', 'back\\slash\'quote', 'line\nbreak', ' 🐘 ünïcödé', SIXTY_THREE_BYTES, '%2F..%2Fetc', 'a:b/c?d&e+f#g=h;i@j,k$l!m[n]o', '50% off'];
const SCHEMA = 'sch "ema\\';
const TABLE = `ta"ble\n${'ß'.repeat(25)}`;

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
/** A label value as the text exposition format writes it: backslash, quote and line feed escaped. */
const labelValue = (value: string): string => value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

/** The n_dead_tup sample of the hostile table in database `db`, with every label value escaped. */
function deadTuplesLine(exposition: string, db: string): string | undefined {
  const labels = [`datname="${labelValue(db)}"`, `schemaname="${labelValue(SCHEMA)}"`, `relname="${labelValue(TABLE)}"`];
  return exposition.split('\n').find((line) => line.startsWith('pg_stat_user_tables_n_dead_tup{') && line.endsWith('} 40') && labels.every((l) => line.includes(l)));
}

describe('hostile identifiers on PostgreSQL 18', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-hostile-'));
  let primary: PgServer;
  let rig: OutputsRig;
  let exposition = '';

  beforeAll(async () => {
    primary = await startPrimary({ version: 18 });
    for (const db of DATABASES) {
      expect(Buffer.byteLength(db)).toBeLessThanOrEqual(63);
      await primary.query(`CREATE DATABASE ${quoteIdent(db)}`);
      await primary.query(`CREATE SCHEMA ${quoteIdent(SCHEMA)}`, [], db);
      const table = `${quoteIdent(SCHEMA)}.${quoteIdent(TABLE)}`;
      await primary.query(`CREATE TABLE ${table} (id int); INSERT INTO ${table} SELECT generate_series(1, 100); DELETE FROM ${table} WHERE id <= 40`, [], db);
      // Backends flush table statistics within a second; the first poll round must see them.
      await waitUntil(async () => {
        const rows = await primary.query<{ n: string }>('SELECT n_dead_tup AS n FROM pg_stat_user_tables WHERE relname = $1', [TABLE], db);
        return Number(rows[0]?.n) === 40;
      }, 20_000, `n_dead_tup of the table in ${JSON.stringify(db)}`);
    }
    rig = await startOutputs([{ name: 'primary', server: primary }], path.join(dir, 'pgvigil.db'));
    await waitUntil(async () => {
      exposition = await (await fetch(`${rig.url}/metrics`)).text();
      return DATABASES.every((db) => deadTuplesLine(exposition, db) !== undefined);
    }, 20_000, 'n_dead_tup = 40 of every hostile table in /metrics').catch((err: unknown) => {
      throw new Error(`${String(err)}; /metrics has:\n${exposition.split('\n').filter((l) => l.startsWith('pg_stat_user_tables_n_dead_tup')).join('\n')}`);
    });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  });

  it('samples every database by its exact name', () => {
    for (const db of DATABASES) expect(deadTuplesLine(exposition, db), db).toBeDefined();
    // Nothing leaked out of a label value: every line is a comment, blank, or a sample.
    for (const line of exposition.split('\n')) expect(line, line).toMatch(/^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? \S+( \d+)?|)$/);
  });

  it('finds the series again through the API by the same names', async () => {
    for (const db of DATABASES) {
      const labels = encodeURIComponent(JSON.stringify({ datname: db, schemaname: SCHEMA, relname: TABLE }));
      const res = await fetch(`${rig.url}/api/series?name=pg_stat_user_tables_n_dead_tup&from=now-10m&step=1s&labels=${labels}`);
      expect(res.status, db).toBe(200);
      const body = (await res.json()) as { series: Array<{ labels: Record<string, string> }> };
      expect(body.series.map((s) => s.labels.datname), db).toEqual([db]);
    }
  });

  describeWithTool('promtool', 'the exposition', () => {
    it('passes promtool check metrics', () => {
      const result = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
      expect(`${result.stdout}${result.stderr}`).toBe('');
      expect(result.status).toBe(0);
    });
  });
});
