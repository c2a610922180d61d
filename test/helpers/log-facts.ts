/**
 * What a recorded log says, read with plain regular expressions over its stderr text (and its
 * jsonlog for SQLSTATEs, which the harness's stderr prefix does not print): the referee when
 * pgvigil and pgBadger disagree. Independent of pgvigil's parsers on purpose; it knows only the
 * lines the workload of test/helpers/scenarios/log-report-workload.ts produces, in English.
 */
import fs from 'node:fs';
import { round3 } from './pgbadger.js';

export interface LogFacts {
  /** `duration: ... statement:` and `duration: ... execute <name>:` lines. */
  statements: number;
  statementMs: number;
  /** `duration: ... parse <name>:` and `duration: ... bind <name>:` lines. */
  parseBindMs: number;
  /** Entries by severity, ERROR and above. */
  errorsByLevel: Record<string, number>;
  connectionsReceived: number;
  connectionsAuthorized: number;
  disconnections: number;
  /** The disconnection lines' session times added up. */
  sessionMs: number;
  checkpointsStarted: number;
  checkpointsCompleted: number;
  buffersWritten: number;
  tempFiles: { count: number; totalBytes: number; maxBytes: number };
  /** `process N acquired <mode> on ... after T ms` lines (log_lock_waits). */
  lockWaitsAcquired: number;
}

// '%m [%p] %q%u@%d ': background processes (the checkpointer) stop at %q.
const PREFIX = String.raw`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \[\d+\] (?:\S*@\S* )?`;

export function readLogFacts(stderrFile: string): LogFacts {
  const text = fs.readFileSync(stderrFile, 'utf8');
  const durations = (steps: string): number[] =>
    matches(text, new RegExp(`${PREFIX}LOG:  duration: ([0-9.]+) ms  (?:${steps})`, 'gm')).map((m) => Number(m[1]));
  const statementDurations = durations('statement: |execute [^:]+: ');
  const sizes = matches(text, new RegExp(`${PREFIX}LOG:  temporary file: path "[^"]+", size (\\d+)$`, 'gm')).map((m) => Number(m[1]));
  const errorsByLevel: Record<string, number> = {};
  for (const m of matches(text, new RegExp(`${PREFIX}(ERROR|FATAL|PANIC):  `, 'gm'))) errorsByLevel[m[1]!] = (errorsByLevel[m[1]!] ?? 0) + 1;
  const count = (message: string): number => matches(text, new RegExp(`${PREFIX}LOG:  ${message}`, 'gm')).length;
  return {
    statements: statementDurations.length,
    statementMs: round3(sum(statementDurations)),
    parseBindMs: round3(sum(durations('parse [^:]+: |bind [^:]+: '))),
    errorsByLevel,
    connectionsReceived: count('connection received: '),
    connectionsAuthorized: count('connection authorized: '),
    disconnections: count('disconnection: '),
    sessionMs: sum(matches(text, new RegExp(`${PREFIX}LOG:  disconnection: session time: (\\d+):(\\d\\d):(\\d\\d\\.\\d{3}) `, 'gm'))
      .map((m) => Math.round((Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])) * 1000))),
    checkpointsStarted: count('checkpoint starting: '),
    checkpointsCompleted: count('checkpoint complete: '),
    buffersWritten: sum(matches(text, new RegExp(`${PREFIX}LOG:  checkpoint complete: wrote (\\d+) buffers`, 'gm')).map((m) => Number(m[1]))),
    tempFiles: { count: sizes.length, totalBytes: sum(sizes), maxBytes: Math.max(0, ...sizes) },
    lockWaitsAcquired: count('process \\d+ acquired '),
  };
}

/** Executions (statement and execute lines) whose statement text matches `statement`. */
export function countStatements(stderrFile: string, statement: RegExp): number {
  const text = fs.readFileSync(stderrFile, 'utf8');
  return matches(text, new RegExp(`${PREFIX}LOG:  duration: [0-9.]+ ms  (?:statement|execute [^:]+): (.*)$`, 'gm')).filter((m) => statement.test(m[1]!)).length;
}

/** ERROR-and-above entries of a jsonlog file by SQLSTATE class (the first two characters). */
export function errorClassesOfJsonlog(jsonlogFile: string): Record<string, number> {
  const classes: Record<string, number> = {};
  for (const line of fs.readFileSync(jsonlogFile, 'utf8').split('\n')) {
    if (line === '') continue;
    const entry = JSON.parse(line) as { error_severity: string; state_code?: string };
    if (!['ERROR', 'FATAL', 'PANIC'].includes(entry.error_severity)) continue;
    const errorClass = entry.state_code?.slice(0, 2) ?? '(none)';
    classes[errorClass] = (classes[errorClass] ?? 0) + 1;
  }
  return classes;
}

function matches(text: string, pattern: RegExp): RegExpExecArray[] {
  return [...text.matchAll(pattern)];
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
