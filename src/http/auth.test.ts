import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTokenFile } from './auth.js';

describe('readTokenFile', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-token-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the first line, trimmed', () => {
    const file = path.join(dir, 'token');
    writeFileSync(file, '  0123456789abcdef0123  \nsecond line\n');
    expect(readTokenFile(file)).toBe('0123456789abcdef0123');
  });

  it('names the file and the fix when the token is missing or short', () => {
    expect(() => readTokenFile(path.join(dir, 'absent'))).toThrow(/absent: cannot read it/);
    const short = path.join(dir, 'short');
    writeFileSync(short, 'abc\n');
    expect(() => readTokenFile(short)).toThrow(/at least 16 characters \(e\.g\. openssl rand -hex 32/);
  });
});
