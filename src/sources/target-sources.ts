/**
 * The sources of one target: its poll scheduler and, when a log is configured or the server names
 * a log directory pgvigil can read, its log tailer. The tailer learns how and where the server
 * writes its log (log_line_prefix, log_timezone, log_destination, log_filename, log_directory)
 * from pg_settings at start-up when it can, so it is built in start().
 */
import type { Config, Target } from '../config/load-config.js';
import type { LogSourceConfig } from '../config/schema.js';
import { createCollectors } from '../collectors/index.js';
import type { Clock, Component } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import { clientConfigFor } from '../lib/pg-connection.js';
import type { Db } from '../store/open-store.js';
import type { StoreWriter } from '../store/store-writer.js';
import { storedInRecovery } from '../store/stored-role.js';
import { LogTailer, notableOrProblem, readSavedOffset, type LogTailerOptions, type TailerWriter } from './log-tailer.js';
import { PollScheduler } from './poll-scheduler.js';
import { RelationNames, type RelationNamesOptions } from './relation-names.js';
import { namesDirectory } from './file-identity.js';
import { locateServerLog } from './locate-server-log.js';
import { readServerLogSettings, resolveLogSettings } from './server-log-settings.js';
import { redactEvent, redactSample, type RedactLevel } from '../lib/redact.js';
import { describeServerLanguage, languageOfServer } from './server-language.js';
import { offlineLanguage } from '../parsers/lang/index.js';
import type { ParserSettings } from './source-parser.js';

export class TargetSources implements Component {
  readonly name: string;
  readonly scheduler: PollScheduler;
  /** Names for the OIDs of lock events, from the catalog, on the scheduler's connections. */
  readonly names: RelationNames;
  tailer: LogTailer | null = null;
  /** The server's lc_messages has been read (until then the log's language is detected). */
  private languageKnown = false;
  /** The configured log, or after start() the directory the server reported when none was configured. */
  logSource: LogSourceConfig | null;

  constructor(
    readonly target: Target,
    private readonly deps: { config: Config; db: Db; writer: StoreWriter; clock: Clock; log: Logger; foldReport?: LogTailerOptions['foldReport'] },
  ) {
    this.name = `sources:${target.name}`;
    this.logSource = target.log;
    const { config, writer, clock, log } = deps;
    this.scheduler = new PollScheduler({
      target: target.name,
      connection: clientConfigFor(target),
      collectors: createCollectors({ maxTablesPerDatabase: config.collectors.maxTablesPerDatabase, disabled: config.collectors.disabled }),
      writer: redactingWriter(writer, config.redact),
      clock,
      logger: log.child({ component: 'poller' }),
      intervals: config.collectors.intervalMs,
      idleTimeoutMs: config.collectors.idleConnectionTimeoutMs,
      databaseLockCheckMs: config.collectors.databaseLockCheckIntervalMs,
      maxConnections: config.collectors.maxConnections,
      minFreeConnections: config.collectors.minFreeConnections,
      databases: config.collectors.databases,
      storedInRecovery: storedInRecovery(deps.db, target.name),
    });
    this.names = relationNamesOf(this.scheduler, { clock, logger: log.child({ component: 'relation-names', target: target.name }) });
  }

