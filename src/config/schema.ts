/**
 * The configuration schema: every key an operator can write, with its default and meaning.
 * Keys are snake_case (what the operator types); src/config/load-config.ts maps them to the
 * camelCase Config the code uses. Unknown keys are errors: a typo must never be ignored.
 * docs: config/pgvigil.example.yaml documents each key; a test checks it loads.
 */
import { z } from 'zod';
import { DEFAULT_MIN_SEVERITY, SEVERITIES, type Severity } from '../domain/alert.js';
import { REDACT_LEVELS } from '../lib/redact.js';
import { DURATION_FORMS, durationTextToMs } from './duration.js';

const hostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/, 'expected HOST:PORT, e.g. 127.0.0.1:9899 or [::1]:9899');

const durationMs = z.preprocess(durationTextToMs, z.number({ error: `expected ${DURATION_FORMS}` }).int().positive());

/** A whole number of milliseconds (or a duration text) in [minMs, maxMs]; the message says what is allowed and why. */
function durationMsBetween(minMs: number, maxMs: number, why: string) {
  const allowed = `must be ${DURATION_FORMS}, from ${minMs} ms to ${maxMs} ms: ${why}`;
  // int first: zod stops at a failed int, so a fraction below the minimum is one problem, not two.
  return z.preprocess(durationTextToMs, z.number({ error: allowed }).int(allowed).min(minMs, allowed).max(maxMs, allowed));
}

export const logSourceSchema = z
  .object({
    /** A log file, or the server's log_directory. */
    path: z.string().min(1),
    /** log_filename when path is a directory (PostgreSQL strftime escapes); null: the server default. */
    filename_pattern: z.string().min(1).nullable().default(null),
    format: z.enum(['auto', 'stderr', 'csvlog', 'jsonlog']).default('auto'),
    /** log_line_prefix; null reads it from pg_settings when connected, else auto-detects. */
    prefix: z.string().nullable().default(null),
    /** log_timezone; null reads it from pg_settings, else UTC. */
    timezone: z.string().nullable().default(null),
    /** Where to start the first time a file is seen (later runs resume where they stopped). */
    start_at: z.enum(['end', 'beginning']).default('end'),
  })
  .strict();

const targetName = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only (it becomes a label)');

const target = z
  .object({
    name: targetName,
    /** libpq URL; missing parts come from PG* environment variables and libpq defaults. */
    dsn: z.string().nullable().default(null),
    password_file: z.string().nullable().default(null),
    /** Cluster name, for grouping a primary with its standbys (PagerDuty group, labels). */
    cluster: z.string().nullable().default(null),
    // A bare string is shorthand for { path }.
    log: z.preprocess((v) => (typeof v === 'string' ? { path: v } : v), logSourceSchema.nullable()).default(null),
  })
  .strict();

