/**
 * Temporary directories that remove themselves, so a test run leaves nothing behind in /tmp.
 * Each name starts with `pgvigil-<prefix>-`, which is how a leftover would be traced to its test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

function makeTempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `pgvigil-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A directory shared by a test file or a describe block; call it there, not inside a test. Removed after the last test. */
export function suiteTempDir(prefix: string): string {
  const { dir, remove } = makeTempDir(prefix);
  afterAll(remove);
  return dir;
}

/** A directory for one test; call it inside the test. Removed when the test ends, passed or failed. */
export function testTempDir(prefix: string): string {
  const { dir, remove } = makeTempDir(prefix);
  onTestFinished(remove);
  return dir;
}
