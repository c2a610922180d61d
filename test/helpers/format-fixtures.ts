/**
 * The envelope formats built from the golden logs real servers wrote (test/fixtures/logs): each
 * transform rewrites a recorded stderr or csvlog file into the shape a relay, an operator or a
 * hosted service gives it, so the events read from the result must equal the recorded ones.
 * test/integration/format-fixtures.test.ts keeps test/fixtures/formats/ made with these
 * (UPDATE_GOLDEN=1 writes them); test/integration/envelope-formats.test.ts runs them on every
 * recorded case.
 */
import { parse } from 'csv-parse/sync';
import { compilePrefix } from '../../src/parsers/prefix.js';
import { fieldLabelOf } from '../../src/parsers/severity.js';

/** How a relay joins the lines of one entry (see src/parsers/formats/joined-lines.ts). */
export const JOIN_STYLES = ['tabs', 'tabs_newline_dropped', 'rsyslog', 'literal_newline', 'literal_escapes'] as const;
export type JoinStyle = (typeof JOIN_STYLES)[number];

/** The physical lines of a stderr log grouped by entry: a start line, its TAB continuations and its DETAIL/STATEMENT... lines. */
export function stderrEntryGroups(text: string, prefix: string): string[][] {
  const compiled = compilePrefix(prefix);
  const groups: string[][] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const m = compiled.regex.exec(line);
    const continues = line.startsWith('\t') || (m !== null && fieldLabelOf(m[compiled.groups.word] as string) !== null);
    if (continues && groups.length > 0) groups[groups.length - 1]!.push(line);
    else groups.push([line]);
  }
  return groups;
}

/** A stderr log with every entry's lines joined into one line, as `style` joins them. */
export function joinStderr(text: string, prefix: string, style: JoinStyle): string {
  const compiled = compilePrefix(prefix);
  return stderrEntryGroups(text, prefix).map((lines) => {
    const joined = joinLines(lines, style);
    if (style !== 'rsyslog') return `${joined}\n`;
    const m = compiled.regex.exec(lines[0]!);
    const pid = m === null ? 0 : Number(m[compiled.groups.pid]);
    const iso = m === null ? '2026-11-30T00:00:00.000Z' : `${m[compiled.groups.timestamp]}T${m[compiled.groups.time]}.${m[compiled.groups.millis]}+00:00`;
    return `${iso} db1 postgres[${pid}]: ${joined}\n`;
  }).join('');
}