const collectors = z
  .object({
    max_tables_per_database: z.number().int().positive().default(200),
    /** Per-collector poll interval overrides in milliseconds, keyed by collector name. */
    interval_ms: z.record(z.string(), durationMs).default({}),
    /** Collector names to turn off. */
    disabled: z.array(z.string()).default([]),
    /**
     * How long the poller keeps an unused connection to a database between visits; shorter than
     * the collectors' intervals, it reconnects on every visit (a backend start and cold caches).
     * Below 1 s a connection could close between the queries of one visit. The 1-day cap stays
     * far below Node's timer limit (2^31-1 ms, about 24.8 days), past which a timer fires after
     * 1 ms and every connection would close at once.
     */
    idle_connection_timeout_ms: durationMsBetween(1_000, 86_400_000, '1 s to 1 day').default(120_000),
    /**
     * How often a primary is checked (in pg_locks) for DROP DATABASE, ALTER DATABASE ... RENAME or
     * SET TABLESPACE, or CREATE DATABASE ... TEMPLATE waiting for the poller to leave a database.
     * Those commands wait only 5 s for other sessions, so the check, its query and closing the
     * connections must fit in that: at most 3 s. At least 250 ms: each read of pg_locks locks the
     * lock manager's shared data for a moment (its docs warn against reading it often), and
     * checking more often gains nothing.
     */
    database_lock_check_interval_ms: durationMsBetween(250, 3_000, '250 ms to 3 s (DROP DATABASE waits only 5 s for pgvigil to leave)').default(1_000),
    /**
     * Connections to a target at most, every collector and database together; visits to the
     * databases queue for them. At least 2: one stays on the main database (the probe, the DROP
     * DATABASE check), one goes from database to database.
     */
    max_connections: z.number({ error: 'must be a whole number from 2 to 50' }).int('must be a whole number from 2 to 50').min(2, 'must be at least 2: one connection stays on the main database, one visits the others').max(50, 'at most 50: pgvigil is a guest on the server').default(3),
    /**
     * A connection is opened only if this many slots stay free for ordinary roles after it
     * (max_connections less superuser_reserved_connections and, from 16, reserved_connections,
     * less the client backends); otherwise the database visit is skipped, counted and said.
     */
    min_free_connections: z.number({ error: 'must be a whole number, 0 or more' }).int('must be a whole number, 0 or more').min(0, 'must be 0 or more').default(5),
    /**
     * Which databases the per-database collectors connect to: shell patterns (`*` any run of
     * characters, `?` one), as pg_dump --exclude-database takes them, matched against the whole
     * name, case-sensitive. include empty: all; exclude wins. Server-wide views still report every database.
     */
    databases: z.object({
      include: z.array(z.string().min(1)).default([]),
      exclude: z.array(z.string().min(1)).default([]),
    }).strict().default({ include: [], exclude: [] }),
  })
  .strict();

const retention = z
  .object({
    max_age_days: z.number().positive().default(14),
    max_size_mb: z.number().positive().default(2048),
    /**
     * Per-table samples older than this are thinned to one per series_thinned_step_minutes (the
     * latest of each step); server-wide series keep every sample; null keeps every sample. 2 h / 30 min keep 14 days of per-table series at the
     * default caps (60,000 series at 15 s) within the 2 GB budget; at least 1: rules read up to an
     * hour of per-table samples at full density (autovacuum-abnormal's growth window).
     */
    series_full_resolution_hours: z.number().min(1).nullable().default(2),
    series_thinned_step_minutes: z.number().positive().max(60).default(30),
    /** How often retention runs; short only for tests and soaks that must see it prune. */
    interval_ms: durationMsBetween(1_000, 86_400_000, '1 s to 1 day').default(600_000),
  })
  .strict();

/**
 * The lowest severity a channel is sent (info < warning < error < critical); lower alerts are
 * still stored, shown on the page and in reports. Once a channel was sent an alert's trigger, it
 * is sent the alert's later changes and its resolve.
 */
const minSeverity = (fallback: Severity) => z.enum(SEVERITIES).default(fallback);

/**
 * A channel's min_severity for one rule, one target, or one rule on one target (rule and target
 * checked against the catalog and the targets in load-config.ts). The most specific match wins:
 * rule and target, then rule, then target, then the channel's min_severity.
 */
const minSeverityOverrides = z
  .array(z.object({
    rule: z.string().min(1).nullable().default(null),
    target: z.string().min(1).nullable().default(null),
    min_severity: z.enum(SEVERITIES),
  }).strict().refine((o) => o.rule !== null || o.target !== null, 'names a rule, a target or both'))
  .default([])
  .superRefine((overrides, ctx) => {
    overrides.forEach((o, i) => {
      if (overrides.findIndex((other) => other.rule === o.rule && other.target === o.target) < i) {
        ctx.addIssue({ code: 'custom', path: [i], message: `rule ${o.rule ?? '(any)'} on target ${o.target ?? '(any)'} is listed twice` });
      }
    });
  });

