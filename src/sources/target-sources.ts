/**
 * The sources of one target: its poll scheduler and, when a log is configured, its log tailer.
 * The tailer learns how the server writes its log (log_line_prefix, log_timezone,
 * log_destination) from pg_settings at start-up when it can, so it is built in start().
 */
import type { Config, Target } from '../config/load-config.js';
import { createCollectors } from '../collectors/index.js';
import type { Clock, Component } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import { clientConfigFor } from '../lib/pg-connection.js';
import type { Db } from '../store/open-store.js';
import type { StoreWriter } from '../store/store-writer.js';
import { LogTailer, notableOrProblem, readSavedOffset } from './log-tailer.js';
import { PollScheduler } from './poll-scheduler.js';
import { readServerLogSettings, resolveLogSettings } from './server-log-settings.js';

export class TargetSources implements Component {
  readonly name: string;
  readonly scheduler: PollScheduler;
  tailer: LogTailer | null = null;

  constructor(
    readonly target: Target,
    private readonly deps: { config: Config; db: Db; writer: StoreWriter; clock: Clock; log: Logger },
  ) {
    this.name = `sources:${target.name}`;
    const { config, writer, clock, log } = deps;
    this.scheduler = new PollScheduler({
      target: target.name,
      connection: clientConfigFor(target),
      collectors: createCollectors({ maxTablesPerDatabase: config.collectors.maxTablesPerDatabase, disabled: config.collectors.disabled }),
      writer,
      clock,
      logger: log.child({ component: 'poller' }),
      intervals: config.collectors.intervalMs,
      idleTimeoutMs: config.collectors.idleConnectionTimeoutMs,
      databaseLockCheckMs: config.collectors.databaseLockCheckIntervalMs,
    });
  }

  async start(): Promise<void> {
    await this.scheduler.start();
    const logSource = this.target.log;
    if (!logSource) return;
    const log = this.deps.log.child({ component: 'tailer', target: this.target.name });
    const fromServer = await readServerLogSettings(this.target).catch((err: Error) => {
      log.info({ err: err.message }, 'could not read the log settings from the server; detecting the format from the file');
      return {};
    });
    const settings = resolveLogSettings(logSource, fromServer);
    log.info({ source: logSource.path, ...settings }, 'reading the server log');
    this.tailer = new LogTailer({
      target: this.target.name,
      source: logSource.path,
      logFilename: logSource.filename_pattern,
      format: settings.format,
      ...(settings.prefix !== null ? { prefix: settings.prefix } : {}),
      ...(settings.timezone !== null ? { timezone: settings.timezone } : {}),
      startAt: logSource.start_at,
      writer: this.deps.writer,
      savedOffset: readSavedOffset(this.deps.db, this.target.name, logSource.path),
      clock: this.deps.clock,
      log,
      // Statement and duration lines are counted but not stored: they are most of a busy log.
      storeEvent: notableOrProblem,
    });
    await this.tailer.start();
  }

  async stop(): Promise<void> {
    await this.tailer?.stop();
    await this.scheduler.stop();
  }
}
