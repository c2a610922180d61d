/**
 * Loads the configuration: YAML file, then PGVIGIL_* environment variables, then command-line
 * flags (flag > environment > file > default), validates it against the schema and resolves
 * secrets from files. Owns the snake_case -> camelCase translation. Never connects anywhere.
 */
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { configSchema, logSourceSchema, type LogSourceConfig, type RawConfig } from './schema.js';
import { ConfigError, type ConfigProblem } from './config-error.js';
import { conninfoToUrl } from '../lib/conninfo.js';
import { resolveHttpTls, type HttpTls } from './http-tls.js';
import { defaultTargetName, serverAddress } from './target-name.js';
import type { RedactLevel } from '../lib/redact.js';
import type { SeverityRouting } from '../notify/severity-routing.js';
import { resolveSeverityRouting } from './severity-overrides.js';
import { resolveForwardPostgres, type ForwardPostgres } from './forward-config.js';
import { COLLECTOR_NAMES } from '../collectors/index.js';
import { buildRules, RulesConfigError, thresholdsFromConfig, type RulesOptions } from '../rules/catalog.js';

/** The flags of `pgvigil run` that are also config keys and PGVIGIL_<FLAG> variables. */
export const OVERRIDABLE_KEYS = ['name', 'dsn', 'log', 'log_pattern', 'db', 'listen', 'log_level', 'http_token_file', 'external_url'] as const;
type OverridableKey = (typeof OVERRIDABLE_KEYS)[number];
export type ConfigOverrides = Partial<Record<OverridableKey, string>>;

const MIN_HTTP_TOKEN_CHARS = 16;

/** Labels pgvigil sets itself on alerts and notifications: a static label may not take their place. */
const OWN_LABELS = ['alertname', 'severity', 'pgvigil_severity', 'target', 'rule', 'instance', 'cluster', 'dedup_key'];

export interface Target {
  name: string;
  /** Where the server is (`host:port`; this machine's name for a local one): the `instance` of notifications. */
  address: string;
  cluster: string | null;
  /** libpq URL or null for PG* environment variables / libpq defaults. */
  dsn: string | null;
  password: string | null;
  log: LogSourceConfig | null;
}

export interface Config {
  source: string;
  listen: { host: string; port: number };
  dbPath: string;
  logLevel: RawConfig['log_level'];
  httpToken: string | null;
  /** Bearer token of /metrics (http.metrics_token_file); null: /metrics is open. */
  httpMetricsToken: string | null;
  /** HTTPS certificate and key (http.tls); null: plain HTTP. */
  httpTls: HttpTls | null;
  /** Static labels on every alert and notification (config `labels`). */
  labels: Record<string, string>;
  /** pgvigil as people reach it; null: notifications carry no link back. */
  externalUrl: string | null;
  /** Serve the API on a non-loopback address without a token (http.allow_unauthenticated). */
  httpAllowUnauthenticated: boolean;
  /** Statement text kept from log entries and polled sessions (src/lib/redact.ts). */
  redact: RedactLevel;
  targets: Target[];
  collectors: {
    maxTablesPerDatabase: number;
    intervalMs: Record<string, number>;
    disabled: string[];
    idleConnectionTimeoutMs: number;
    databaseLockCheckIntervalMs: number;
    maxConnections: number;
    minFreeConnections: number;
    databases: { include: string[]; exclude: string[] };
  };
  retention: { maxAgeMs: number; maxSizeBytes: number; intervalMs: number; fullResolutionMs: number | null; thinnedStepMs: number };
  notify: {
    pagerduty: ({ routingKey: string; eventsUrl: string; changeUrl: string; groupWaitMs: number } & SeverityRouting) | null;
    /** Every Alertmanager to send each alert to (one, or the members of an HA cluster). */
    alertmanager: ({ urls: string[] } & SeverityRouting) | null;
    webhooks: Array<{ url: string; name: string | null; hmacSecret: string | null } & SeverityRouting>;
  };
  rules: RulesOptions;
  /** Forwarding to a central PostgreSQL database (docs/fleet.md); null: off. */
  forward: { postgres: ForwardPostgres | null };
}

export interface LoadConfigInput {
  file?: string | null;
  flags?: ConfigOverrides;
  env?: NodeJS.ProcessEnv;
}

export function loadConfig({ file = null, flags = {}, env = process.env }: LoadConfigInput): Config {
  const configFile = file ?? env.PGVIGIL_CONFIG ?? null;
  const source = configFile ?? 'defaults, environment and flags';
  const fromFile = configFile ? readYaml(configFile) : {};
  const merged: Record<string, unknown> = { ...fromFile, ...fromEnv(env), ...withoutUndefined(flags) };

  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(source, parsed.error.issues.map((issue) => toProblem(issue, merged)));
  const problems: ConfigProblem[] = [];
  const config = resolve(parsed.data, source, env, problems);
  if (problems.length > 0) throw new ConfigError(source, problems);
  return config;
}

