import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RULE_IDS } from '../rules/catalog.js';
import { main } from './main.js';

async function run(args: string[]): Promise<{ code: number; stdout: string }> {
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  const code = await main(args);
  vi.restoreAllMocks();
  return { code, stdout: out.join('') };
}

afterEach(() => vi.restoreAllMocks());

describe('pgvigil rules', () => {
  it('lists every rule with what it detects, needs and its thresholds', async () => {
    const { code, stdout } = await run(['rules']);
    expect(code).toBe(0);
    for (const id of RULE_IDS) expect(stdout).toMatch(new RegExp(`^${id} \\((info|warning|error|critical)\\)$`, 'm'));
    expect(stdout).toContain([
      'error-storm (warning)',
      '  Lock timeouts, statement timeouts, deadlocks or recovery-conflict cancellations above a rate: one alert per storm with the relations and databases hit.',
      '  log events:   lock_timeout, statement_timeout, deadlock, recovery_conflict',
      '  thresholds:   window_ms: 300000, min_events: 20, error_events: 200',
    ].join('\n'));
    expect(stdout).toContain('  log events:   (none: sampled series only, so not from a log alone)');
  });

  it('exits 2 on an unknown flag', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect((await run(['rules', '--bogus'])).code).toBe(2);
  });

  it('--json with --config: thresholds in force beside their defaults, disabled rules marked', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-rules-'));
    const config = path.join(dir, 'pgvigil.yaml');
    writeFileSync(config, 'rules:\n  disabled: [server-crashed]\n  thresholds:\n    error-storm:\n      min_events: 50\n');
    const { code, stdout } = await run(['rules', '--json', '--config', config]);
    expect(code).toBe(0);
    const rules = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(rules.map((r) => r.id)).toEqual(RULE_IDS);
    expect(rules.find((r) => r.id === 'server-crashed')).toMatchObject({ enabled: false });
    expect(rules.find((r) => r.id === 'error-storm')).toMatchObject({
      enabled: true,
      needs: { settings: [], collectors: [], log_events: ['lock_timeout', 'statement_timeout', 'deadlock', 'recovery_conflict'] },
      thresholds: expect.arrayContaining([{ name: 'min_events', value: 50, default: 20 }]),
    });
    expect(rules.find((r) => r.id === 'wraparound-approaching')).toMatchObject({ needs: { collectors: ['pg_database', 'pg_xmin_horizon', 'pg_settings'] } });
  });
});
