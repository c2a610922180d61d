/**
 * pgvigil's own structured log: JSON lines by default (for log shippers), pretty when stderr is
 * a TTY. Every component takes a child logger with `component` set.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, pretty = process.stderr.isTTY === true): Logger {
  if (pretty) {
    return pino({
      level,
      transport: { target: 'pino-pretty', options: { destination: 2, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname' } },
    });
  }
  return pino({ level, base: { pid: process.pid } }, pino.destination({ dest: 2, sync: false }));
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
