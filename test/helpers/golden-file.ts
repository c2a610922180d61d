/**
 * Golden files: what the code under test produced once, reviewed by a person and committed.
 * UPDATE_GOLDEN=1 rewrites them (then `git diff` is the review); without it a missing golden is a
 * failure, never written from the output it is meant to check, so a new case cannot pass by
 * approving itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

export function updatingGoldens(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.UPDATE_GOLDEN === '1';
}

/** `actual` equals the golden `file`; with UPDATE_GOLDEN=1, writes it first. */
export function expectGolden(file: string, actual: string): void {
  if (updatingGoldens()) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, actual);
  } else if (!fs.existsSync(file)) {
    throw new Error(`no golden file ${file}: run with UPDATE_GOLDEN=1, review it with git diff and commit it`);
  }
  expect(actual).toBe(fs.readFileSync(file, 'utf8'));
}