function readYaml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [{ path: '(file)', message: `cannot read the config file: ${(err as Error).message}` }]);
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(file, doc.errors.map((e) => ({ path: '(file)', message: `YAML: ${e.message.split('\n')[0]}` })));
  }
  const value: unknown = doc.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(file, [{ path: '(file)', message: 'the top level must be a mapping of keys', value }]);
  }
  return value as Record<string, unknown>;
}

function fromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const values: Record<string, string> = {};
  for (const key of OVERRIDABLE_KEYS) {
    const value = env[`PGVIGIL_${key.toUpperCase()}`];
    if (value !== undefined && value !== '') values[key] = value;
  }
  return values;
}

function withoutUndefined(flags: ConfigOverrides): Record<string, string> {
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

function toProblem(issue: z.core.$ZodIssue, input: unknown): ConfigProblem {
  const path = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys') {
    return { path, message: `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} (check the spelling against config/pgvigil.example.yaml)` };
  }
  let message = issue.message;
  if (issue.code === 'invalid_value') message = `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  return { path, message, value: valueAt(input, issue.path) };
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function resolve(raw: RawConfig, source: string, env: NodeJS.ProcessEnv, problems: ConfigProblem[]): Config {
  const secret = (path: string, inline: string | null, file: string | null, envValue?: string): string | null => {
    if (inline && file) problems.push({ path, message: 'give the secret inline or as a file, not both' });
    if (file) {
      try {
        return readFileSync(file, 'utf8').trim();
      } catch (err) {
        problems.push({ path: `${path}_file`, message: `cannot read the secret file: ${(err as Error).message}`, value: file });
        return null;
      }
    }
    return inline ?? envValue ?? null;
  };

  // The dsn's value is never echoed: it may hold a password.
  const dsnAsUrl = (path: string, dsn: string | null): string | null => {
    if (dsn === null) return null;
    const result = conninfoToUrl(dsn);
    if (result.ok) return result.url;
    problems.push({ path, message: path === 'dsn' ? `${result.problem} (from --dsn, PGVIGIL_DSN or the config file)` : result.problem });
    return null;
  };

  if (raw.targets && (raw.dsn || raw.log || raw.name || raw.log_pattern)) {
    problems.push({ path: 'targets', message: 'use either the top-level name/dsn/log/log_pattern shorthand or a targets list, not both' });
  }
  if (raw.log_pattern !== null && raw.log === null) problems.push({ path: 'log_pattern', message: 'goes with log (a log_directory): the files in it to read' });
  const shorthandLog = raw.log === null ? null : logSourceSchema.parse({ path: raw.log, filename_pattern: raw.log_pattern });
  const targets: Target[] = (raw.targets ?? [{ name: null, dsn: raw.dsn, password_file: null, cluster: null, log: shorthandLog }])
    .map((t, i) => ({ t, i, dsn: dsnAsUrl(raw.targets ? `targets.${i}.dsn` : 'dsn', t.dsn) }))
    .map(({ t, i, dsn }) => ({
      name: t.name ?? raw.name ?? defaultTargetName(serverAddress(dsn, env)),
      address: serverAddress(dsn, env),
      cluster: t.cluster,
      dsn,
      password: secret(`targets.${i}.password`, null, t.password_file),
      log: t.log,
    }));
  const names = new Set<string>();
  targets.forEach((t, i) => {
    if (names.has(t.name)) problems.push({ path: `targets.${i}.name`, message: 'target names must be unique', value: t.name });
    names.add(t.name);
  });

  // A misspelt collector would otherwise be polled at its default interval, or never turned off.
  const collectorNameUses: Array<[string, string[]]> = [['collectors.disabled', raw.collectors.disabled], ['collectors.interval_ms', Object.keys(raw.collectors.interval_ms)]];
  for (const [path, names] of collectorNameUses) {
    for (const name of names.filter((n) => !COLLECTOR_NAMES.includes(n))) {
      problems.push({ path, message: `unknown collector "${name}": one of ${COLLECTOR_NAMES.join(', ')}` });
    }
  }

  for (const name of Object.keys(raw.labels)) {
    const problem = !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name) ? 'a label name: letters, digits and _, not starting with a digit'
      : OWN_LABELS.includes(name) || name.startsWith('__') ? `pgvigil sets ${OWN_LABELS.join(', ')} itself` : null;
    if (problem !== null) problems.push({ path: `labels.${name}`, message: problem });
  }

  const [host, port] = splitHostPort(raw.listen);
  if (port < 1 || port > 65535) problems.push({ path: 'listen', message: 'port must be 1-65535', value: raw.listen });

  const httpToken = secret('http_token', null, raw.http_token_file);
  // A short token can be guessed over the network it is there to keep out.
  if (httpToken !== null && httpToken.length < MIN_HTTP_TOKEN_CHARS) {
    problems.push({ path: 'http_token_file', message: `the token must be at least ${MIN_HTTP_TOKEN_CHARS} characters (e.g. openssl rand -hex 32 > ${raw.http_token_file})`, value: raw.http_token_file });
  }
  const httpMetricsToken = secret('http.metrics_token', null, raw.http.metrics_token_file);
  if (httpMetricsToken !== null && httpMetricsToken.length < MIN_HTTP_TOKEN_CHARS) {
    problems.push({ path: 'http.metrics_token_file', message: `the token must be at least ${MIN_HTTP_TOKEN_CHARS} characters (e.g. openssl rand -hex 32 > ${raw.http.metrics_token_file})`, value: raw.http.metrics_token_file });
  }
  const httpTls = resolveHttpTls(raw.http.tls, problems);

  const pd = raw.notify.pagerduty;
  const routingKey = pd ? secret('notify.pagerduty.routing_key', pd.routing_key, pd.routing_key_file, env.PGVIGIL_PAGERDUTY_ROUTING_KEY) : null;
  if (pd && !routingKey) {
    problems.push({ path: 'notify.pagerduty', message: 'needs routing_key, routing_key_file or PGVIGIL_PAGERDUTY_ROUTING_KEY' });
  }

  const rules: RulesOptions = {
    disabled: raw.rules.disabled,
    intervalMs: raw.rules.interval_ms,
    holdDownMs: raw.rules.hold_down_ms,
    refireMinIntervalMs: raw.rules.refire_min_interval_ms,
    flushMinGapMs: raw.rules.flush_min_gap_ms,
    staleAfterMs: raw.rules.stale_after_ms,
    thresholds: thresholdsFromConfig(raw.rules.thresholds),
  };
  try {
    buildRules(rules);
  } catch (err) {
    if (!(err instanceof RulesConfigError)) throw err;
    for (const problem of err.problems) {
      const at = problem.indexOf(': ');
      problems.push({ path: problem.slice(0, at), message: problem.slice(at + 2) });
    }
  }

  const forwardPostgres = resolveForwardPostgres(raw.forward.postgres, env, problems);
  const targetNames = targets.map((t) => t.name);
  const routing = (path: string, channel: Parameters<typeof resolveSeverityRouting>[1]) => resolveSeverityRouting(path, channel, targetNames, problems);

  return {
    source,
    rules,
    forward: { postgres: forwardPostgres },
    listen: { host, port },
    dbPath: raw.db,
    logLevel: raw.log_level,
    httpToken,
    httpAllowUnauthenticated: raw.http.allow_unauthenticated,
    httpMetricsToken,
    httpTls,
    labels: raw.labels,
    externalUrl: raw.external_url === null ? null : raw.external_url.replace(/\/+$/, ''),
    redact: raw.redact,
    targets,
    collectors: {
      maxTablesPerDatabase: raw.collectors.max_tables_per_database,
      intervalMs: raw.collectors.interval_ms,
      disabled: raw.collectors.disabled,
      idleConnectionTimeoutMs: raw.collectors.idle_connection_timeout_ms,
      databaseLockCheckIntervalMs: raw.collectors.database_lock_check_interval_ms,
      maxConnections: raw.collectors.max_connections,
      minFreeConnections: raw.collectors.min_free_connections,
      databases: raw.collectors.databases,
    },
    retention: {
      maxAgeMs: raw.retention.max_age_days * 86_400_000, maxSizeBytes: raw.retention.max_size_mb * 1_048_576, intervalMs: raw.retention.interval_ms,
      fullResolutionMs: raw.retention.series_full_resolution_hours === null ? null : raw.retention.series_full_resolution_hours * 3_600_000,
      thinnedStepMs: raw.retention.series_thinned_step_minutes * 60_000,
    },
    notify: {
      pagerduty: pd && routingKey
        ? { routingKey, eventsUrl: pd.events_url, changeUrl: pd.change_url, groupWaitMs: pd.group_wait_ms, ...routing('notify.pagerduty', pd) }
        : null,
      alertmanager: raw.notify.alertmanager && { urls: [raw.notify.alertmanager.url].flat(), ...routing('notify.alertmanager', raw.notify.alertmanager) },
      webhooks: raw.notify.webhooks.map((w, i) => ({
        url: w.url,
        name: w.name,
        hmacSecret: secret(`notify.webhooks.${i}.hmac_secret`, w.hmac_secret, w.hmac_secret_file),
        ...routing(`notify.webhooks.${i}`, w),
      })),
    },
  };
}

function splitHostPort(listen: string): [string, number] {
  const at = listen.lastIndexOf(':');
  const host = listen.slice(0, at).replace(/^\[|\]$/g, '');
  return [host, Number(listen.slice(at + 1))];
}
