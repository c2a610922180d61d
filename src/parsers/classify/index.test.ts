import { describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../../domain/index.js';
import { logEntry, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

describe('classifyEntry', () => {
  it('keeps an unrecognised entry as generic with level, SQLSTATE, message and source', () => {
    const entry = logEntry('relation "nope" does not exist', { level: 'ERROR', sqlstate: '42P01', database: 'shop', user: 'app', pid: 9 });
    expect(classifyEntry(entry, 'primary')).toEqual({
      kind: 'generic',
      target: 'primary',
      tsMs: entry.tsMs,
      pid: 9,
      database: 'shop',
      user: 'app',
      level: 'ERROR',
      sqlstate: '42P01',
      message: 'relation "nope" does not exist',
      details: { classified: false },
      source: entry.source,
    });
  });

  it('keeps the STATEMENT, CONTEXT, DETAIL and HINT of an unrecognised entry, only those it has', () => {
    const entry = logEntry('duplicate key value violates unique constraint "u_pkey"', {
      level: 'ERROR', sqlstate: '23505', detail: 'Key (id)=(1) already exists.', statement: 'INSERT INTO u VALUES (1)',
    });
    expect(classifyEntry(entry, 'primary').details).toEqual({ classified: false, detail: 'Key (id)=(1) already exists.', statement: 'INSERT INTO u VALUES (1)' });
    const inFunction = logEntry('division by zero', { level: 'ERROR', context: 'PL/pgSQL function f() line 1 at PERFORM', hint: 'h' });
    expect(classifyEntry(inFunction, 'primary').details).toEqual({ classified: false, context: 'PL/pgSQL function f() line 1 at PERFORM', hint: 'h' });
    // A bare line shares one details object with every other: a busy log allocates nothing for it.
    expect(classifyEntry(logEntry('a'), 't1').details).toBe(classifyEntry(logEntry('b'), 't1').details);
  });

  it('sends the bulk of a busy log, `duration: ... statement:` lines, to generic', () => {
    const line = '2026-10-14 06:01:00.001 UTC [60330] app@shop LOG:  duration: 1532.114 ms  statement: SELECT * FROM orders WHERE status = \'open\';';
    expect(classifyEntry(stderrEntry(line), 't1').kind).toBe('generic');
  });

  it('reads a message that still carries the verbose SQLSTATE prefix', () => {
    const entry = logEntry('55P03: canceling statement due to lock timeout', { level: 'ERROR' });
    expect(classifyEntry(entry, 't1').kind).toBe('lock_timeout');
  });

  it('drops the ` at character N` stderr appends, so the lock wait of parse analysis is still one', () => {
    const text = '2026-11-30 07:11:46.421 UTC [6512] postgres@postgres LOG:  process 6512 still waiting for AccessShareLock on relation 16411 of database 5 after 102.514 ms at character 22';
    const event = classifyEntry(stderrEntry(text), 't1');
    expect(event.kind).toBe('lock_wait');
    expect(event.message).toBe('process 6512 still waiting for AccessShareLock on relation 16411 of database 5 after 102.514 ms');
    const timeout = logEntry('canceling statement due to lock timeout at character 22', { level: 'ERROR' });
    expect(classifyEntry(timeout, 't1').kind).toBe('lock_timeout');
    expect(classifyEntry(logEntry('syntax error at or near "x" at character 8'), 't1').message).toBe('syntax error at or near "x"');
    expect(classifyEntry(logEntry('character 8'), 't1').message).toBe('character 8');
  });

  it('takes the read time for an entry without a timestamp, and the entry time otherwise', () => {
    expect(classifyEntry(logEntry('x', { tsMs: null }), 't1', 1234).tsMs).toBe(1234);
    expect(classifyEntry(logEntry('x', { tsMs: 99 }), 't1', 1234).tsMs).toBe(99);
  });

  it('never throws, whatever the message', () => {
    const odd = ['', '\n', 'automatic ', 'automatic vacuum of table "": index scans: x', 'process ', 'checkpoint complete:', 'statement: ', 'execute ',
      'terminating ', 'recovery still waiting after', 'invalidating ', ' (PID ', 'x (PID 1) exited with exit code 99999999999999999999', '\u0000\uffff'];
    for (const message of odd) {
      for (const level of ['LOG', 'ERROR', 'FATAL'] as const) {
        const event = classifyEntry(logEntry(message, { level, detail: message, context: message, statement: message }), 't1');
        expect(EVENT_KINDS).toContain(event.kind);
        expect(event.details, JSON.stringify(message)).not.toHaveProperty('classify_error');
      }
    }
  });

  it('turns a classifier failure into a generic event that says why', () => {
    const entry = logEntry('deadlock detected', { level: 'ERROR' });
    Object.defineProperty(entry, 'detail', { get: () => { throw new Error('detail unreadable'); } });
    const event = classifyEntry(entry, 't1');
    expect(event.kind).toBe('generic');
    expect(event.details).toEqual({ classified: false, classify_error: 'detail unreadable' });
  });
});
