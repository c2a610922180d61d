/**
 * Wires the stages and owns their start/stop order:
 *   report minutes (merging) -> writer -> outbox -> http -> rules (and their backlog catch-up) -> sources (pollers, tailers) -> retention -> forwarder.
 * Sources start last so nothing is read before there is somewhere to put it; stop runs in
 * reverse, so sources stop reading first and the writer flushes last.
 */
import { createCollectors } from './collectors/index.js';
import type { Config } from './config/load-config.js';
import type { AnyLogEvent, Clock, Component } from './domain/index.js';
import { buildForwarder } from './forward/build-forwarder.js';
import { buildHttpApp } from './http/build-http-app.js';
import { HttpServer } from './http/http-server.js';
import { Metrics } from './http/metrics.js';
import type { ReadinessSources } from './http/readiness.js';
import { collectorStatsOf, existingFilesBytes } from './http/self-metrics.js';
import { isLoopback } from './lib/listen-address.js';
import type { Logger } from './lib/logger.js';
import { PGVIGIL_VERSION } from './lib/version.js';
import { LOG_REPORT_SECTIONS } from './report/log-report/index.js';
import { foldByMinute } from './report/log-report/minute-folds.js';
import { ReportMinutesCompactor } from './report/log-report/report-minutes-compactor.js';
import { reportableEvent } from './report/log-report/reportable-event.js';
import { DEFAULT_REPORT_LIMITS } from './report/log-report/section.js';
import { buildNotifiers } from './notify/build-notifiers.js';
import { Outbox } from './notify/outbox.js';
import { RejectedDeliveries, ruleAlertsOnly } from './notify/rejected-deliveries.js';
import { BacklogCatchUp } from './rules/backlog-catch-up.js';
import { buildRules, logOnlyRuleIds, RULES } from './rules/catalog.js';
import { RuleEngine } from './rules/engine.js';
import { LogJudgement } from './rules/log-judgement.js';
import { StoreRuleViewSource } from './rules/store-rule-view.js';
import { SCHEDULER_METRICS } from './sources/poll-scheduler.js';
import { TargetSources } from './sources/target-sources.js';
import { roleChangeNotice } from './sources/role-change.js';
import { AlertStore } from './store/alert-store.js';
import { LogJudgedTable } from './store/log-judged.js';
import { openStore, type Db } from './store/open-store.js';
import { StoreQueries } from './store/queries.js';
import { Silences } from './store/silences.js';
import { RetentionJob } from './store/retention.js';
import { StoreWriter } from './store/store-writer.js';

export interface AppDeps {
  clock: Clock;
  log: Logger;
}

