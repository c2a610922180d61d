/**
 * A workload that makes a real server log what fault tests count: numbered WARNINGs without
 * pause ("<label> tick N", one entry each, stored by the daemon), and optionally a storm of
 * statement timeouts every so often (which error-storm turns into an alert). The log files are
 * then read back without pgvigil's parser (logFileTicks) as the independent count.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { PgServer } from './pg-harness.js';

export interface WorkloadOptions {
  label: string;
  tickEveryMs: number;
  /** Bytes of padding per tick, to fill a disk sooner. */
  padBytes?: number;
  storm?: { everyMs: number; errors: number };
  /**
   * Reconnect when the server goes away. A tick whose connection died may then be in the log
   * without being counted (or twice, with the same number): compare the store with the log.
   */
  reconnect?: boolean;
}

const RECONNECT_WAIT_MS = 200;

export class LogWorkload {
  ticks = 0;
  storms = 0;
  stormErrors = 0;
  private stopped = false;
  private readonly running: Promise<unknown>[] = [];
  private readonly stopping = new AbortController();

  constructor(private readonly options: WorkloadOptions) {}

  /** Matches a tick's first line in the log file; group 1 is its number. */
  get tickLine(): RegExp {
    return new RegExp(`WARNING: {2}${this.options.label} tick (\\d+)(?: [.]*)?$`);
  }

  /** Matches a tick's stored message (the text after the severity); group 1 is its number. */
  get tickMessage(): RegExp {
    return new RegExp(`^${this.options.label} tick (\\d+)(?: [.]*)?$`);
  }

  start(server: PgServer): void {
    const pad = '.'.repeat(this.options.padBytes ?? 0);
    this.running.push(this.loop(server, async (client) => {
      const suffix = pad === '' ? '' : ` ${pad}`;
      await client.query(`DO $$BEGIN RAISE WARNING '${this.options.label} tick %${suffix}', ${this.ticks}; END$$`);
      this.ticks++;
      await this.pause(this.options.tickEveryMs);
    }));
    const storm = this.options.storm;
    if (storm) {
      this.running.push(this.loop(server, async (client) => {
        await client.query('SET statement_timeout = 20');
        for (let i = 0; i < storm.errors; i++) {
          await client.query('SELECT pg_sleep(1)').then(
            () => { throw new Error('pg_sleep(1) was not cancelled by statement_timeout = 20'); },
            (err: { code?: string }) => { if (err.code !== '57014') throw err; },
          );
          this.stormErrors++;
        }
        this.storms++;
        await this.pause(storm.everyMs);
      }));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    await Promise.all(this.running);
  }

  /** Waits ms, or less when stop() is called. */
  private pause(ms: number): Promise<void> {
    const signal = this.stopping.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Runs step on one connection until stop(); with `reconnect`, a lost connection (the server
   * killed or stopped by the test) is opened again until stop().
   */
  private async loop(server: PgServer, step: (client: pg.Client) => Promise<void>): Promise<void> {
    while (!this.stopped) {
      const client = new pg.Client({ connectionString: server.dsn() });
      // A failed query rejects; the same error emitted on the idle client must not crash the run.
      client.on('error', () => undefined);
      try {
        await client.connect();
        while (!this.stopped) await step(client);
      } catch (err) {
        if (!this.options.reconnect || this.stopped) throw err;
        await this.pause(RECONNECT_WAIT_MS);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }
}

const ENTRY_START = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \[\d+\] /;
const STATEMENT_TIMEOUT = /ERROR: {2}canceling statement due to statement timeout$/;

export interface LogFileCount {
  /** `${file}:${byte offset}` of every entry's first line. */
  starts: Set<string>;
  /** Tick number by `${file}:${offset}`. */
  ticks: Map<string, number>;
  statementTimeouts: number;
}

/** Reads the log files line by line (the harness's log_line_prefix, UTC): where entries start, ticks, timeouts. */
export function countLogFiles(files: string[], tick: RegExp): LogFileCount {
  const count: LogFileCount = { starts: new Set(), ticks: new Map(), statementTimeouts: 0 };
  for (const file of files) {
    let offset = 0;
    // latin1: one character per byte, so offsets count bytes.
    for (const line of readFileSync(file).toString('latin1').split('\n')) {
      if (ENTRY_START.test(line)) {
        const at = `${file}:${offset}`;
        count.starts.add(at);
        const number = tick.exec(line)?.[1];
        if (number !== undefined) count.ticks.set(at, Number(number));
        if (STATEMENT_TIMEOUT.test(line)) count.statementTimeouts++;
      }
      offset += line.length + 1;
    }
  }
  return count;
}
