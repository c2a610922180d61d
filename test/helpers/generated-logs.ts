/**
 * Large logs generated for tests that cut logs into ranges (`pgvigil analyze -j N`): every kind
 * of multi-line entry many times over, so that whatever the range size, split points fall inside
 * them. Deterministic (seeded), in the three formats; the stderr log also has processes whose
 * lines interleave (logging without the collector) and lines no prefix reads.
 */
import { seededRandom } from './seeded-random.js';
const PREFIX_TIME = Date.UTC(2026, 10, 30, 7, 0, 0);
/** Time between entries unless told: dense, a few minutes of log per thousand entries. */
const DEFAULT_STEP_MS = 137;

function stamp(i: number, stepMs = DEFAULT_STEP_MS): string {
  return new Date(PREFIX_TIME + i * stepMs).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

const VACUUM_LINES = [
  'pages: 0 removed, 207 remain, 207 scanned (100.00% of total), 0 eagerly scanned',
  'tuples: 12 removed, 20000 remain, 3 are dead but not yet removable',
  'removable cutoff: 768, which was 2 XIDs old when operation ended',
  'index scan not needed: 0 pages from table (0.00% of total) had 0 dead item identifiers removed',
  'avg read rate: 0.000 MB/s, avg write rate: 3.063 MB/s',
  'buffer usage: 509 hits, 0 reads, 4 dirtied',
  'WAL usage: 211 records, 4 full page images, 45391 bytes, 0 buffers full',
  'system usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.01 s',
];

/** stderr with log_line_prefix '%m [%p] %q%u@%d '. */
export const GENERATED_STDERR_PREFIX = '%m [%p] %q%u@%d ';

/** `stepMs`: time between entries (a long span, days of log, for the rules replay bench). */
export function generatedStderrLog(entries: number, seed = 1, stepMs = DEFAULT_STEP_MS): string {
  const next = seededRandom(seed);
  const out: string[] = [];
  const at = (i: number, pid: number): string => `${stamp(i, stepMs)} [${pid}] `;
  for (let i = 0; i < entries; i++) {
    const pid = 1000 + Math.floor(next() * 12);
    const roll = next();
    const p = at(i, pid);
    if (roll < 0.3) {
      out.push(`${p}app@shop LOG:  duration: ${(next() * 100).toFixed(3)} ms  statement: SELECT ${i}`);
    } else if (roll < 0.45) {
      out.push(`${p}LOG:  automatic vacuum of table "shop.public.t${i % 7}": index scans: 0`, ...VACUUM_LINES.map((l) => `\t${l}`));
    } else if (roll < 0.6) {
      out.push(`${p}app@shop ERROR:  duplicate key value violates unique constraint "t_pkey"`, `${p}app@shop DETAIL:  Key (id)=(${i}) already exists.`,
        `${p}app@shop STATEMENT:  INSERT INTO t`, '\tSELECT *', `\tFROM s WHERE id = ${i}`);
    } else if (roll < 0.7) {
      // Another process's line between a message's lines: stderr captured without the collector.
      const other = 2000 + Math.floor(next() * 3);
      out.push(`${p}app@shop ERROR:  canceling statement due to lock timeout`, `${at(i, other)}LOG:  checkpoint starting: time`,
        `${p}app@shop CONTEXT:  while updating tuple (0,${i}) in relation "t"`, `${p}app@shop STATEMENT:  UPDATE t SET x = 1`);
    } else if (roll < 0.78) {
      out.push(`${p}LOG:  temporary file: path "base/pgsql_tmp/pgsql_tmp${pid}.${i}", size ${Math.floor(next() * 1e7)}`, `${p}app@shop STATEMENT:  SELECT * FROM big`, '\tORDER BY 1');
    } else if (roll < 0.82) {
      out.push(roll < 0.8 ? `garbage line ${i} with no prefix` : '');
    } else if (roll < 0.9) {
      out.push(`${p}LOG:  checkpoint complete: wrote ${i % 500} buffers (0.1%); 0 WAL file(s) added, 0 removed, 1 recycled; write=0.101 s, sync=0.002 s, total=0.110 s; sync files=3, longest=0.001 s, average=0.001 s; distance=${i} kB, estimate=${i} kB; lsn=0/3000060, redo lsn=0/3000028`);
    } else {
      out.push(`${p}app@shop LOG:  process ${pid} still waiting for ShareLock on transaction ${i} after 1000.123 ms`, `${p}app@shop DETAIL:  Process holding the lock: ${pid + 1}. Wait queue: ${pid}.`,
        `${p}app@shop CONTEXT:  while updating tuple (0,1) in relation "orders"`, `${p}app@shop STATEMENT:  UPDATE orders SET n = n + 1`);
    }
  }
  return `${out.join('\n')}\n`;
}

function csvField(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** csvlog (PG 14+, 26 columns) with quoted fields holding newlines, commas and quotes. */
export function generatedCsvLog(entries: number, seed = 2): string {
  const next = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < entries; i++) {
    const pid = 1000 + Math.floor(next() * 12);
    const roll = next();
    let [severity, state, message, detail, query] = ['LOG', '00000', `duration: ${i}.5 ms  statement: SELECT ${i}`, '', ''];
    if (roll < 0.3) {
      message = `automatic vacuum of table "shop.public.t${i % 7}": index scans: 0\n${VACUUM_LINES.join('\n')}`;
    } else if (roll < 0.5) {
      [severity, state, message, detail, query] = ['ERROR', '23505', 'duplicate key value violates unique constraint "t_pkey"', `Key (id)=(${i}) already exists.`, `INSERT INTO t\nSELECT "a,b"\n${stamp(i)},looks like a record start`];
    } else if (roll < 0.53) {
      out.push(`${stamp(i)},"app","shop",${pid},"[local]",6529a1b2.${i.toString(16)},1,"idle",${stamp(i)},3/${i},0,LOG,00000,"cut in the middle`);
      continue;
    }
    const row = [stamp(i), 'app', 'shop', String(pid), '[local]', `6529a1b2.${i.toString(16)}`, '1', 'idle', stamp(i), `3/${i}`, '0', severity, state,
      csvField(message), detail === '' ? '' : csvField(detail), '', '', '', '', query === '' ? '' : csvField(query), '', '', 'psql', 'client backend', '', '0'];
    out.push(row.join(','));
  }
  return `${out.join('\n')}\n`;
}

/** jsonlog, with some lines that are not JSON. */
export function generatedJsonLog(entries: number, seed = 3): string {
  const next = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < entries; i++) {
    const roll = next();
    if (roll < 0.03) {
      out.push(`{"timestamp":"${stamp(i)}","broken`);
      continue;
    }
    const message = roll < 0.4 ? `automatic vacuum of table "shop.public.t${i % 7}": index scans: 0\n${VACUUM_LINES.join('\n')}` : `duration: ${i}.5 ms  statement: SELECT ${i}`;
    out.push(JSON.stringify({ timestamp: stamp(i), user: 'app', dbname: 'shop', pid: 1000 + Math.floor(next() * 12), error_severity: 'LOG', state_code: '00000', message, backend_type: 'client backend' }));
  }
  return `${out.join('\n')}\n`;
}
