/**
 * The tool gate: tests that need a Debian tool run when it is installed, skip with the reason
 * (and how to install it) when it is not, and FAIL instead of skipping under CI (any truthy value, ci.ts), where
 * .ci/run installs every tool, so a missing install step cannot hide behind a green run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, type SuiteFactory, type TestFunction } from 'vitest';
import { isCi } from './ci.js';
import { pgAvailability } from './pg-binaries.js';

export type ToolName = 'pg15' | 'pg19' | 'pgbadger' | 'promtool' | 'prometheus' | 'alertmanager' | 'postgres_exporter' | 'chromium' | 'strace' | 'pg_createcluster' | 'systemd-analyze';

export interface ToolStatus {
  ok: boolean;
  why: string;
}

// Debian's binary name and the package that ships it.
const BINARIES: Record<Exclude<ToolName, 'pg15' | 'pg19'>, { binary: string; aptPackage: string }> = {
  pgbadger: { binary: 'pgbadger', aptPackage: 'pgbadger' },
  promtool: { binary: 'promtool', aptPackage: 'prometheus' },
  prometheus: { binary: 'prometheus', aptPackage: 'prometheus' },
  alertmanager: { binary: 'prometheus-alertmanager', aptPackage: 'prometheus-alertmanager' },
  postgres_exporter: { binary: 'prometheus-postgres-exporter', aptPackage: 'prometheus-postgres-exporter' },
  chromium: { binary: 'chromium', aptPackage: 'chromium' },
  strace: { binary: 'strace', aptPackage: 'strace' },
  pg_createcluster: { binary: 'pg_createcluster', aptPackage: 'postgresql-common' },
  'systemd-analyze': { binary: 'systemd-analyze', aptPackage: 'systemd' },
};

export function toolAvailable(name: ToolName): ToolStatus {
  if (name === 'pg15') return pgAvailability(15);
  if (name === 'pg19') return pgAvailability(19);
  const { binary, aptPackage } = BINARIES[name];
  const found = findOnPath(binary);
  return found
    ? { ok: true, why: `${name} at ${found}` }
    : { ok: false, why: `${name} missing (no ${binary} on PATH): apt-get install ${aptPackage}` };
}

/** Absolute path of a tool's binary, for tests to spawn; throws with the install hint when absent. */
export function toolPath(name: Exclude<ToolName, 'pg15' | 'pg19'>): string {
  const found = findOnPath(BINARIES[name].binary);
  if (!found) throw new Error(toolAvailable(name).why);
  return found;
}

export function describeWithTool(tool: ToolName, title: string, fn: SuiteFactory): void {
  const status = toolAvailable(tool);
  if (status.ok) return void describe(title, fn);
  if (isCi()) return void describe(title, () => it(`requires ${tool}`, () => failMissing(tool, status)));
  warnOnce(tool, status);
  describe.skip(`${title} [skipped: ${status.why}]`, fn);
}

export function itWithTool(tool: ToolName, title: string, fn: TestFunction, timeoutMs?: number): void {
  const status = toolAvailable(tool);
  if (status.ok) return void it(title, fn, timeoutMs);
  if (isCi()) return void it(`${title} (requires ${tool})`, () => failMissing(tool, status));
  warnOnce(tool, status);
  it.skip(`${title} [skipped: ${status.why}]`, fn);
}

/**
 * For use inside a test or hook: returns when the tool is there; otherwise skips the test through
 * its context (when given, outside CI) or throws.
 */
export function requireTool(tool: ToolName, context?: { skip: (note?: string) => void }): void {
  const status = toolAvailable(tool);
  if (status.ok) return;
  if (context && !isCi()) {
    warnOnce(tool, status);
    context.skip(status.why);
    return;
  }
  failMissing(tool, status);
}

function failMissing(tool: ToolName, status: ToolStatus): never {
  const ci = isCi() ? ' (CI set: missing tools fail instead of skipping; .ci/run must install it)' : '';
  throw new Error(`${tool} is required: ${status.why}${ci}`);
}

const warned = new Set<ToolName>();

function warnOnce(tool: ToolName, status: ToolStatus): void {
  if (warned.has(tool)) return;
  warned.add(tool);
  console.warn(`[tools] skipping tests that need ${tool}: ${status.why}`);
}

function findOnPath(binary: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, binary);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
