/**
 * Records real logs of a data page that fails verification, for data-page-corrupted's tests, into
 * test/fixtures/rule-logs/pg<major>-data-page-corrupted.{log,csv,json} (stderr with the harness's
 * prefix, csvlog, jsonlog; UTC), one server writing all three at once:
 *
 *   npx tsx scripts/record-data-corruption-logs.ts 15 18
 *
 * A table of 100 rows is written and the server stopped (its pages flushed); one page is then
 * damaged on disk as failing storage would: on 18+ (data checksums on by default) one byte of
 * row data, so the page's checksum no longer matches; before 18 (the harness's clusters have no
 * checksums there) the page header's flags, so the page fails its header check. The server is
 * started and the table read twice, as an application retrying would. Review the logs before
 * committing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { destroyAllServers, startPrimary, type PgVersion } from '../test/helpers/pg-harness.js';

const OUT = fileURLToPath(new URL('../test/fixtures/rule-logs/', import.meta.url));
/** A byte in the middle of block 0's row data; pd_flags in its header (PageHeaderData: offset 10, 2 bytes). */
const DATA_BYTE = 4000;
const HEADER_FLAGS = 10;

async function record(version: PgVersion): Promise<void> {
  const server = await startPrimary({ version, name: `corrupted-${version}`, settings: { log_destination: 'stderr,csvlog,jsonlog' } });
  try {
    const [{ checksums }] = await server.query<{ checksums: string }>("SELECT current_setting('data_checksums') AS checksums") as [{ checksums: string }];
    await server.query('CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL)');
    await server.query("INSERT INTO accounts SELECT g, 'owner ' || g FROM generate_series(1, 100) g");
    const [{ file }] = await server.query<{ file: string }>("SELECT pg_relation_filepath('accounts') AS file") as [{ file: string }];
    await server.stop('fast');
    const fd = fs.openSync(path.join(server.dataDir, file), 'r+');
    try {
      if (checksums === 'on') fs.writeSync(fd, Buffer.from([0x5a]), 0, 1, DATA_BYTE);
      else fs.writeSync(fd, Buffer.from([0xff, 0xff]), 0, 2, HEADER_FLAGS);
    } finally {
      fs.closeSync(fd);
    }
    // Only what the server logs from its restart on.
    const before = new Map(server.logFiles().map((f) => [f, fs.statSync(f).size]));
    await server.start();
    for (let attempt = 0; attempt < 2; attempt++) {
      const outcome = await server.query('SELECT count(*) FROM accounts').then(() => 'read', (error: Error) => error.message);
      console.log(`pg${version} (data_checksums ${checksums}): ${outcome}`);
    }
    await server.stop('fast');
    for (const extension of ['.log', '.csv', '.json']) {
      const files = server.logFiles().filter((f) => f.endsWith(extension));
      const log = files.map((f) => fs.readFileSync(f).subarray(before.get(f) ?? 0).toString('utf8')).join('');
      fs.writeFileSync(path.join(OUT, `pg${version}-data-page-corrupted${extension}`), log);
    }
  } finally {
    await destroyAllServers();
  }
}

for (const version of process.argv.slice(2).map(Number) as PgVersion[]) await record(version);
