import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../../test/helpers/temp-dir.js';
import { ConfigError } from './config-error.js';
import { loadConfig } from './load-config.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../sources/connection-budget.js';

const dir = suiteTempDir('config');
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}${p.value === undefined ? '' : ` = ${JSON.stringify(p.value)}`}`);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('defaults watch the local server through libpq defaults and store in ./pgvigil.db', () => {
    const config = loadConfig({ env: {} });
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 9899 });
    expect(config.dbPath).toBe('./pgvigil.db');
    // Named after where the server is, so two sidecars never share a name: a local one by this machine's name.
    const local = `${hostname()}:5432`;
    expect(config.targets).toEqual([{ name: local.replace(':', '-').replace(/[^A-Za-z0-9_.-]/g, '-'), address: local, cluster: null, dsn: null, password: null, log: null }]);
    // pgvigil stores and serves statements: their values stay out unless asked for.
    expect(config.redact).toBe('literals');
    expect(loadConfig({ file: 'config/pgvigil.example.yaml', env: {} }).redact).toBe('literals');
  });

  it('defaults the poller connection timings to what the poller was built around', () => {
    const { collectors } = loadConfig({ env: {} });
    // The same 2 min the connection pools fall back to when no value is passed.
    expect(collectors.idleConnectionTimeoutMs).toBe(DEFAULT_IDLE_TIMEOUT_MS);
    expect(collectors.databaseLockCheckIntervalMs).toBe(1_000);
  });

  it('loads the example config shipped in config/', () => {
    const config = loadConfig({ file: 'config/pgvigil.example.yaml', env: {} });
    expect(config.targets).toHaveLength(1);
    expect(config.retention.maxAgeMs).toBe(14 * 86_400_000);
    // The example shows the defaults: its collectors section must not drift from them.
    expect(config.collectors).toEqual(loadConfig({ env: {} }).collectors);
  });

  it('takes the poller connection timings from the collectors section', () => {
    const path = file('poller.yaml', 'collectors:\n  idle_connection_timeout_ms: 300000\n  database_lock_check_interval_ms: 500\n');
    const { collectors } = loadConfig({ file: path, env: {} });
    expect(collectors.idleConnectionTimeoutMs).toBe(300_000);
    expect(collectors.databaseLockCheckIntervalMs).toBe(500);
  });

  it('accepts the poller connection timings at their bounds and refuses them just outside', () => {
    const load = (idle: unknown, lockCheck: unknown) => loadConfig({
      file: file('poller-bounds.yaml', `collectors:\n  idle_connection_timeout_ms: ${JSON.stringify(idle)}\n  database_lock_check_interval_ms: ${JSON.stringify(lockCheck)}\n`),
      env: {},
    });
    expect(load(1_000, 250).collectors).toMatchObject({ idleConnectionTimeoutMs: 1_000, databaseLockCheckIntervalMs: 250 });
    expect(load(86_400_000, 3_000).collectors).toMatchObject({ idleConnectionTimeoutMs: 86_400_000, databaseLockCheckIntervalMs: 3_000 });

    const forms = 'a number of milliseconds or a duration such as "30s", "15m", "6h", "2d"';
    const idle = `collectors.idle_connection_timeout_ms: must be ${forms}, from 1000 ms to 86400000 ms: 1 s to 1 day`;
    const lockCheck = `collectors.database_lock_check_interval_ms: must be ${forms}, from 250 ms to 3000 ms: 250 ms to 3 s (DROP DATABASE waits only 5 s for pgvigil to leave)`;
    expect(problemsOf(() => load(999, 3_001))).toEqual([`${idle} = 999`, `${lockCheck} = 3001`]);
    expect(problemsOf(() => load(86_400_001, 249))).toEqual([`${idle} = 86400001`, `${lockCheck} = 249`]);
    // A fraction below the minimum is one problem, not one per failed check.
    expect(problemsOf(() => load('2 weeks', 0.5))).toEqual([`${idle} = "2 weeks"`, `${lockCheck} = 0.5`]);
    // Durations as an operator writes them, bounds checked on their milliseconds.
    expect(load('2m', '1.5s').collectors).toMatchObject({ idleConnectionTimeoutMs: 120_000, databaseLockCheckIntervalMs: 1_500 });
    expect(load('1d', '250ms').collectors).toMatchObject({ idleConnectionTimeoutMs: 86_400_000, databaseLockCheckIntervalMs: 250 });
    expect(problemsOf(() => load('25h', '3s'))).toEqual([`${idle} = "25h"`]);
  });

  it('takes durations with units for every duration key and rule threshold, and numbers as milliseconds as before', () => {
    const config = loadConfig({
      file: file('durations.yaml', 'collectors:\n  interval_ms: { pg_stat_user_tables: 30s, pg_standby: 1000 }\nrules:\n  hold_down_ms: 2m\n  thresholds:\n    standby-disconnected: { sustain_ms: 45s }\nretention:\n  interval_ms: 15m\n'),
      env: {},
    });
    expect(config.collectors.intervalMs).toEqual({ pg_stat_user_tables: 30_000, pg_standby: 1_000 });
    expect(config.rules.holdDownMs).toBe(120_000);
    expect(config.rules.thresholds['standby-disconnected']).toMatchObject({ sustainMs: 45_000 });
    expect(config.retention.intervalMs).toBe(900_000);
    expect(problemsOf(() => loadConfig({ file: file('bad-duration.yaml', 'rules:\n  hold_down_ms: soon\n'), env: {} })))
      .toEqual(['rules.hold_down_ms: expected a number of milliseconds or a duration such as "30s", "15m", "6h", "2d" = "soon"']);
  });

  it('refuses a collector name that does not exist, in disabled and in interval_ms, naming the known ones', () => {
    const path = file('collectors.yaml', 'collectors:\n  disabled: [pg_nope]\n  interval_ms: { replay_progress: 1000, pg_standby: 1000 }\n');
    const problems = problemsOf(() => loadConfig({ file: path, env: {} }));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^collectors\.disabled: unknown collector "pg_nope": one of pg_stat_user_tables, .*pg_standby/);
    expect(problems[1]).toMatch(/^collectors\.interval_ms: unknown collector "replay_progress": one of /);
  });

  it('takes flag over environment over file', () => {
    const path = file('precedence.yaml', 'listen: 127.0.0.1:1000\ndb: /tmp/file.db\nlog_level: debug\n');
    const config = loadConfig({ file: path, env: { PGVIGIL_LISTEN: '127.0.0.1:2000', PGVIGIL_DB: '/tmp/env.db' }, flags: { listen: '127.0.0.1:3000' } });
    expect(config.listen.port).toBe(3000);
    expect(config.dbPath).toBe('/tmp/env.db');
    expect(config.logLevel).toBe('debug');
  });

  it('reports every bad field at once with its path, value and what is allowed', () => {
    const path = file('bad.yaml', [
      'listen: nowhere',
      'log_levl: info',
      'collectors:',
      '  max_tables_per_database: -3',
      'targets:',
      '  - name: primary',
      '    log: { path: /var/log/pg, format: syslog }',
      '  - name: "bad name"',
    ].join('\n'));
    expect(problemsOf(() => loadConfig({ file: path, env: {} }))).toEqual([
      'listen: expected HOST:PORT, e.g. 127.0.0.1:9899 or [::1]:9899 = "nowhere"',
      'targets.0.log.format: must be one of "auto", "stderr", "csvlog", "jsonlog" = "syslog"',
      'targets.1.name: letters, digits, _ . - only (it becomes a label) = "bad name"',
      'collectors.max_tables_per_database: Too small: expected number to be >0 = -3',
      '(top level): unknown key "log_levl" (check the spelling against config/pgvigil.example.yaml)',
    ].sort((a, b) => expectedOrder(a) - expectedOrder(b)));
  });

  it('refuses a webhook name that is not label-safe or that another webhook has', () => {
    const path = file('webhook-names.yaml', [
      'notify:',
      '  webhooks:',
      '    - { url: "http://127.0.0.1:1/a", name: chatops }',
      '    - { url: "http://127.0.0.1:1/b", name: "chat ops" }',
      '    - { url: "http://127.0.0.1:1/c", name: chatops }',
    ].join('\n'));
    expect(problemsOf(() => loadConfig({ file: path, env: {} })).sort()).toEqual([
      'notify.webhooks.1.name: letters, digits, _ . - only = "chat ops"',
      'notify.webhooks.2.name: another webhook is already named "chatops" = "chatops"',
    ]);
  });

  it('takes one Alertmanager URL or a list of them, and refuses one listed twice', () => {
    expect(loadConfig({ file: file('am-one.yaml', 'notify:\n  alertmanager: { url: "http://am1:9093" }\n'), env: {} }).notify.alertmanager)
      .toEqual({ urls: ['http://am1:9093'], minSeverity: 'warning', minSeverityOverrides: [] });
    expect(loadConfig({ file: file('am-two.yaml', 'notify:\n  alertmanager: { url: ["http://am1:9093", "http://am2:9093"] }\n'), env: {} }).notify.alertmanager)
      .toEqual({ urls: ['http://am1:9093', 'http://am2:9093'], minSeverity: 'warning', minSeverityOverrides: [] });
    const twice = file('am-twice.yaml', 'notify:\n  alertmanager: { url: ["http://am1:9093", "http://am1:9093"] }\n');
    expect(problemsOf(() => loadConfig({ file: twice, env: {} }))).toEqual([expect.stringMatching(/^notify\.alertmanager\.url\.1: http:\/\/am1:9093 is listed twice/)]);
  });

  it('takes min_severity per channel (PagerDuty from error, the others from warning by default) and refuses an unknown one', () => {
    const yaml = [
      'notify:',
      '  pagerduty: { routing_key: R0UT1NGKEY }',
      '  alertmanager: { url: "http://am1:9093", min_severity: info }',
      '  webhooks:',
      '    - { url: "http://127.0.0.1:1/a", min_severity: critical }',
      '    - { url: "http://127.0.0.1:1/b" }',
    ].join('\n');
    const { notify } = loadConfig({ file: file('min-severity.yaml', yaml), env: {} });
    expect([notify.pagerduty?.minSeverity, notify.alertmanager?.minSeverity, ...notify.webhooks.map((w) => w.minSeverity)])
      .toEqual(['error', 'info', 'critical', 'warning']);
    const bad = file('min-severity-bad.yaml', 'notify:\n  pagerduty: { routing_key: R0UT1NGKEY, min_severity: page }\n');
    expect(problemsOf(() => loadConfig({ file: bad, env: {} }))).toEqual(['notify.pagerduty.min_severity: must be one of "info", "warning", "error", "critical" = "page"']);
  });

  it('takes min_severity_overrides by rule, target or both, and refuses an unknown rule or target, naming the known ones', () => {
    const targets = 'targets:\n  - { name: db-main }\n  - { name: db-reporting }\n';
    const yaml = `${targets}notify:\n  alertmanager:\n    url: "http://am1:9093"\n    min_severity_overrides:\n` +
      '      - { rule: replica-lag-over-lb-limit, min_severity: info }\n      - { target: db-reporting, rule: error-storm, min_severity: critical }\n';
    expect(loadConfig({ file: file('overrides.yaml', yaml), env: {} }).notify.alertmanager?.minSeverityOverrides).toEqual([
      { rule: 'replica-lag-over-lb-limit', target: null, minSeverity: 'info' },
      { rule: 'error-storm', target: 'db-reporting', minSeverity: 'critical' },
    ]);
    const bad = `${targets}notify:\n  webhooks:\n    - url: "http://127.0.0.1:1/a"\n      min_severity_overrides:\n` +
      '        - { rule: replica-lag, target: db-reprting, min_severity: warning }\n        - { min_severity: warning }\n' +
      '        - { target: db-main, min_severity: error }\n        - { target: db-main, min_severity: critical }\n';
    const problems = problemsOf(() => loadConfig({ file: file('overrides-bad.yaml', bad), env: {} }));
    expect(problems).toEqual([
      'notify.webhooks.0.min_severity_overrides.1: names a rule, a target or both = {"min_severity":"warning"}',
      'notify.webhooks.0.min_severity_overrides.3: rule (any) on target db-main is listed twice = {"target":"db-main","min_severity":"critical"}',
    ]);
    const unknown = `${targets}notify:\n  pagerduty:\n    routing_key: R0UT1NGKEY\n    min_severity_overrides: [{ rule: replica-lag, target: db-reprting, min_severity: warning }]\n`;
    const [rule, target] = problemsOf(() => loadConfig({ file: file('overrides-unknown.yaml', unknown), env: {} }));
    expect(rule).toMatch(/^notify\.pagerduty\.min_severity_overrides\.0\.rule: unknown rule: one of .*replica-lag-over-lb-limit.* = "replica-lag"$/);
    expect(target).toBe('notify.pagerduty.min_severity_overrides.0.target: unknown target: one of db-main, db-reporting = "db-reprting"');
  });

  it('reads secrets from files and refuses an unreadable one', () => {
    const key = file('routing-key', 'R0UT1NGKEY\n');
    const ok = loadConfig({ file: file('pd.yaml', `notify:\n  pagerduty:\n    routing_key_file: ${key}\n`), env: {} });
    expect(ok.notify.pagerduty?.routingKey).toBe('R0UT1NGKEY');
    expect(problemsOf(() => loadConfig({ file: file('pd-missing.yaml', 'notify:\n  pagerduty:\n    routing_key_file: /nonexistent/key\n'), env: {} })))
      .toEqual(expect.arrayContaining([expect.stringMatching(/^notify\.pagerduty\.routing_key_file: cannot read the secret file: ENOENT/)]));
  });

  it('takes a non-loopback listen address without http_token_file (the API then serves this host only), or with http.allow_unauthenticated', () => {
    expect(loadConfig({ flags: { listen: '0.0.0.0:9899' }, env: {} })).toMatchObject({ httpToken: null, httpAllowUnauthenticated: false });
    const open = loadConfig({ file: file('open.yaml', 'listen: 0.0.0.0:9899\nhttp:\n  allow_unauthenticated: true\n'), env: {} });
    expect(open.httpAllowUnauthenticated).toBe(true);
    expect(open.httpToken).toBeNull();
    const token = file('token', 'a-token-of-sufficient-length-0123\n');
    expect(loadConfig({ flags: { listen: '[::]:9899', http_token_file: token }, env: {} }).httpToken).toBe('a-token-of-sufficient-length-0123');
    expect(loadConfig({ flags: { listen: '[::1]:9899' }, env: {} }).httpAllowUnauthenticated).toBe(false);
    const short = file('short-token', 'abc\n');
    expect(problemsOf(() => loadConfig({ flags: { listen: '0.0.0.0:9899', http_token_file: short }, env: {} })))
      .toEqual([expect.stringMatching(/^http_token_file: the token must be at least 16 characters \(e\.g\. openssl rand -hex 32 > .*short-token\)/)]);
    expect(problemsOf(() => loadConfig({ file: file('open-typo.yaml', 'http:\n  allow_unauthenticated: "yes"\n'), env: {} })))
      .toEqual([expect.stringMatching(/^http\.allow_unauthenticated: .*boolean/)]);
  });

  it('takes a token for /metrics alone, and refuses a short one', () => {
    expect(loadConfig({ env: {} }).httpMetricsToken).toBeNull();
    const token = file('metrics-token', 'a-metrics-token-0123456789\n');
    expect(loadConfig({ file: file('metrics-token.yaml', `http:\n  metrics_token_file: ${token}\n`), env: {} }).httpMetricsToken).toBe('a-metrics-token-0123456789');
    const short = file('metrics-short', 'abc\n');
    expect(problemsOf(() => loadConfig({ file: file('metrics-short.yaml', `http:\n  metrics_token_file: ${short}\n`), env: {} })))
      .toEqual([expect.stringMatching(/^http\.metrics_token_file: the token must be at least 16 characters/)]);
  });

  it('reads http.tls and refuses unreadable files or a key of another certificate at startup', () => {
    const pair = (name: string) => {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-keyout', `${name}.key`, '-out', `${name}.crt`], { cwd: dir, stdio: 'pipe' });
      return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
    };
    const [a, b] = [pair('tls-a'), pair('tls-b')];
    const tls = (cert: string, key: string) => file('tls.yaml', `http:\n  tls:\n    cert_file: ${cert}\n    key_file: ${key}\n`);
    expect(loadConfig({ env: {} }).httpTls).toBeNull();
    expect(loadConfig({ file: tls(a.cert, a.key), env: {} }).httpTls).toMatchObject({ cert: expect.stringContaining('BEGIN CERTIFICATE'), key: expect.stringContaining('PRIVATE KEY') });
    expect(problemsOf(() => loadConfig({ file: tls(a.cert, b.key), env: {} }))).toEqual([expect.stringMatching(/^http\.tls: the certificate and key do not make a TLS server \(.*\): give PEM files/)]);
    expect(problemsOf(() => loadConfig({ file: tls(join(dir, 'absent.crt'), a.key), env: {} }))).toEqual([expect.stringMatching(/^http\.tls\.cert_file: cannot read it: .*absent\.crt/)]);
    expect(problemsOf(() => loadConfig({ file: file('tls-half.yaml', `http:\n  tls:\n    cert_file: ${a.cert}\n`), env: {} }))[0]).toMatch(/^http\.tls\.key_file: /);
  });

  it('names YAML syntax errors and a missing file', () => {
    expect(problemsOf(() => loadConfig({ file: file('syntax.yaml', 'listen: [\n'), env: {} }))[0]).toMatch(/^\(file\): YAML:/);
    expect(problemsOf(() => loadConfig({ file: join(dir, 'absent.yaml'), env: {} }))[0]).toMatch(/cannot read the config file/);
  });

  it('names unknown rule ids and thresholds with the allowed ones', () => {
    const path = file('rules.yaml', 'rules:\n  disabled: [no-such-rule]\n  thresholds:\n    server-crashed: { bogus: 1 }\n');
    const problems = problemsOf(() => loadConfig({ file: path, env: {} }));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^rules\.disabled: unknown rule id "no-such-rule" \(known: repack-holds-vacuum, /);
    expect(problems[1]).toMatch(/^rules\.thresholds\.server-crashed\.bogus: unknown threshold \(allowed: /);
  });

  it('takes a keyword/value dsn from a flag or a target and hands the driver the URL that means the same', () => {
    expect(loadConfig({ env: {}, flags: { dsn: 'host=db1 port=5433 user=pgvigil dbname=postgres' } }).targets[0]!.dsn)
      .toBe('postgresql:///postgres?host=db1&port=5433&user=pgvigil');
    const path = file('kv-target.yaml', "targets:\n  - name: a\n    dsn: \"host=/var/run/postgresql dbname='app db'\"\n");
    expect(loadConfig({ file: path, env: {} }).targets[0]!.dsn).toBe('postgresql:///app%20db?host=%2Fvar%2Frun%2Fpostgresql');
  });

  it('says where a dsn came from and what is wrong with it, never echoing it', () => {
    expect(problemsOf(() => loadConfig({ env: { PGVIGIL_DSN: 'not-a-url' } }))).toEqual([
      'dsn: neither a postgresql:// URL nor keyword=value pairs (such as "host=db1 port=5432 user=pgvigil dbname=postgres"): ' +
        'missing "=" after "not-a-url" (from --dsn, PGVIGIL_DSN or the config file)',
    ]);
    const path = file('bad-target-dsn.yaml', 'targets:\n  - name: a\n    dsn: "service=app password=s3cret"\n');
    expect(problemsOf(() => loadConfig({ file: path, env: {} }))).toEqual([
      `targets.0.dsn: "service" is not supported: node-postgres does not read pg_service.conf: write the service's host, port, user and dbname instead`,
    ]);
  });

  it('names the shorthand target by --name, PGVIGIL_NAME or name:, else by the dsn\'s host and port, and gives its log pattern', () => {
    const remote = loadConfig({ flags: { dsn: 'postgresql://pgvigil@db1.example.net:6432/postgres', log: '/var/log/postgresql', log_pattern: 'postgresql-16-main.log' }, env: {} });
    expect(remote.targets[0]).toMatchObject({ name: 'db1.example.net-6432', address: 'db1.example.net:6432' });
    expect(remote.targets[0]!.log).toMatchObject({ path: '/var/log/postgresql', filename_pattern: 'postgresql-16-main.log' });
    // libpq's own variables when the dsn does not say; a socket is this machine.
    expect(loadConfig({ env: { PGHOST: 'db2', PGPORT: '5433' } }).targets[0]).toMatchObject({ name: 'db2-5433', address: 'db2:5433' });
    expect(loadConfig({ flags: { dsn: 'postgresql:///postgres?host=/var/run/postgresql' }, env: {} }).targets[0]!.address).toBe(`${hostname()}:5432`);
    expect(loadConfig({ flags: { name: 'orders-primary' }, env: { PGVIGIL_NAME: 'from-env' } }).targets[0]!.name).toBe('orders-primary');
    expect(loadConfig({ env: { PGVIGIL_NAME: 'from-env' } }).targets[0]!.name).toBe('from-env');
    expect(problemsOf(() => loadConfig({ flags: { name: 'db 1' }, env: {} }))).toEqual(['name: letters, digits, _ . - only (it becomes a label) = "db 1"']);
    expect(problemsOf(() => loadConfig({ flags: { log_pattern: 'x.log' }, env: {} }))).toEqual(['log_pattern: goes with log (a log_directory): the files in it to read']);
  });

  it('takes static labels and an external URL, and refuses labels pgvigil sets itself', () => {
    const config = loadConfig({ file: file('labels.yaml', 'labels: { env: prod, team: dba }\nexternal_url: https://pgvigil.db1.example.net/\n'), env: {} });
    expect(config.labels).toEqual({ env: 'prod', team: 'dba' });
    expect(config.externalUrl).toBe('https://pgvigil.db1.example.net');
    expect(loadConfig({ env: { PGVIGIL_EXTERNAL_URL: 'http://10.0.0.7:9899' } }).externalUrl).toBe('http://10.0.0.7:9899');
    expect(problemsOf(() => loadConfig({ file: file('bad-labels.yaml', 'labels: { severity: low, 9lives: x }\n'), env: {} }))).toEqual([
      'labels.severity: pgvigil sets alertname, severity, pgvigil_severity, target, rule, instance, cluster, dedup_key itself',
      'labels.9lives: a label name: letters, digits and _, not starting with a digit',
    ]);
    expect(problemsOf(() => loadConfig({ file: file('bad-url.yaml', 'external_url: ftp://x\n'), env: {} }))).toEqual(['external_url: an http:// or https:// URL = "ftp://x"']);
  });

  it('refuses the dsn shorthand together with a targets list, and duplicate target names', () => {
    const path = file('both.yaml', 'dsn: postgres://x\ntargets:\n  - name: a\n  - name: a\n');
    expect(problemsOf(() => loadConfig({ file: path, env: {} }))).toEqual([
      'targets: use either the top-level name/dsn/log/log_pattern shorthand or a targets list, not both',
      'targets.1.name: target names must be unique = "a"',
    ]);
  });
});

// zod reports issues in schema order; the test only cares that each problem is listed once.
function expectedOrder(line: string): number {
  return ['listen', 'targets.0', 'targets.1', 'collectors', '(top level)'].findIndex((p) => line.startsWith(p));
}
