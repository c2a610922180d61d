import { describe, expect, it } from 'vitest';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 04:00:00.100 UTC [1001] ';

describe('server_crash (§4.1)', () => {
  it('reads the PG 18 example with the failed query', () => {
    const text = [
      `${AT}LOG:  client backend (PID 60001) was terminated by signal 9: Killed`,
      `${AT}DETAIL:  Failed process was running: SELECT * FROM big_report(2026);`,
    ].join('\n');
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'server_crash')).toEqual({
      process_type: 'client backend',
      worker_type: null,
      pid: 60001,
      signal: 9,
      signal_name: 'Killed',
      exit_code: null,
      exception: null,
      statement: 'SELECT * FROM big_report(2026);',
    });
  });

  it.each([
    ['server process (PID 60001) was terminated by signal 11: Segmentation fault', { process_type: 'server process', signal: 11, signal_name: 'Segmentation fault' }],
    ['autovacuum worker (PID 41235) was terminated by signal 6: Aborted', { process_type: 'autovacuum worker', signal: 6 }],
    ['background worker "logical replication worker" (PID 7000) was terminated by signal 9: Killed', { process_type: 'background worker', worker_type: 'logical replication worker' }],
    ['checkpointer process (PID 61001) exited with exit code 2', { process_type: 'checkpointer process', exit_code: 2, signal: null }],
    ['startup process (PID 61000) was terminated by signal 6: Aborted', { process_type: 'startup process', signal: 6 }],
    ['server process (PID 60001) was terminated by exception 0xC0000005', { exception: '0xC0000005', signal: null, exit_code: null }],
    ['server process (PID 60001) exited with unrecognized status 300', { process_type: 'server process', exit_code: null, signal: null }],
  ])('%s', (message, expected) => {
    const d = detailsOf(classifyEntry(stderrEntry(`${AT}LOG:  ${message}`), 't1'), 'server_crash');
    expect(d).toMatchObject(expected);
    expect(d.statement).toBeNull();
  });

  it.each([
    ["REPACK's decoding worker exiting with code 1 (§13.5)", 'background worker "REPACK decoding worker" (PID 71003) exited with exit code 1'],
    ['a startup process failure (the server stops, it does not reset)', 'startup process (PID 61000) exited with exit code 1'],
    ['an archiver exit', 'archiver process (PID 900) exited with exit code 1'],
    ['exit code 0', 'background worker "pg_squeeze scheduler worker" (PID 900) exited with exit code 0'],
  ])('is not a crash: %s', (_name, message) => {
    expect(classifyEntry(stderrEntry(`${AT}LOG:  ${message}`), 't1').kind).toBe('generic');
  });

  it('ignores a `(PID n)` mention above LOG level', () => {
    const message = `${AT}ERROR:  server process (PID 60001) was terminated by signal 9: Killed`;
    expect(classifyEntry(stderrEntry(message), 't1').kind).toBe('generic');
  });
});
