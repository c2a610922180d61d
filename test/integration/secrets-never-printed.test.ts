/**
 * Secrets never printed: `pgvigil run` (the built CLI, log level debug) against a real
 * PostgreSQL 18, configured with every secret it can hold (a password in a dsn, a password file,
 * a PagerDuty routing key, webhook and Alertmanager URLs with credentials, an HMAC secret, an
 * HTTP token), pages through a real alert (error-storm, from statement timeouts), and is then searched: everything it
 * printed (stdout and stderr), served (/metrics, every /api route, the timeline page, /readyz)
 * and wrote (its store file, reports in html and json) and `pgvigil check` output. No secret
 * may appear in any of it.
 *
 * What the receivers get is not searched for those: a routing key is meant for PagerDuty,
 * credentials in a webhook URL are meant for that webhook (as HTTP Basic auth).
 *
 * With `redact: literals`, the same holds for what the server's log and views carry: a string
 * literal in the statements that time out (STATEMENT), their bind parameter (CONTEXT `unnamed
 * portal with parameters`, DETAIL `Parameters` of duration lines), the row a unique violation
 * quotes (DETAIL `Key (email)=(...)`), the HINT a PL/pgSQL RAISE composes, and the last query of a
 * session holding the xmin horizon (a polled label). Searched also in what the receivers got, and
 * in `pgvigil analyze --redact literals` over the same log (its output, its store, its report).
 * `pgvigil analyze --redact statements` and the report of its store show no statement text at all:
 * each statement is `(statement text redacted) #<fingerprint>`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
import { PagerDutyReceiver } from '../helpers/pagerduty-receiver.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const SECRETS = {
  dsnPassword: 'DsnPassw0rd-7f3a9c',
  passwordFile: 'FilePassw0rd-b81e44',
  routingKey: 'R0utingKey0123456789abcdef012345',
  webhookPassword: 'W3bhookPassw0rd-5d2c',
  alertmanagerPassword: 'AmPassw0rd-e6019b',
  hmacSecret: 'HmacSecret-90ab17cd',
  httpToken: 'HttpToken-4c1d8e0f2a7b9e3d',
} as const;

/** The horizon holder's polled series as the store keeps them (labels included). */
const HOLDER_SERIES = '/api/series?name=pg_xmin_horizon_holder_age_xids';
/** The same holder on /metrics: identified by its kind, without its statement or pid. */
const HOLDER_ON_METRICS = /^pg_xmin_horizon_holder_age_xids\{target="main",[^}]*kind="backend"/m;

/** Data in statements: personal data or secrets that `redact: literals` keeps from everything. */
const STATEMENT_SECRETS = {
  statementLiteral: 'Hunter2-Literal-9c4e',
  parameterValue: 'ParamSecret-31f8aa',
  sessionQueryLiteral: 'SessionSecret-77d0',
  rowValue: 'RowSecret-5e1a',
  raisedHint: 'HintSecret-0b7c',
} as const;

const dir = suiteTempDir('secrets');

function writeSecret(name: string, value: string): string {
  const file = join(dir, name);
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return file;
}

