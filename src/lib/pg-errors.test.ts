/**
 * Which errors are the connection's rather than the query's: the poll scheduler reconnects or
 * re-probes on those, and counts the rest per collector.
 */
import { describe, expect, it } from 'vitest';
import { errorCode, isConnectionError } from './pg-errors.js';

describe('errorCode / isConnectionError', () => {
  it.each([
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, '57P01', true],
    [{ code: '57014', message: 'canceling statement due to statement timeout' }, '57014', false],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, 'ECONNREFUSED', true],
    [new Error('Connection terminated unexpectedly'), 'connection_terminated', true],
    [new Error('Cannot use a pool after calling end on the pool'), 'connection_terminated', true],
    [new Error('Client has encountered a connection error and is not queryable'), 'connection_terminated', true],
    [new Error('timeout exceeded when trying to connect'), 'connect_timeout', true],
    [new Error('Query read timeout'), 'client_timeout', false],
    [{ code: '08006', message: 'connection failure' }, '08006', true],
    ['a string', 'unknown', false],
  ])('%j -> %s', (err, code, connection) => {
    expect(errorCode(err)).toBe(code);
    expect(isConnectionError(code)).toBe(connection);
  });
});
