/**
 * The commands that read a sidecar's store honour its config (#25 §5): `report -c` and `serve -c`
 * find the store `run` writes (the config's db) and `report` knows the targets' names.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AlertStore } from '../store/alert-store.js';
import { openStore } from '../store/open-store.js';
import { testTempDir } from '../../test/helpers/temp-dir.js';
import { EXIT } from './exit-codes.js';
import { runReport } from './report.js';
import { storeToServe } from './serve.js';

const FIRED_MS = Date.UTC(2026, 10, 30, 7, 0, 0);

/** A config naming db1 and db2 and a store holding one alert on db1, as `run` leaves them. */
function sidecar(dir: string): { config: string; store: string } {
  const store = path.join(dir, 'sidecar.db');
  const db = openStore(store);
  new AlertStore(db, []).fire({
    ruleId: 'server-crashed', dedupKey: 'server-crashed/db1', severity: 'critical', target: 'db1', labels: {},
    summary: 'db1 crashed: a backend was killed by signal 9', evidence: { eventIds: [], series: [], facts: {} },
  }, FIRED_MS);
  db.close();
  const config = path.join(dir, 'pgvigil.yaml');
  writeFileSync(config, `db: ${store}\ntargets:\n  - { name: db1 }\n  - { name: db2 }\n`);
  return { config, store };
}

const window = { from: '2026-11-30T06:00:00Z', to: '2026-11-30T08:00:00Z', windowGiven: true };

describe('report -c', () => {
  afterEach(() => vi.restoreAllMocks());

  it("reads the config's db, not ./pgvigil.db", async () => {
    const dir = testTempDir('report-config');
    const { config } = sidecar(dir);
    const output = path.join(dir, 'report.json');
    expect(await runReport({ ...window, db: './pgvigil.db', config, format: 'json', output }, FIRED_MS + 60_000)).toBe(EXIT.OK);
    expect(readFileSync(output, 'utf8')).toContain('db1 crashed: a backend was killed by signal 9');
  });

  it('refuses a --target the config does not name, naming those it does', async () => {
    const dir = testTempDir('report-config-target');
    const { config } = sidecar(dir);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await runReport({ ...window, db: './pgvigil.db', config, target: 'db3', format: 'json' }, FIRED_MS)).toBe(EXIT.USAGE);
    expect(stderr.mock.calls.map(([text]) => String(text))).toEqual(['pgvigil report: no target "db3" in the config (targets: db1, db2)\n']);
  });
});

describe('serve -c', () => {
  it("serves the config's db unless --store names another; without either it is a usage error", () => {
    expect(storeToServe({}, '/var/lib/pgvigil/pgvigil.db')).toBe('/var/lib/pgvigil/pgvigil.db');
    expect(storeToServe({ store: '/tmp/copy.db' }, '/var/lib/pgvigil/pgvigil.db')).toBe('/tmp/copy.db');
    expect(storeToServe({}, null)).toEqual({ problem: expect.stringMatching(/^give the store: --store .* or -c /) });
    expect(storeToServe({ target: 'db1' }, '/var/lib/pgvigil/pgvigil.db')).toEqual({ problem: expect.stringMatching(/^--cluster and --target narrow the central store/) });
  });
});
