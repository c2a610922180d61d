/**
 * What `pgvigil demo` configures: the servers' settings (logging as pgvigil wants it, and a
 * standby that feeds its horizon back) and the daemon's config, with rule thresholds lowered so
 * that a two-minute incident on an empty cluster crosses them. Pure: no I/O.
 *
 * The lowered thresholds live here, in the demo's generated config, never in the rules'
 * defaults: 1,000 XIDs of horizon age or 10 s of lag means nothing on a real server.
 */

/** How long replay waits for a conflicting standby query before cancelling it. */
export const STANDBY_CONFLICT_DELAY_S = 15;

/** What every server of the demo logs: what docs/rules.md says the rules need, and a quick deadlock_timeout. */
export const LOGGING_SETTINGS = {
  log_autovacuum_min_duration: 0,
  log_lock_waits: true,
  log_recovery_conflict_waits: true,
  log_statement: 'ddl',
  log_checkpoints: true,
  log_temp_files: 0,
  // log_lock_waits and log_recovery_conflict_waits report a wait once it lasts this long.
  deadlock_timeout: '200ms',
} as const;

export const PRIMARY_SETTINGS = {
  ...LOGGING_SETTINGS,
  // Autovacuum visits often, so its reports show the held horizon within seconds.
  autovacuum_naptime: '2s',
} as const;

export const STANDBY_SETTINGS = {
  hot_standby_feedback: true,
  // Feedback (the standby's oldest xmin) reaches the primary within a second, not ten.
  wal_receiver_status_interval: '1s',
  max_standby_streaming_delay: `${STANDBY_CONFLICT_DELAY_S}s`,
} as const;

export const MONITOR_ROLE = 'pgvigil_monitor';

export interface DemoServer {
  host: string;
  port: number;
  logDir: string;
}

export interface DemoConfigInput {
  primary: DemoServer;
  standby: DemoServer;
  listen: string;
  db: string;
}

/** The daemon's config (snake_case, as written to YAML). */
export function demoConfig(input: DemoConfigInput): Record<string, unknown> {
  const target = (name: string, server: DemoServer) => ({
    name,
    cluster: 'demo',
    dsn: `postgres://${MONITOR_ROLE}@${server.host}:${server.port}/postgres`,
    // From the beginning: the servers' start-up is part of the story.
    log: { path: server.logDir, start_at: 'beginning' },
  });
  return {
    listen: input.listen,
    db: input.db,
    targets: [target('primary', input.primary), target('standby', input.standby)],
    collectors: {
      interval_ms: { pg_xmin_horizon: 2_000, pg_lock_waits: 2_000, pg_replication_slots: 2_000, pg_stat_replication: 2_000, pg_stat_user_tables: 5_000 },
    },
    rules: {
      interval_ms: 1_000,
      // Resolutions show within the demo, not a minute after.
      hold_down_ms: 8_000,
      // The stored summary follows the incident (a horizon's age, a queue's length) every 5 s.
      refire_min_interval_ms: 5_000,
      stale_after_ms: 6_000,
      thresholds: {
        'xmin-horizon-held': { warn_age_xids: 1_000 },
        // The standby's 55 s report is the demo's hold: held 15 s is enough here. Only the time is
        // lowered: after the incident the cutoffs are a few XIDs old, below min_age_xids, and quiet.
        'vacuum-held-back': { min_held_ms: 15_000 },
        'replica-lag-over-lb-limit': { limit_seconds: 10 },
      },
    },
  };
}
