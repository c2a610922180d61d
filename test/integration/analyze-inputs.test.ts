/**
 * `pgvigil analyze` on inputs as an operator hands them over: the built binary, a compressed log
 * on stdin, a directory, a quoted glob pgvigil expands itself, an envelope format, and a file it
 * cannot read, with real exit codes. `npm test` builds dist/ first.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const COMPRESSED = resolve('test/fixtures/compressed');
const FORMATS = resolve('test/fixtures/formats');
const MIXED = resolve('test/fixtures/pg18-stderr-analyze-mixed/postgresql.log');

function analyze(args: string[], input?: Buffer): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['bin/pgvigil.js', 'analyze', ...args], { input, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

interface Report { files: Array<{ path: string; format: string | null; lines: number }>; entries: number; unparsed_by_reason: Record<string, number> }

function json(stdout: string): Report {
  return JSON.parse(stdout) as Report;
}

describe('pgvigil analyze inputs', () => {
  const dir = suiteTempDir('analyze-inputs');
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  for (const ext of ['gz', 'bz2', 'xz', 'zst']) copyFileSync(join(COMPRESSED, `pg18-stderr-all.log.${ext}`), join(logs, `postgresql.log.${ext}`));

  it('reads a compressed log from stdin, and the same entries from every compression', () => {
    const fromStdin = analyze(['--json', '-'], readFileSync(join(COMPRESSED, 'pg18-stderr-all.log.xz')));
    expect(fromStdin.code).toBe(EXIT.OK);
    const report = json(fromStdin.stdout);
    expect(report.files).toMatchObject([{ path: '-', format: 'stderr' }]);
    expect(report.entries).toBeGreaterThan(100);
    for (const ext of ['gz', 'bz2', 'zst']) {
      const one = json(analyze(['--json', join(logs, `postgresql.log.${ext}`)]).stdout);
      expect(one.entries, ext).toBe(report.entries);
    }
  });

  it('reads every file of a directory and of a quoted glob', () => {
    const all = json(analyze(['--json', logs]).stdout);
    expect(all.files.map((f) => f.path).sort()).toEqual(['bz2', 'gz', 'xz', 'zst'].map((ext) => join(logs, `postgresql.log.${ext}`)));
    const globbed = json(analyze(['--json', join(logs, 'postgresql.log.[bx]z*')]).stdout);
    expect(globbed.files.map((f) => f.path)).toHaveLength(2);
    expect(globbed.entries * 2).toBe(all.entries);
    const none = analyze([join(logs, '*.csv')]);
    expect(none.code).toBe(EXIT.FAILURE);
    expect(none.stderr).toContain('no file matches');
  });

  it('detects an envelope format, and reads it when named', () => {
    const file = join(FORMATS, 'cnpg-pg18-autovacuum-4-indexes', 'kubectl-logs.json');
    const detected = json(analyze(['--json', file]).stdout);
    expect(detected.files[0]!.format).toBe('cnpg');
    expect(detected.unparsed_by_reason.not_postgres).toBeGreaterThan(0);
    expect(json(analyze(['--json', '--format', 'cnpg', file]).stdout).entries).toBe(detected.entries);
  });

  it('stops with exit 1 on a log it cannot read, showing the first line and which flags to pass', () => {
    const odd = join(dir, 'odd.log');
    writeFileSync(odd, Array.from({ length: 30 }, (_, i) => `<${i}> 30/11/2026 07:20:21 pid ${i}: checkpoint starting`).join('\n'));
    const { code, stdout, stderr } = analyze([odd]);
    expect(code).toBe(EXIT.FAILURE);
    expect(stderr).toContain(`${odd}: tried format stderr (detected), no log_line_prefix detected; first line: "<0> 30/11/2026 07:20:21 pid 0: checkpoint starting"`);
    expect(stderr).toMatch(/--format stderr\|csvlog\|jsonlog\|joined\|cnpg\|cloud-logging\|logplex/);
    expect(stderr).toContain('--prefix');
    expect(stdout).not.toBe('');
  });
  it('stops writing, not working, when the reader of its output goes away, and says when the disk is full', () => {
    // 330 KB of events against a 64 KB pipe: `head` is gone long before the last write.
    const db = join(dir, 'piped.db');
    const script = 'set -o pipefail; "$0" bin/pgvigil.js analyze --events --db "$1" "$2" | head -c 100 > /dev/null';
    const piped = spawnSync('bash', ['-c', script, process.execPath, db, MIXED], { encoding: 'utf8', timeout: 60_000 });
    expect(piped.stderr).not.toMatch(/EPIPE|Error:|\n {4}at /);
    expect(piped.status).toBe(EXIT.OK);
    expect(piped.stderr).toContain('671 entries, 671 events');
    const store = new Database(db, { readonly: true });
    expect(store.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 671 });
    store.close();

    const full = openSync('/dev/full', 'w');
    try {
      const result = spawnSync(process.execPath, ['bin/pgvigil.js', 'analyze', '--json', MIXED], { stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: 60_000 });
      expect(result.stderr).toContain('pgvigil: writing to stdout failed: ENOSPC');
      expect(result.status).toBe(EXIT.FAILURE);
    } finally {
      closeSync(full);
    }
  });
});
