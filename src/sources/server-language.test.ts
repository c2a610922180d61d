import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeServerLanguage, languageOfServer, LOCALE_DIR_SETTING } from './server-language.js';

// An empty LOCALEDIR: the server's own catalog is missing, so the shipped ones are all there is.
const emptyLocaleDir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-locale-'));
afterAll(() => rmSync(emptyLocaleDir, { recursive: true, force: true }));

const server = (lcMessages: string, versionNum: string): Record<string, string> =>
  ({ lc_messages: lcMessages, server_version_num: versionNum, [LOCALE_DIR_SETTING]: emptyLocaleDir });

describe('languageOfServer', () => {
  it('is unknown until the server said its lc_messages and version', () => {
    expect(languageOfServer({})).toBeNull();
    expect(languageOfServer({ lc_messages: 'de_DE.UTF-8' })).toBeNull();
  });

  it('reads English servers without a catalog', () => {
    for (const locale of ['C', 'C.UTF-8', 'en_US.UTF-8', 'POSIX', '']) {
      const found = languageOfServer(server(locale, '150004'));
      expect(found, locale).toMatchObject({ setting: undefined, problem: null });
      expect(describeServerLanguage(found!)).toContain('read as English');
    }
  });

  it("falls back to the shipped catalog of the server's language and major", () => {
    const found = languageOfServer(server('de_DE.UTF-8', '150004'));
    expect(found).toMatchObject({ problem: null, major: 15, lcMessages: 'de_DE.UTF-8' });
    expect(found?.setting && 'translator' in found.setting ? [found.setting.translator.language, found.setting.translator.majors] : null).toEqual(['de', [15]]);
    expect(describeServerLanguage(found!)).toBe('lc_messages "de_DE.UTF-8": the log is read in de with the PostgreSQL 15 message catalog');
  });

  it('says clearly when neither the server nor the package has a catalog', () => {
    const noLanguage = languageOfServer(server('nl_NL.UTF-8', '150004'));
    expect(noLanguage?.setting).toBeUndefined();
    expect(noLanguage?.problem).toMatch(/^no message catalog for lc_messages "nl_NL\.UTF-8" of PostgreSQL 15 \(no PostgreSQL 15 message catalog for lc_messages "nl_NL\.UTF-8" \(looked for .*nl_NL\/LC_MESSAGES\/postgres-15\.mo.*\)\): its log lines are read as English, so most count as not understood$/);
    // Georgian is shipped from 15 on (and derived for 16 only, 14's lower neighbour lacking it).
    expect(languageOfServer(server('ka_GE.UTF-8', '130012'))?.problem).toMatch(/^no message catalog for lc_messages "ka_GE\.UTF-8" of PostgreSQL 13 /);
    expect(languageOfServer(server('ka_GE.UTF-8', '140011'))?.problem).toMatch(/^no message catalog for lc_messages "ka_GE\.UTF-8" of PostgreSQL 14 /);
    expect(languageOfServer(server('ka_GE.UTF-8', '160004'))?.problem).toBeNull();
  });

  it('says when the catalog of its major is derived from the majors around it', () => {
    const found = languageOfServer(server('de_DE.UTF-8', '140011'));
    expect(found?.setting && 'translator' in found.setting ? found.setting.translator.majors : null).toEqual([14]);
    expect(describeServerLanguage(found!)).toBe('lc_messages "de_DE.UTF-8": the log is read in de with the PostgreSQL 14 message catalog derived from 13 and 15');
    expect(describeServerLanguage(languageOfServer(server('ja_JP.UTF-8', '170002'))!)).toBe('lc_messages "ja_JP.UTF-8": the log is read in ja with the PostgreSQL 17 message catalog');
  });
});
