/**
 * Wires the stages and owns their start/stop order:
 *   store -> writer -> outputs (http, outbox) -> rules -> sources (tailers, pollers) -> retention.
 * Sources start last so nothing is read before there is somewhere to put it; stop runs in
 * reverse, so sources stop reading first and the writer flushes last.
 */
import type { Config } from './config/load-config.js';
import type { Clock, Component } from './domain/index.js';
import type { Logger } from './lib/logger.js';
import { openStore, type Db } from './store/open-store.js';
import { RetentionJob } from './store/retention.js';
import { StoreWriter } from './store/store-writer.js';

export interface AppDeps {
  clock: Clock;
  log: Logger;
}

export interface App {
  readonly db: Db;
  readonly writer: StoreWriter;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function buildApp(config: Config, { clock, log }: AppDeps): App {
  const db = openStore(config.dbPath);
  const writer = new StoreWriter(db, clock, log.child({ component: 'store-writer' }));
  const components: Component[] = [
    writer,
    new RetentionJob(db, config.retention, clock, log.child({ component: 'retention' })),
  ];
  const started: Component[] = [];

  return {
    db,
    writer,
    async start() {
      log.info({ db: db.name, targets: config.targets.map((t) => t.name) }, 'pgvigil starting');
      for (const component of components) {
        await component.start();
        started.push(component);
      }
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