function joinLines(lines: readonly string[], style: JoinStyle): string {
  switch (style) {
    case 'tabs':
      return lines.join('\t');
    case 'tabs_newline_dropped':
      // A continuation keeps its own TAB; a prefixed line needs one to be told apart.
      return lines.map((line, i) => (i === 0 || line.startsWith('\t') ? line : `\t${line}`)).join('');
    case 'rsyslog':
      return lines.join('\n').replace(/[\x00-\x1f\x7f]/g, (c) => `#${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
    case 'literal_newline':
      return lines.join('\\n');
    case 'literal_escapes':
      return lines.join('\n').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
  }
}

/** csvlog's columns as CloudNativePG's LoggingRecord names them (loggingCollector.go json tags), in column order. */
export const CNPG_RECORD_KEYS = [
  'log_time', 'user_name', 'database_name', 'process_id', 'connection_from', 'session_id', 'session_line_num',
  'command_tag', 'session_start_time', 'virtual_transaction_id', 'transaction_id', 'error_severity', 'sql_state_code',
  'message', 'detail', 'hint', 'internal_query', 'internal_query_pos', 'context', 'query', 'query_pos', 'location',
  'application_name', 'backend_type', 'leader_pid', 'query_id',
] as const;

/** Lines the instance manager writes of its own, among PostgreSQL's records. */
const MANAGER_LINES = [
  { level: 'info', logger: 'instance-manager', msg: 'Checking for free disk space for WALs before starting PostgreSQL' },
  { level: 'info', logger: 'pg_controldata', msg: 'pg_controldata', record: { 'pg_control version number': '1800' } },
  { level: 'info', logger: 'wal-archive', msg: 'Archived WAL file', walName: '000000010000000000000003' },
];

/**
 * A csvlog file as CloudNativePG's instance manager prints it on stdout: one JSON line per
 * record (empty columns omitted, as `omitempty` does), with a manager line every `every` records.
 */
export function csvlogToCnpg(csv: string, every = 5): string {
  const rows = parse(csv, { relax_column_count: true, record_delimiter: '\n' }) as string[][];
  const out: string[] = [];
  rows.forEach((row, i) => {
    const record: Record<string, string> = {};
    row.forEach((value, column) => {
      const key = CNPG_RECORD_KEYS[column];
      if (key !== undefined && value !== '') record[key] = value;
    });
    const ts = Date.parse(`${row[0]!.replace(' UTC', 'Z').replace(' ', 'T')}`) / 1000;
    if (i % every === 0) out.push(JSON.stringify({ ...MANAGER_LINES[(i / every) % MANAGER_LINES.length]!, ts, logging_pod: 'cluster-example-1' }));
    out.push(JSON.stringify({ level: 'info', ts, logger: 'postgres', msg: 'record', logging_pod: 'cluster-example-1', record }));
  });
  return `${out.join('\n')}\n`;
}

/**
 * A stderr log as a Cloud Logging export of Cloud SQL holds it: one entry per server message,
 * its lines in `textPayload` (or `jsonPayload.message` when `json`), continuation lines without
 * their TAB as Cloud SQL writes them, with an entry of another log of the project now and then.
 */
export function stderrToCloudLogging(text: string, prefix: string, json = false): string {
  const out: string[] = [];
  stderrEntryGroups(text, prefix).forEach((lines, i) => {
    const timestamp = `${lines[0]!.slice(0, 10)}T${lines[0]!.slice(11, 23)}Z`;
    const payload = lines.map((line) => line.replace(/^\t/, '')).join('\n');
    const entry = {
      ...(json ? { jsonPayload: { message: payload } } : { textPayload: payload }),
      insertId: `s=${i.toString(16)};i=1`,
      resource: { type: 'cloudsql_database', labels: { database_id: 'acme-prod:orders-db', project_id: 'acme-prod', region: 'europe-west1' } },
      timestamp,
      severity: /\b(ERROR|FATAL|PANIC):/.test(lines[0]!) ? 'ERROR' : 'INFO',
      logName: 'projects/acme-prod/logs/cloudsql.googleapis.com%2Fpostgres.log',
      receiveTimestamp: timestamp,
    };
    out.push(JSON.stringify(entry));
    if (i % 7 === 3) {
      out.push(JSON.stringify({
        protoPayload: { methodName: 'cloudsql.instances.update' }, insertId: `a${i}`, resource: { type: 'cloudsql_database', labels: { database_id: 'acme-prod:orders-db' } },
        timestamp, severity: 'NOTICE', logName: 'projects/acme-prod/logs/cloudaudit.googleapis.com%2Factivity', textPayload: 'instance settings updated',
      }));
    }
  });
  return `${out.join('\n')}\n`;
}

/**
 * A csvlog file as a Heroku logplex drain carries it, in the shape pgBadger's `-f logplex`
 * reads: each message sent through syslog (write_syslog(): one numbered piece per line, the
 * TAB of continuation lines kept) with Heroku's log_line_prefix ` sql_error_code = %e `.
 * Other dynos' lines come between.
 */
export function csvlogToLogplex(csv: string): string {
  const rows = parse(csv, { relax_column_count: true, record_delimiter: '\n' }) as string[][];
  const out: string[] = [];
  rows.forEach((row, i) => {
    const [time, , , pid] = row;
    const iso = `${time!.slice(0, 10)}T${time!.slice(11, 23)}000+00:00`;
    const sqlstate = row[12] ?? '';
    const lines = [`${row[11]}:  ${row[13]}`.replace(/\n/g, '\n\t')];
    for (const [label, column] of [['DETAIL', 14], ['HINT', 15], ['QUERY', 16], ['CONTEXT', 18], ['STATEMENT', 19]] as const) {
      if ((row[column] ?? '') !== '') lines.push(`${label}:  ${row[column]!.replace(/\n/g, '\n\t')}`);
    }
    let piece = 0;
    for (const field of lines) {
      field.split('\n').forEach((part, k) => {
        piece++;
        const text = k === 0 ? ` sql_error_code = ${sqlstate} ${part}` : part;
        out.push(`${iso} app[postgres.${pid}]: [DATABASE] [${i + 1}-${piece}] ${text}`);
      });
    }
    if (i % 6 === 2) out.push(`${iso} heroku[router]: at=info method=GET path="/" host=acme.herokuapp.com status=200 bytes=512`);
    if (i % 6 === 4) out.push(`${iso} app[web.1]: Completed 200 OK in 12ms`);
  });
  return `${out.join('\n')}\n`;
}
