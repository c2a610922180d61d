import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { analyzeCaptured } from '../../test/helpers/analyze-io.js';
import { testTempDir } from '../../test/helpers/temp-dir.js';
import { chooseFormats, collectFormat } from './analyze-output.js';
import { main } from './main.js';

const CSVLOG = path.resolve('test/fixtures/log-report/pg18-csvlog-sessions-and-errors/sessions-and-errors.csv');

describe('analyze --format', () => {
  it.each<[string[], { json?: boolean; outputFile?: string }, ReturnType<typeof chooseFormats>]>([
    [[], {}, { input: 'auto', output: 'text' }],
    [['csvlog'], {}, { input: 'csvlog', output: 'text' }],
    [['html'], { outputFile: 'r.html' }, { input: 'auto', output: 'html' }],
    [['jsonlog', 'html'], { outputFile: 'r.html' }, { input: 'jsonlog', output: 'html' }],
    [['html', 'jsonlog'], { outputFile: 'r.html' }, { input: 'jsonlog', output: 'html' }],
    [[], { json: true }, { input: 'auto', output: 'json' }],
    [['json'], { json: true }, { input: 'auto', output: 'json' }],
    [['html'], {}, '--format html writes a file: give it with -o FILE (e.g. -o report.html)'],
    [['html'], { json: true, outputFile: 'r.html' }, '--format: one output format, not html and json (--json is --format json)'],
    [['csvlog', 'stderr'], {}, '--format: one log format, not csvlog and stderr (analyze files of different formats in separate runs)'],
  ])('%j with %j', (values, flags, expected) => {
    expect(chooseFormats(values, flags)).toEqual(expected);
  });

  it('names both lists when a value is in neither', () => {
    expect(() => collectFormat('xml', [])).toThrow(/the logs' format \(auto, stderr, csvlog, .*\) or the output's \(text, json, html\)/);
  });

  it('is a usage error (exit 2) for html without -o and for an unknown format, and writes nothing to stdout', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['analyze', '--format', 'html', CSVLOG])).toBe(2);
      expect(stderr.mock.calls.flat().join('')).toContain('--format html writes a file: give it with -o FILE');
      expect(await main(['analyze', '--format', 'xml', CSVLOG])).toBe(2);
      expect(stdout).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
      stdout.mockRestore();
    }
  });

  it('writes the HTML report to -o with the logs\' format given beside it', async () => {
    const file = path.join(testTempDir('analyze-html'), 'report.html');
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await main(['analyze', '--format', 'csvlog', '--format', 'html', '-o', file, CSVLOG])).toBe(0);
      expect(stdout).not.toHaveBeenCalled();
    } finally {
      stdout.mockRestore();
    }
    const html = readFileSync(file, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<h2>Errors: ');
  });

  it('says which file it could not write, and exits 1', async () => {
    const file = path.join(testTempDir('analyze-html'), 'no-such-dir', 'report.html');
    const { code, stdout, stderr } = await analyzeCaptured([CSVLOG], { outputFormat: 'html', outputFile: file });
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toContain(`pgvigil analyze: ${file}: ENOENT`);
  });
});
