/**
 * `pgvigil run`: builds the app, starts it, and on SIGTERM/SIGINT stops it (flushing in-flight
 * batches) and exits 0. A second signal, or a stop that takes longer than STOP_DEADLINE_MS,
 * exits 1 at once: an operator asking twice means it.
 */
import type { Config } from '../config/load-config.js';
import { systemClock } from '../domain/clock.js';
import type { Logger } from '../lib/logger.js';
import { buildApp } from '../app.js';
import { EXIT } from './exit-codes.js';

const STOP_DEADLINE_MS = 10_000;

export async function runDaemon(config: Config, log: Logger): Promise<number> {
  let app;
  try {
    app = buildApp(config, { clock: systemClock, log });
    await app.start();
  } catch (err) {
    log.fatal({ err }, `pgvigil could not start: ${(err as Error).message}`);
    await app?.stop().catch(() => undefined);
    log.flush();
    return EXIT.FAILURE;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info({ signal }, 'stopping: flushing in-flight batches');
  const forced = new Promise<number>((resolve) => {
    const timer = setTimeout(() => resolve(EXIT.FAILURE), STOP_DEADLINE_MS);
    timer.unref();
    process.once(signal, () => resolve(EXIT.FAILURE));
  });
  const code = await Promise.race([app.stop().then(() => EXIT.OK), forced]);
  log.info({ code }, code === EXIT.OK ? 'stopped' : 'stop did not finish in time; exiting anyway');
  log.flush();
  return code;
}
