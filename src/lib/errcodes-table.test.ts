import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { installedErrcodesFiles } from '../../test/helpers/errcodes-files.js';
import { SQLSTATE_CLASS_NAMES, SQLSTATE_CONDITION_NAMES } from './errcodes-table.js';
import { parseErrcodesTxt } from './errcodes-txt.js';

describe('the shipped SQLSTATE table', () => {
  const files = installedErrcodesFiles();

  it('is read from the errcodes.txt of at least the embedded PG 18', () => {
    expect(files.map(({ major }) => major)).toContain(18);
  });

  // Regenerate with `npx tsx scripts/build-errcodes-table.ts` when a major adds a code.
  it.each(files)("names every class and code of PG $major's errcodes.txt", ({ file }) => {
    const errcodes = parseErrcodesTxt(fs.readFileSync(file, 'utf8'), file);
    for (const [code, name] of Object.entries(errcodes.classes)) expect(SQLSTATE_CLASS_NAMES[code], code).toBe(name);
    for (const code of Object.keys(errcodes.conditions)) expect(SQLSTATE_CONDITION_NAMES[code], code).toBeDefined();
    expect(SQLSTATE_CLASS_NAMES['23']).toBe('Integrity Constraint Violation');
    expect(SQLSTATE_CONDITION_NAMES['28P01']).toBe('invalid_password');
  });

  it('says where errcodes.txt has a line it cannot read', () => {
    expect(() => parseErrcodesTxt('Section: Class 23 - Integrity Constraint Violation\n23505 X nonsense\n', 'errcodes.txt'))
      .toThrow('errcodes.txt:2: neither a Section: line nor a code line: "23505 X nonsense"');
  });
});