export interface App {
  readonly db: Db;
  readonly writer: StoreWriter;
  /** http://host:port once started. */
  readonly url: string | null;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function buildApp(config: Config, { clock, log }: AppDeps): App {
  const db = openStore(config.dbPath);
  const writer = new StoreWriter(db, clock, log.child({ component: 'store-writer' }));
  const reportMinutes = new ReportMinutesCompactor(db, clock, log.child({ component: 'report-minutes' }));
  // Each commit of a log carries the report of every event it read, holding no more than the redact level lets stored events hold.
  const foldReport = (events: readonly AnyLogEvent[]) =>
    foldByMinute(config.redact === 'off' ? events : events.map((e) => reportableEvent(e, config.redact)), LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS);
  const notifiers = buildNotifiers(config);
  const alerts = new AlertStore(db, notifiers);
  // A receiver's rejection raises pgvigil's own alert (notifications-rejected), sent through the other channels.
  const watcher = new RejectedDeliveries(alerts, config.targets[0]?.name ?? 'pgvigil');
  const outbox = new Outbox(db, notifiers, clock, log.child({ component: 'outbox' }), { refresher: alerts, watcher });
  alerts.onTransition(() => outbox.wake());
  const targets = config.targets.map((target) => new TargetSources(target, { config, db, writer, clock, log, foldReport }));
  // A failover informs every notifier that takes change events; it pages only through the rules.
  for (const t of targets) t.scheduler.onRoleChange((change) => outbox.sendChange(roleChangeNotice(t.target.name, t.target.cluster, change, clock.nowMs())));
  const retention = new RetentionJob(db, { ...config.retention, keepUnforwarded: config.forward.postgres !== null }, clock, log.child({ component: 'retention' }), config.retention.intervalMs);
  const forwarder = buildForwarder(config, db, clock, log.child({ component: 'forward' }));
  const metrics = new Metrics({
    clock,
    version: PGVIGIL_VERSION,
    descriptions: [...createCollectors().flatMap((c) => c.metrics), ...SCHEDULER_METRICS],
    maxTablesPerTarget: config.collectors.maxTablesPerDatabase,
    targets: config.targets.map((t) => ({ name: t.name, cluster: t.cluster })),
    sources: {
      tailers: () => targets.flatMap((t) => (t.tailer && t.logSource ? [tailerStats(t.target.name, t.logSource.path, t.tailer.stats())] : [])),
      collectors: () => targets.flatMap((t) => collectorStatsOf(t.target.name, t.scheduler.stats)),
      writer: () => ({ ...writer.stats, backlogRows: writer.backlogRows }),
      storeSizeBytes: () => existingFilesBytes([db.name, `${db.name}-wal`]),
      notifiers: () => outbox.stats(),
      retention: () => retention.stats,
      ...(forwarder ? { forward: () => forwarder.stats } : {}),
    },
  });
  metrics.attachWriter(writer);
  metrics.attachAlerts(alerts);
  const judgement = new LogJudgement(new LogJudgedTable(db), clock, config.targets.map((t) => t.name));
  const engine = new RuleEngine({
    rules: buildRules(config.rules),
    views: new StoreRuleViewSource(db, { targets: config.targets.map((t) => ({ name: t.name, cluster: t.cluster })), staleAfterMs: config.rules.staleAfterMs }),
    alerts: ruleAlertsOnly(alerts),
    clock,
    log: log.child({ component: 'rules' }),
    commits: writer,
    judged: judgement,
    options: config.rules,
  });
  const catchUp = new BacklogCatchUp({
    engine, commits: writer, judgement, clock, log: log.child({ component: 'rules' }), ruleIds: logOnlyRuleIds(config.rules), intervalMs: config.rules.intervalMs,
    targets: config.targets.map((t) => t.name),
  });
  const readiness: ReadinessSources = {
    store: () => ({ writable: !writer.stats.failing, detail: writer.stats.failing ? `${writer.backlogRows} rows waiting` : null }),
    postgres: () => targets.map((t) => ({ target: t.target.name, reachable: t.scheduler.status.server === null && t.scheduler.status.lastError === null ? null : t.scheduler.status.connected, detail: t.scheduler.status.lastError })),
    logs: () => targets.map((t) => logReadiness(t)),
  };
  let http: HttpServer | null = null;
  const started: Component[] = [];

  return {
    db,
    writer,
    get url() {
      return http?.url ?? null;
    },
    async start() {
      log.info({ version: PGVIGIL_VERSION, db: db.name, targets: config.targets.map((t) => t.name) }, 'pgvigil starting');
      if (config.httpToken === null && !isLoopback(config.listen.host)) {
        const listen = `${config.listen.host}:${config.listen.port}`;
        if (config.httpAllowUnauthenticated) log.warn({ listen }, 'http.allow_unauthenticated: /api and /readyz are served without a token to every host that can reach this address');
        else log.info({ listen }, '/metrics and /healthz are served to every host; the API, /readyz and the page to this host only (as localhost), until http_token_file is set');
      }
      const app = await buildHttpApp({
        metrics, queries: new StoreQueries(db), readiness, clock, listenHost: config.listen.host, token: config.httpToken, metricsToken: config.httpMetricsToken, tls: config.httpTls,
        allowUnauthenticated: config.httpAllowUnauthenticated, logger: log.child({ component: 'http' }),
        silences: { store: new Silences(db), targets: config.targets.map((t) => t.name), rules: Object.keys(RULES) },
      });
      http = new HttpServer(app, config.listen.host, config.listen.port);
      // The report's minutes merge after the writer's last flush.
      const components: Component[] = [reportMinutes, writer, outbox, metrics, http, engine, catchUp, ...targets, retention, ...(forwarder ? [forwarder] : [])];
      for (const component of components) {
        await component.start();
        started.push(component);
      }
      log.info({ url: http.url }, `serving /metrics, /healthz, /readyz and /api on ${http.url}`);
    },
    async stop() {
      for (const component of started.reverse()) {
        try {
          await component.stop();
        } catch (err) {
          log.error({ err, component: component.name }, 'component failed to stop cleanly');
        }
      }
      started.length = 0;
      db.close();
    },
  };
}

function tailerStats(target: string, source: string, stats: ReturnType<NonNullable<TargetSources['tailer']>['stats']>) {
  return {
    target,
    source,
    linesRead: stats.linesRead,
    bytesRead: stats.bytesRead,
    parseFailures: stats.parser?.unparsed_by_reason ?? {},
    lagBytes: stats.lagBytes,
    lagSeconds: stats.behindSeconds,
  };
}

function logReadiness(t: TargetSources) {
  const source = t.logSource;
  if (!source) return { target: t.target.name, source: null, reading: null, detail: 'no log configured' };
  if (!t.tailer) return { target: t.target.name, source: source.path, reading: null, detail: 'not started yet' };
  const stats = t.tailer.stats();
  return {
    target: t.target.name,
    source: source.path,
    reading: !stats.waitingForSource,
    detail: stats.waitingForSource ? `waiting for ${source.path} to appear` : stats.currentFile,
  };
}