const pagerduty = z
  .object({
    routing_key: z.string().nullable().default(null),
    routing_key_file: z.string().nullable().default(null),
    events_url: z.string().url().default('https://events.pagerduty.com/v2/enqueue'),
    change_url: z.string().url().default('https://events.pagerduty.com/v2/change/enqueue'),
    /**
     * How long a new incident's first trigger is held so that a storm (40 tables at once) pages
     * once, counted; 0 pages at once. At most 5 minutes: longer would hide an incident's start.
     */
    group_wait_ms: z.number().int().min(0).max(300_000).default(10_000),
    min_severity: minSeverity(DEFAULT_MIN_SEVERITY.pagerduty),
    min_severity_overrides: minSeverityOverrides,
  })
  .strict();

const alertmanager = z
  .object({
    /**
     * One Alertmanager, or every Alertmanager of an HA cluster: each gets every alert (its
     * clustering deduplicates the notifications), each from its own outbox channel.
     */
    url: z.union([z.string().url(), z.array(z.string().url()).min(1)]).superRefine((url, ctx) => {
      if (typeof url === 'string') return;
      url.forEach((u, i) => {
        if (url.indexOf(u) < i) ctx.addIssue({ code: 'custom', path: [i], message: `${u} is listed twice` });
      });
    }),
    min_severity: minSeverity(DEFAULT_MIN_SEVERITY.alertmanager),
    min_severity_overrides: minSeverityOverrides,
  })
  .strict();

const webhook = z
  .object({
    url: z.string().url(),
    /**
     * Names the webhook's outbox channel (`webhook:<name>`). Without one the channel is named by
     * position (webhook, webhook-2, ...), so reordering the list would send alerts queued for one
     * receiver to another.
     */
    name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only').nullable().default(null),
    hmac_secret: z.string().nullable().default(null),
    hmac_secret_file: z.string().nullable().default(null),
    min_severity: minSeverity(DEFAULT_MIN_SEVERITY.webhook),
    min_severity_overrides: minSeverityOverrides,
  })
  .strict();

const notify = z
  .object({
    pagerduty: pagerduty.nullable().default(null),
    alertmanager: alertmanager.nullable().default(null),
    webhooks: z.array(webhook).default([]).superRefine((webhooks, ctx) => {
      webhooks.forEach((w, i) => {
        if (w.name !== null && webhooks.findIndex((other) => other.name === w.name) < i) {
          ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `another webhook is already named "${w.name}"` });
        }
      });
    }),
  })
  .strict();

const rules = z
  .object({
    /** Rule ids not to evaluate (docs/rules.md lists them). */
    disabled: z.array(z.string()).default([]),
    interval_ms: durationMs.default(5_000),
    /** A condition must stay gone this long before its alert resolves (no flapping pages). */
    hold_down_ms: durationMs.default(60_000),
    refire_min_interval_ms: durationMs.default(60_000),
    flush_min_gap_ms: durationMs.default(1_000),
    /** A sample older than this no longer counts as the latest value. */
    stale_after_ms: durationMs.default(60_000),
    /** Per rule id, thresholds that differ from the defaults (snake_case keys, docs/rules.md). */
    // A `*_ms` threshold may be a duration text; catalog.ts turns it into milliseconds.
    thresholds: z.record(z.string(), z.record(z.string(), z.union([z.number(), z.string()]))).default({}),
  })
  .strict();

const http = z
  .object({
    /**
     * Serve /api and /readyz on a non-loopback listen address without http_token_file (a network
     * where everyone who can reach pgvigil may read what it stores). pgvigil warns at each start.
     */
    allow_unauthenticated: z.boolean().default(false),
    /**
     * A bearer token for /metrics alone (Prometheus: authorization.credentials_file). None: /metrics
     * is open, as Prometheus expects; it holds no statement text, but names databases and users.
     */
    metrics_token_file: z.string().nullable().default(null),
    /** Serve HTTPS with this certificate (PEM, intermediates after it) and its unencrypted PEM key; none: plain HTTP. */
    tls: z.object({ cert_file: z.string().min(1), key_file: z.string().min(1) }).strict().nullable().default(null),
  })
  .strict();

