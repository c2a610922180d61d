import { describe, expect, it } from 'vitest';
import { isLoopback } from './listen-address.js';

describe('isLoopback', () => {
  it.each([['127.0.0.1', true], ['127.1.2.3', true], ['::1', true], ['[::1]', true], ['localhost', true], ['0.0.0.0', false], ['::', false], ['10.0.0.5', false], ['db.example.net', false]])(
    '%s -> %s', (host, expected) => expect(isLoopback(host)).toBe(expected),
  );
});
