/**
 * `pgvigil run` (and `pgvigil serve`): builds the app, starts it, and on SIGTERM/SIGINT stops it
 * (flushing in-flight batches) and exits 0. A second signal, or a stop that takes longer than
 * STOP_DEADLINE_MS, exits 1 at once: an operator asking twice means it.
 */
import type { Config } from '../config/load-config.js';
import { systemClock } from '../domain/clock.js';
import type { Component } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import { buildApp } from '../app.js';
import { EXIT } from './exit-codes.js';

const STOP_DEADLINE_MS = 10_000;

export interface RunOptions {
  /** The log goes to a person at a terminal (pretty), not to a log shipper (JSON). */
  terminal: boolean;
}

export async function runDaemon(config: Config, log: Logger, options: RunOptions): Promise<number> {
  return runUntilSignalled(() => buildApp(config, { clock: systemClock, log }), log, options);
}

/** Builds and starts an app (the daemon, or `pgvigil serve`), and stops it on SIGTERM/SIGINT. */
export async function runUntilSignalled(build: () => Pick<Component, 'start' | 'stop'>, log: Logger, { terminal }: RunOptions): Promise<number> {
  // Listened for before starting: a SIGTERM while the app starts (its HTTP server already
  // answering) stops it once started, with batches flushed, instead of killing it outright.
  let onSignal: (signal: NodeJS.Signals) => void = () => undefined;
  const signalled = new Promise<NodeJS.Signals>((resolve) => { onSignal = resolve; });
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  let app;
  try {
    app = build();
    await app.start();
  } catch (err) {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    const message = `pgvigil could not start: ${(err as Error).message}`;
    // An error with a stable code (a store that cannot open, an address in use) is the operator's
    // to fix: one line at a terminal. The JSON log keeps the stack, and a bug shows it everywhere.
    if (terminal && hasStableCode(err)) log.fatal(message);
    else log.fatal({ err }, message);
    await app?.stop().catch(() => undefined);
    log.flush();
    return EXIT.FAILURE;
  }
  const signal = await signalled;
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

function hasStableCode(err: unknown): boolean {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'string';
}