/** TLS to the central database, as libpq's sslmode and its files (docs/fleet.md). */
const forwardTls = z
  .object({
    mode: z.enum(['disable', 'require', 'verify-ca', 'verify-full']).default('verify-full'),
    root_cert_file: z.string().nullable().default(null),
    cert_file: z.string().nullable().default(null),
    key_file: z.string().nullable().default(null),
  })
  .strict();

/** Forwarding to a central PostgreSQL database (issue #13, docs/fleet.md). */
export const forwardPostgresSchema = z
  .object({
    /** libpq URL or keyword/value pairs; env PGVIGIL_FORWARD_POSTGRES_DSN wins over it. */
    dsn: z.string().nullable().default(null),
    password_file: z.string().nullable().default(null),
    /** null: TLS as the dsn says (sslmode=...), else none. */
    tls: forwardTls.nullable().default(null),
    /** Downsampling step of series: the latest value of each step is forwarded. */
    step_ms: durationMsBetween(1_000, 3_600_000, '1 s to 1 h').default(60_000),
    /** Rows per stream (events, alerts, transitions, samples) in one batch. */
    batch_rows: z.number().int().min(100).max(100_000).default(5_000),
    /** How often to look for new rows once caught up. */
    interval_ms: durationMsBetween(100, 300_000, '100 ms to 5 min').default(5_000),
    /** Ceiling of the drain rate of a backlog, so a returning central database is not flooded. */
    max_rows_per_second: z.number().int().positive().default(50_000),
    /** Central connections: with 2, one batch is written while the next is received. */
    connections: z.number().int().min(1).max(4).default(1),
  })
  .strict();

const forward = z.object({ postgres: forwardPostgresSchema.nullable().default(null) }).strict();

export const configSchema = z
  .object({
    listen: hostPort.default('127.0.0.1:9899'),
    db: z.string().min(1).default('./pgvigil.db'),
    log_level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'),
    /** Bearer token file for the HTTP API; required when listen is not a loopback address. */
    http_token_file: z.string().nullable().default(null),
    http: http.default(http.parse({})),
    /**
     * Statement text kept from log entries and polled sessions: off, literals, statements (src/lib/redact.ts).
     * literals by default: pgvigil stores statements and serves them; their values are the users' data.
     */
    redact: z.enum(REDACT_LEVELS).default('literals'),
    /**
     * Single-server shorthand: dsn and log describe one target, called `name` (default: the dsn's
     * host and port, this machine's name for a local server: config/target-name.ts).
     */
    name: targetName.nullable().default(null),
    dsn: z.string().nullable().default(null),
    log: z.string().nullable().default(null),
    /** The shorthand's log_filename pattern, when log is a directory (targets[].log.filename_pattern). */
    log_pattern: z.string().min(1).nullable().default(null),
    /** Static labels on every alert and notification (env, team, region); names checked in load-config.ts. */
    labels: z.record(z.string(), z.string()).default({}),
    /** pgvigil as people reach it (a URL): alerts link back to it from PagerDuty, Alertmanager and webhooks. */
    external_url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }).nullable().default(null),
    targets: z.array(target).min(1).nullable().default(null),
    collectors: collectors.default(collectors.parse({})),
    retention: retention.default(retention.parse({})),
    notify: notify.default(notify.parse({})),
    rules: rules.default(rules.parse({})),
    forward: forward.default(forward.parse({})),
  })
  .strict();

export type RawConfig = z.infer<typeof configSchema>;
export type TargetConfig = z.infer<typeof target>;
export type LogSourceConfig = z.infer<typeof logSourceSchema>;
export type ForwardPostgresRaw = z.infer<typeof forwardPostgresSchema>;
