import { describe, expect, it } from 'vitest';
import { parseTargetSpec, serverOfFileName, targetsOfFiles } from './file-targets.js';

describe('the server a file name gives', () => {
  const cases: Array<[string, string]> = [
    ['primary.log', 'primary'],
    ['logs/standby.log.1', 'standby'],
    ['postgresql-2026-11-30_120000.log', 'postgresql'],
    ['postgresql-2026-11-30_130000.log.gz', 'postgresql'],
    ['postgresql-Mon.csv', 'postgresql'],
    ['standby-recovery-conflicts.log', 'standby-recovery-conflicts'],
    ['2026-11-30.log', '2026-11-30'],
    ['-', 'stdin'],
  ];
  for (const [file, server] of cases) it(`${file} -> ${server}`, () => expect(serverOfFileName(file)).toBe(server));
});

describe('the target of each file', () => {
  const of = (files: string[], specs: string[] = []) => Object.fromEntries(targetsOfFiles(files, specs.map(parseTargetSpec)));

  it('one target per server: rotated files of one server share it, a primary and a standby get their own', () => {
    expect(of(['a/postgresql-2026-11-30_12.log', 'a/postgresql-2026-11-30_13.log'])).toEqual({
      'a/postgresql-2026-11-30_12.log': 'postgresql', 'a/postgresql-2026-11-30_13.log': 'postgresql',
    });
    expect(of(['primary.log', 'standby.log'])).toEqual({ 'primary.log': 'primary', 'standby.log': 'standby' });
  });

  it('files of one name in different directories are told apart by their directories', () => {
    expect(of(['/x/p1/log/postgresql-1.log', '/x/s1/log/postgresql-1.log'])).toEqual({
      '/x/p1/log/postgresql-1.log': 'p1/log/postgresql', '/x/s1/log/postgresql-1.log': 's1/log/postgresql',
    });
  });

  it('--target name=FILE names that file; --target name every other one', () => {
    expect(of(['p.log', 's.log', 's2.log'], ['primary=p.log', 'standby1'])).toEqual({ 'p.log': 'primary', 's.log': 'standby1', 's2.log': 'standby1' });
  });

  it('refuses, saying what to give: a file not analyzed, a file named twice, two bare names, an empty name', () => {
    expect(() => of(['p.log'], ['primary=q.log'])).toThrow('--target primary=q.log: q.log is not among the files analyzed (p.log)');
    expect(() => of(['p.log'], ['a=p.log', 'b=p.log'])).toThrow('--target: p.log is named twice (a, b)');
    expect(() => of(['p.log', 's.log'], ['a', 'b'])).toThrow(/without a file 2 times \(a, b\): name the others' files with --target name=FILE/);
    expect(() => parseTargetSpec('=p.log')).toThrow('the target name is empty');
  });
});
