import { mkdtempSync, rmSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileNameForFormat, linkTargetsBetween, listLogFiles, namesSortByTime, patternToRegExp, type LogFile } from './log-file-set.js';

describe('patternToRegExp', () => {
  it.each([
    ['postgresql-%Y-%m-%d_%H%M%S.log', 'postgresql-2026-10-14_031245.log', true],
    ['postgresql-%Y-%m-%d_%H%M%S.log', 'postgresql-2026-10-14_031245.csv', false],
    ['postgresql-%Y-%m-%d_%H%M%S.log', 'postgresql-2026-10-14_031245.log.gz', false],
    ['postgresql-%Y-%m-%d_%H%M%S.log', 'postgresqlX2026-10-14_031245.log', false],
    ['postgresql-%a.log', 'postgresql-Mon.log', true],
    ['postgresql-%H.log', 'postgresql-7.log', false],
    ['server.log', 'server.log', true],
    ['server.log', 'serverXlog', false],
    ['pg-%s.log', 'pg-1760411565.log', true],
    ['100%%-%Y.log', '100%-2026.log', true],
  ])('%s matches %s: %s', (pattern, name, expected) => {
    expect(patternToRegExp(pattern).test(name)).toBe(expected);
  });
});

describe('namesSortByTime', () => {
  it.each([
    ['postgresql-%Y-%m-%d_%H%M%S.log', true],
    ['postgresql-%Y-%m-%d.log', true],
    ['postgresql-%Y%j.log', true],
    ['pg-%s.log', true],
    ['postgresql-%a.log', false],
    ['postgresql-%H.log', false],
    ['postgresql-%d-%m-%Y.log', false],
    ['server.log', false],
  ])('%s: %s', (pattern, expected) => expect(namesSortByTime(pattern)).toBe(expected));
});

describe('fileNameForFormat', () => {
  it.each([
    ['postgresql-%Y.log', 'stderr', 'postgresql-%Y.log'],
    ['postgresql-%Y.log', 'csvlog', 'postgresql-%Y.csv'],
    ['postgresql-%Y.log', 'jsonlog', 'postgresql-%Y.json'],
    ['postgresql-%Y', 'csvlog', 'postgresql-%Y.csv'],
  ] as const)('%s as %s is %s', (pattern, format, expected) => expect(fileNameForFormat(pattern, format)).toBe(expected));
});

describe('listLogFiles', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-fileset-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists matching regular files by mtime, then name', async () => {
    const at = (name: string, seconds: number): void => {
      writeFileSync(path.join(dir, name), name);
      utimesSync(path.join(dir, name), seconds, seconds);
    };
    at('postgresql-2026-01-01_000000.log', 3000);
    at('postgresql-2026-01-02_000000.log', 1000);
    at('postgresql-2026-01-03_000000.log', 1000);
    at('postgresql-2026-01-01_000000.csv', 500);
    at('notes.txt', 10);
    mkdirSync(path.join(dir, 'postgresql-2026-01-04_000000.log'));
    const files = await listLogFiles(dir, patternToRegExp('postgresql-%Y-%m-%d_%H%M%S.log'));
    expect(files?.map((f) => f.name)).toEqual([
      'postgresql-2026-01-02_000000.log', 'postgresql-2026-01-03_000000.log', 'postgresql-2026-01-01_000000.log',
    ]);
    expect(files?.[0]?.id).toMatch(/^\d+:\d+$/);
  });

  it('says null for a directory that does not exist', async () => {
    expect(await listLogFiles(path.join(dir, 'missing'), /x/)).toBeNull();
  });
});

describe('linkTargetsBetween', () => {
  const file = (name: string, mtimeMs: number): LogFile => ({ path: `/logs/${name}`, name, id: name, sizeBytes: 1, mtimeMs });
  const old = file('postgresql-2026-12-01_1200.log', 1_000);
  const next = file('postgresql-2026-12-02_0000.log', 5_000);

  it('takes the files named like both targets and written between them, oldest first', () => {
    const siblings = [next, file('postgresql-2026-12-01_1800.log', 3_000), old, file('postgresql-2026-12-01_1300.log', 2_000), file('postgresql.log', 5_000)];
    expect(linkTargetsBetween(old, next, siblings).map((f) => f.name)).toEqual(['postgresql-2026-12-01_1300.log', 'postgresql-2026-12-01_1800.log']);
  });

  it('leaves other formats, other names, and files written before or after the two', () => {
    const siblings = [
      file('postgresql-2026-12-01_1300.csv', 2_000), file('other-2026-12-01_1300.log', 2_000),
      file('postgresql-2026-11-30_0000.log', 500), file('postgresql-2026-12-02_0100.log', 6_000),
    ];
    expect(linkTargetsBetween(old, next, siblings)).toEqual([]);
  });

  it('takes nothing when the two names share no start or no extension', () => {
    const siblings = [file('postgresql-2026-12-01_1300.log', 2_000)];
    expect(linkTargetsBetween(file('a.log', 1_000), next, siblings)).toEqual([]);
    expect(linkTargetsBetween(file('postgresql-2026-12-01_1200.json', 1_000), next, siblings)).toEqual([]);
  });
});