/** A webhook receiver that takes everything and keeps what it got. */
async function startWebhookReceiver(): Promise<{ url: (userinfo: string) => string; bodies: string[]; authorizations: string[]; stop(): Promise<void> }> {
  const bodies: string[] = [];
  const authorizations: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => {
      bodies.push(body);
      authorizations.push(req.headers.authorization ?? '');
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (userinfo) => `http://${userinfo}@127.0.0.1:${port}/hook`,
    bodies,
    authorizations,
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function pgvigil(args: string[]): { code: number | null; output: string } {
  const result = spawnSync(process.execPath, ['bin/pgvigil.js', ...args], { encoding: 'utf8', env: { PATH: process.env.PATH }, timeout: 60_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('secrets never printed, served or written by a whole daemon', () => {
  let server: PgServer;
  let pagerduty: PagerDutyReceiver;
  let webhook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const searched = new Map<string, string>();
  /** What went to the receivers: searched for statement data only. */
  const sentOff = new Map<string, string>();
  /** What `redact: statements` produced: searched for any statement text. */
  const withoutStatementText = new Map<string, string>();
  let holder: pg.Client | null = null;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'secrets', settings: { log_min_duration_statement: 0, log_parameter_max_length_on_error: -1 } });
    pagerduty = new PagerDutyReceiver(SECRETS.routingKey);
    await pagerduty.start();
    webhook = await startWebhookReceiver();
    const port = await freePort();
    const db = join(dir, 'pgvigil.db');
    const config = join(dir, 'pgvigil.yaml');
    writeFileSync(config, [
      `listen: 127.0.0.1:${port}`,
      `db: ${db}`,
      'log_level: debug',
      'redact: literals',
      `http_token_file: ${writeSecret('http-token', SECRETS.httpToken)}`,
      'targets:',
      `  - name: main`,
      `    dsn: postgresql://postgres:${SECRETS.dsnPassword}@${server.host}:${server.port}/postgres?application_name=x`,
      `    log: ${server.logDir}`,
      `  - name: by_file`,
      `    dsn: postgresql://postgres@${server.host}:${server.port}/postgres`,
      `    password_file: ${writeSecret('pg-password', SECRETS.passwordFile)}`,
      // Failure paths print the most: a server that is not there, a webhook that refuses.
      `  - name: down`,
      `    dsn: postgresql://postgres:${SECRETS.dsnPassword}@127.0.0.1:1/postgres`,
      'notify:',
      '  pagerduty:',
      `    routing_key_file: ${writeSecret('routing-key', SECRETS.routingKey)}`,
      `    events_url: ${pagerduty.eventsUrl}`,
      `    change_url: ${pagerduty.changeUrl}`,
      '    group_wait_ms: 0',
      // The page comes from an error storm, a warning: PagerDuty takes errors and up by default.
      '    min_severity: warning',
      '  alertmanager:',
      `    url: [http://am:${SECRETS.alertmanagerPassword}@127.0.0.1:1/, http://am:${SECRETS.alertmanagerPassword}@127.0.0.1:2/]`,
      '  webhooks:',
      `    - url: ${webhook.url(`hook:${SECRETS.webhookPassword}`)}`,
      `      hmac_secret_file: ${writeSecret('hmac', SECRETS.hmacSecret)}`,
      `    - url: http://hook:${SECRETS.webhookPassword}@127.0.0.1:1/refused`,
      'rules:',
      '  thresholds:',
      '    error-storm: { min_events: 5 }',
      '',
    ].join('\n'));

    const child = spawn(process.execPath, ['bin/pgvigil.js', 'run', '--config', config], { env: { PATH: process.env.PATH } });
    let printed = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => { printed += text; });
    child.stderr.setEncoding('utf8').on('data', (text: string) => { printed += text; });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    const get = async (path: string): Promise<string> => {
      const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${SECRETS.httpToken}` } });
      return `${response.status} ${await response.text()}`;
    };
    try {
      await waitUntil(() => /"msg":"tailing log file"/.test(printed) && /"msg":"serving \/metrics/.test(printed), 30_000, 'the daemon tailing and serving');
      // A session holding the xmin horizon, its last query with a literal: polled with its query as a label.
      holder = new pg.Client({ connectionString: server.dsn() });
      await holder.connect();
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT txid_current()');
      await holder.query(`SELECT '${STATEMENT_SECRETS.sessionQueryLiteral}' AS pw`);
      // Statement timeouts (an error storm) with a literal in the statement and a bind parameter.
      const app = new pg.Client({ connectionString: server.dsn() });
      await app.connect();
      try {
        await app.query(`SELECT $1::text = '${STATEMENT_SECRETS.statementLiteral}'`, [STATEMENT_SECRETS.parameterValue]);
        await app.query('CREATE TEMP TABLE accounts (email text UNIQUE)');
        await app.query(`INSERT INTO accounts VALUES ('${STATEMENT_SECRETS.rowValue}')`);
        await app.query(`INSERT INTO accounts VALUES ('${STATEMENT_SECRETS.rowValue}')`).catch(() => undefined);
        await app.query(`DO $$ BEGIN RAISE EXCEPTION 'refused' USING HINT = 'ask ' || '${STATEMENT_SECRETS.raisedHint}'; END $$`).catch(() => undefined);
        await app.query('SET statement_timeout = 20');
        for (let i = 0; i < 6; i++) {
          await app.query(`SELECT pg_sleep(1), '${STATEMENT_SECRETS.statementLiteral}' = $1`, [STATEMENT_SECRETS.parameterValue]).catch(() => undefined);
        }
      } finally {
        await app.end();
      }
      await pagerduty.waitFor(() => pagerduty.pages > 0, 60_000, 'a page');
      await waitUntil(() => webhook.bodies.length > 0, 30_000, 'the webhook');
      await waitUntil(async () => /pgvigil_notifier_failures_total\{channel="webhook-2",reason="network"\} [1-9]/.test(await get('/metrics')), 30_000, 'the refusing webhook tried');
      await waitUntil(async () => (await get(HOLDER_SERIES)).includes('SELECT ? AS pw'), 30_000, 'the horizon holder polled');
      // /metrics shows a series from its latest poll: on a loaded machine that poll may come after the store's.
      await waitUntil(async () => HOLDER_ON_METRICS.test(await get('/metrics')), 30_000, 'the horizon holder on /metrics');
      // pgvigil's own health is written each second: the page's delivery shows within one.
      await waitUntil(async () => /pgvigil_notifier_delivered_total\{channel="pagerduty"\} [1-9]/.test(await get('/metrics')), 30_000, 'the page counted as delivered');
      const alerts = JSON.parse((await get('/api/alerts')).slice(4)) as { alerts: Array<{ id: number }> };
      expect(alerts.alerts.length).toBeGreaterThan(0);
      for (const path of ['/metrics', '/api/alerts', `/api/alerts/${alerts.alerts[0]!.id}`, '/api/events', '/api/events?target=main&limit=1000', '/api/series?name=pg_up', HOLDER_SERIES, '/api/report', '/readyz', '/healthz', '/', '/ui/timeline.js']) {
        searched.set(`GET ${path}`, await get(path));
      }
      searched.set('GET /api/events without token', await (await fetch(`${base}/api/events`)).text());
      child.kill('SIGTERM');
      expect(await exit).toBe(EXIT.OK);
    } finally {
      child.kill('SIGKILL');
    }
    await holder.end();
    searched.set('run: stdout and stderr', printed);
    sentOff.set('PagerDuty', JSON.stringify(pagerduty.received));
    sentOff.set('webhook', webhook.bodies.join('\n'));

    // The same log, offline: analyze prints, stores and replays the rules; then its report.
    const offline = join(dir, 'analyze.db');
    for (const mode of [['--json'], ['--events']]) {
      const analyzed = pgvigil(['analyze', '--redact', 'literals', '--db', offline, '--rules', '--target', 'db1', ...mode, ...server.logFiles()]);
      expect(analyzed.code).toBe(EXIT.OK);
      searched.set(`analyze ${mode[0]}`, analyzed.output);
    }
    for (const file of [offline, `${offline}-wal`]) if (existsSync(file)) searched.set(`analyze store file ${file}`, readFileSync(file, 'latin1'));
    const offlineReport = pgvigil(['report', '--db', offline, '--format', 'json', '--from', '1h', '--target', 'db1']);
    searched.set('report of the analyze store', offlineReport.output);
    const noStatements = join(dir, 'analyze-statements.db');
    const withoutStatements = pgvigil(['analyze', '--redact', 'statements', '--db', noStatements, '--target', 'db1', ...server.logFiles()]);
    expect(withoutStatements.code).toBe(EXIT.OK);
    withoutStatementText.set('analyze --redact statements', withoutStatements.output);
    withoutStatementText.set('report of its store', pgvigil(['report', '--db', noStatements, '--format', 'json', '--from', '1h', '--target', 'db1']).output);
    // The store (events, alerts, the outbox's payloads) is read back by the API and reports.
    for (const file of [db, `${db}-wal`]) if (existsSync(file)) searched.set(`store file ${file}`, readFileSync(file, 'latin1'));
    for (const format of ['html', 'json']) {
      const report = pgvigil(['report', '--db', db, '--format', format, '--from', '1h']);
      expect(report.code).toBe(EXIT.OK);
      searched.set(`report --format ${format}`, report.output);
    }
    searched.set('check', pgvigil(['check', '--config', config, '--listen', `127.0.0.1:${await freePort()}`]).output);
  }, 240_000);

  afterAll(async () => {
    await holder?.end().catch(() => undefined);
    await pagerduty?.stop();
    await webhook?.stop();
    await destroyAllServers();
  });

  it('ran the whole path: printed debug lines, paged, called the webhook, served and reported', () => {
    expect(searched.get('run: stdout and stderr')).toMatch(/"level":20,/);
    expect(searched.get('run: stdout and stderr')).toMatch(/"target":"down",.*"msg":"cannot connect; retrying with backoff"/);
    expect(searched.get('GET /api/alerts')).toMatch(/^200 .*error-storm/);
    expect(searched.get('GET /metrics')).toMatch(/pgvigil_notifier_delivered_total\{channel="pagerduty"\} [1-9]/);
    expect(searched.get('report --format html')).toMatch(/error-storm/);
    // The credentials went where they were meant to, so their absence elsewhere means something.
    expect(pagerduty.received[0]?.body).toMatchObject({ routing_key: SECRETS.routingKey });
    expect(webhook.authorizations[0]).toBe(`Basic ${Buffer.from(`hook:${SECRETS.webhookPassword}`).toString('base64')}`);
  });

  it.each(Object.entries(SECRETS))('never shows %s', (_name, secret) => {
    const found = [...searched].filter(([, text]) => text.includes(secret)).map(([where]) => where);
    expect(found).toEqual([]);
  });

  it('kept the redacted statements, so their secrets are missing because of the redaction', () => {
    expect(searched.get('GET /api/events?target=main&limit=1000')).toContain('SELECT pg_sleep(?), ? = $1');
    expect(searched.get('analyze --events')).toContain('SELECT pg_sleep(?), ? = $1');
    expect(searched.get('analyze --events')).toMatch(/duration: [\d.]+ ms {2}execute <unnamed>: SELECT \$1::text = \?/);
    // The store keeps the holder's redacted statement for the rules; /metrics shows no statement at all.
    expect(searched.get(`GET ${HOLDER_SERIES}`)).toContain('SELECT ? AS pw');
    expect(searched.get('GET /metrics')).toMatch(HOLDER_ON_METRICS);
    expect(searched.get('GET /metrics')).not.toMatch(/[{,]query="/);
  });

  it.each(Object.entries(STATEMENT_SECRETS))('with redact: literals, never shows the statement data %s, not even to the receivers', (_name, secret) => {
    const found = [...searched, ...sentOff, ...withoutStatementText].filter(([, text]) => text.includes(secret)).map(([where]) => where);
    expect(found).toEqual([]);
  });

  it('with redact: statements, shows the queries by fingerprint and no statement text', () => {
    for (const [where, text] of withoutStatementText) {
      expect(text, where).toMatch(/\(statement text redacted\) #[0-9a-f]{16}/);
      expect(text, where).not.toMatch(/pg_sleep|SELECT|INSERT INTO accounts/);
    }
  });
});