  async start(): Promise<void> {
    await this.scheduler.start();
    const log = this.deps.log.child({ component: 'tailer', target: this.target.name });
    const fromServer = await readServerLogSettings(this.target).catch((err: Error) => {
      log.info({ err: err.message }, this.target.log
        ? 'could not read the log settings from the server; detecting the format from the file'
        : 'could not ask the server where it logs, and no log is configured: only statistics are polled');
      return {};
    });
    const logSource = this.target.log ?? logSourceOnThisHost(fromServer, log);
    this.logSource = logSource;
    if (!logSource) return;
    const settings = resolveLogSettings(logSource, fromServer, namesDirectory(logSource.path));
    log.info({ source: logSource.path, ...settings }, 'reading the server log');
    const language = this.learnLanguage(fromServer, log);
    this.tailer = new LogTailer({
      target: this.target.name,
      source: logSource.path,
      logFilename: settings.logFilename,
      format: settings.format,
      ...(settings.prefix !== null ? { prefix: settings.prefix } : {}),
      ...(settings.timezone !== null ? { timezone: settings.timezone } : {}),
      startAt: logSource.start_at,
      writer: namingWriter(redactingWriter(this.deps.writer, this.deps.config.redact), this.names),
      savedOffset: readSavedOffset(this.deps.db, this.target.name, logSource.path),
      clock: this.deps.clock,
      log,
      // Statement and duration lines are counted but not stored: they are most of a busy log.
      storeEvent: notableOrProblem,
      ...(this.deps.foldReport ? { foldReport: this.deps.foldReport } : {}),
      language,
    });
    if (!this.languageKnown) {
      // Not asked at start: the server's own word replaces detection on the poller's first connect.
      this.scheduler.onStatus((status) => {
        if (!status.connected || this.languageKnown) return;
        void readServerLogSettings(this.target).then(
          (server) => {
            if (this.languageKnown) return;
            const learned = this.learnLanguage(server, log);
            if (this.languageKnown) this.tailer?.setLanguage(learned);
          },
          (err: Error) => log.debug({ err: err.message }, 'could not read lc_messages yet'),
        );
      });
    }
    await this.tailer.start();
  }

  /**
   * The language the log is read in: the server's lc_messages when the server said it (a missing
   * catalog is said here, once: the server says it only once), else detection from the log's first
   * lines among the shipped catalogs.
   */
  private learnLanguage(server: Readonly<Record<string, string>>, log: Logger): ParserSettings['language'] {
    const found = languageOfServer(server);
    if (found === null) return offlineLanguage(undefined).setting;
    this.languageKnown = true;
    if (found.problem !== null) log.warn({ lc_messages: found.lcMessages, major: found.major }, found.problem);
    else log.info({ lc_messages: found.lcMessages, major: found.major }, describeServerLanguage(found));
    return found.setting;
  }

  async stop(): Promise<void> {
    await this.tailer?.stop();
    await this.scheduler.stop();
  }
}

/** The name cache on a scheduler's connections, warmed on every connect (not awaited: names are a convenience). */
export function relationNamesOf(scheduler: PollScheduler, options: Omit<RelationNamesOptions, 'query'>): RelationNames {
  const names = new RelationNames({ query: (db, sql, params) => scheduler.catalogQuery(db, sql, params), ...options });
  scheduler.onStatus((status) => {
    if (status.connected) void names.warm();
  });
  return names;
}

/** The writer, with the statement text of each batch redacted first: nothing unredacted is stored. */
export function redactingWriter(writer: TailerWriter, level: RedactLevel): TailerWriter {
  if (level === 'off') return writer;
  return {
    enqueue: (batch) => writer.enqueue({
      ...batch,
      ...(batch.events ? { events: batch.events.map((e) => redactEvent(e, level)) } : {}),
      ...(batch.samples ? { samples: batch.samples.map((s) => redactSample(s, level)) } : {}),
    }),
    get accepting() {
      return writer.accepting;
    },
  };
}

/** The writer, with the lock objects of each batch's events named from the cache first (no I/O). */
export function namingWriter(writer: TailerWriter, names: RelationNames): TailerWriter {
  return {
    enqueue: (batch) => {
      names.annotate(batch.events ?? []);
      writer.enqueue(batch);
    },
    get accepting() {
      return writer.accepting;
    },
  };
}

/**
 * With no log configured, the log the server says it writes when pgvigil can read it here (pgvigil
 * runs on the database host): its collector's directory, or Debian's file. Elsewhere says why not.
 */
function logSourceOnThisHost(server: Readonly<Record<string, string>>, log: Logger): LogSourceConfig | null {
  if (Object.keys(server).length === 0) return null;
  const located = locateServerLog(server);
  if (located.source === null) {
    log.info({ logging_collector: server.logging_collector ?? null }, `no log configured and ${located.why}: only statistics are polled; set --log to the log file or directory`);
    return null;
  }
  log.info({ source: located.source.path }, `no log configured: reading ${located.found}`);
  return located.source;
}
