/**
 * No catastrophic backtracking in the classifiers: for each family, messages built to attack its
 * regexes (near misses repeated many times, a line break where a greedy `.*` expects the end, long
 * digit runs) must cost time linear in their length. Users write such text: `RAISE LOG` with any
 * message, DETAIL and CONTEXT, quoted table names with quotes and line breaks in them.
 * See test/helpers/linear-time.ts for how the check stays loose enough for a loaded machine.
 */
import { describe, it } from 'vitest';
import type { LogEntry } from '../../domain/index.js';
import { expectLinear } from '../../../test/helpers/linear-time.js';
import { logEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

type Attack = (n: number) => LogEntry;

const message = (head: string, unit: string, tail = '', fields: Partial<LogEntry> = {}): Attack =>
  (n) => logEntry(head + unit.repeat(n) + tail, fields);
const detail = (head: string, unit: string, tail: string, text: string): Attack =>
  (n) => logEntry(text, { detail: head + unit.repeat(n) + tail });

// Line terminators that `.` does not match: each one is a place where `.*$` can fail late.
const LS = '\u2028';

const ATTACKS: Record<string, Record<string, Attack>> = {
  autoanalyze: {
    'quotes followed by usage, then a line separator': message('automatic analyze of table "', '" system usage: ', LS),
    'quotes without the closing form': message('automatic analyze of table "', '"x'),
    'usage parts that never match': message('automatic analyze of table "a.b.c"\nsystem usage: ', 'CPU: user: 1.00 s, x', ''),
  },
  autovacuum: {
    'near-miss header repeated': message('automatic vacuum of table "', '": index scans: 1x'),
    'header with a line separator after the digits': message('automatic vacuum of table "', '": index scans: 1', LS),
    'report lines of unknown parts': message('automatic vacuum of table "a.b.c": index scans: 1\npages: ', '0 removed, 1 remaining, ', 'x'),
    'many report lines': message('automatic vacuum of table "a.b.c": index scans: 1', '\ntuples: 1 removed, 1 remain, 1 are dead but not yet removable, x'),
    'digit runs in a report line': message('automatic vacuum of table "a.b.c": index scans: 1\nindex scan needed: ', '1111111111 pages from table (1.', ')'),
  },
  checkpoint: {
    'figures separated by ", " that never end': message('checkpoint complete: wrote 1 buffers (1.0%)', ', ', 'x'),
    'figures repeated': message('checkpoint complete: ', 'wrote 1 buffers (1.0%); ', 'x'),
    'flags forever': message('checkpoint starting:', ' immediate force wait'),
    'too frequent with a digit run': message('checkpoints are occurring too frequently (', '1', ' secondsx'),
  },
  data_corruption: {
    'a path that never ends': message('invalid page in block 1 of relation "base/5/', '1', '"x'),
    'a digit run for a block': message('invalid page in block ', '1', ' of'),
  },
  ddl: {
    'an unclosed quoted identifier': message('statement: ALTER TABLE ', '"a""b', ''),
    'nested comments': message('statement: ', '/* ', 'DROP TABLE t'),
    'line comments': message('statement: ', '-- x\n', 'TRUNCATE t'),
    'dollar quotes': message('execute s1: ', '$a$ ', 'DROP TABLE t'),
  },
  deadlock: {
    'near-miss wait lines': detail('Process 1 waits for ', '; blocked by process 1.x', '', 'deadlock detected'),
    'many process lines': detail('', 'Process 1: SELECT 1\n', '', 'deadlock detected'),
  },
  lock_wait: {
    'holders DETAIL cut by a line break': (n) => logEntry('process 1 still waiting for ShareLock on transaction 1 after 1.0 ms', {
      // "." rather than ",": the pid lists are split on commas, and n strings would measure the GC.
      detail: `Process holding the lock: ${'. Wait queue: '.repeat(n)}\nx`,
    }),
    'lock description with many " after "': message('process 1 still waiting for ', ' on  after 1 ms', 'x'),
    'lock description of many " of relation "': message('process 1 still waiting for ShareLock on tuple (1,1)', ' of relation 1', ' of database 1 after 1 ms'),
  },
  recovery_conflict: {
    'wait with a long reason': message('recovery still waiting after 1.0 ms: ', 'x', LS),
    'conflicting processes never closed': detail('Conflicting processes: ', '1, ', 'x', 'recovery still waiting after 1.0 ms: recovery conflict on lock'),
    'WAL redo context with colons': (n) => logEntry('recovery still waiting after 1.0 ms: recovery conflict on lock', {
      context: `WAL redo at 0/1 for ${'a: '.repeat(n)}${LS}`,
    }),
  },
  server_crash: {
    'exit reports cut by a line break': message('x', ' (PID 1) was terminated by signal 1: a', '\nx'),
    'exit reports cut by a carriage return': message('x', ' (PID 1) was terminated by signal 1: a', '\rx'),
    'exit codes that never end the line': message('x', ' (PID 1) exited with exit code 1a'),
    'background worker quotes': message('background worker "', '" (PID 1) was', '" (PID 1) exited with exit code 2x'),
  },
  server_restart: {
    'redo done with a usage cut by a line separator': message('redo done at 0/1 system usage: ', 'CPU: user: 1.00 s, ', LS),
    'last known up that never ends the line': message('database system was interrupted; last known up at ', 'x', LS),
  },
  slot_invalidated: {
    'near-miss old form repeated': message('invalidating slot "', '" because its restart_lsn 0/1 exceeds max_slot_wal_keep_sizex'),
    'quotes then a line separator': message('invalidating obsolete replication slot "', '"', `${LS}x`),
    'idle DETAIL with quotes': (n) => logEntry('invalidating obsolete replication slot "s"', {
      detail: `The slot's idle time of 1s exceeds the configured "${'x'.repeat(n)}" duration of 1s.x`,
    }),
  },
  temp_file: {
    'near-miss size repeated': message('temporary file: path "', '", size 1x'),
    'a digit run that does not end the line': message('temporary file: path "a", size ', '1', 'x'),
  },
  generic: {
    'cursor position with a digit run': message('x at character ', '1', ' at character 1'),
    'verbose SQLSTATE then a long message': message('00000: ', 'x'),
  },
};

/** Characters of the smaller input: large enough that a run outlasts the timer's noise. */
const SMALL_CHARS = 128_000;

const charsOf = (e: LogEntry): number => e.message.length + (e.detail?.length ?? 0) + (e.context?.length ?? 0);

/** How many units make an attack's smaller input about SMALL_CHARS long. */
function unitsFor(attack: Attack): number {
  return Math.ceil(SMALL_CHARS / Math.max(1, charsOf(attack(1)) - charsOf(attack(0))));
}

describe('classifiers take time linear in the message length', () => {
  for (const [family, attacks] of Object.entries(ATTACKS)) {
    describe(family, () => {
      for (const [name, attack] of Object.entries(attacks)) {
        it(name, () => expectLinear(`${family}: ${name}`, attack, (entry) => classifyEntry(entry, 'db1'), unitsFor(attack)));
      }
    });
  }
});
