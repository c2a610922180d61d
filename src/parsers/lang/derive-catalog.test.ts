/**
 * Deriving a catalog for a major without a package (14, 16) from its neighbours: what is kept,
 * and the evidence that keeping it is safe, from majors whose real catalog is at hand: 17
 * derived from 15 and 18, 18 from 17 and 19 (Chinese 18 went back to an older translation that
 * 17 and 19 do not share: the case where the rule is wrong), 15 from 13 and 17. Every real
 * message of the middle major must read, through the derived catalog, as its own English text or
 * not at all: a derived catalog may understand less, never misread.
 */
import { describe, expect, it } from 'vitest';
import { sampleLines } from '../../../test/helpers/catalog-samples.js';
import { describeCatalogs, readShippedCatalogs, type Catalog } from './catalog.js';
import { deriveCatalog } from './derive-catalog.js';
import { offlineLanguage } from './index.js';
import { Translator } from './translator.js';

const catalog = (major: number, messages: Record<string, string[]>): Catalog => ({ language: 'xx', major, source: 'test', messages, signals: { Killed: 'Getötet' } });

describe('deriveCatalog', () => {
  it('keeps what both neighbours translate alike, says what it left out', () => {
    const lower = catalog(13, { 'deadlock detected': ['Verklemmung entdeckt'], 'redo is not required': ['Redo nicht nötig'], 'redo starts at %X/%X': ['Redo beginnt bei %X/%X'] });
    const upper = catalog(15, { 'deadlock detected': ['Verklemmung entdeckt'], 'redo is not required': ['Redo wird nicht benötigt'], 'redo done at %X/%X': ['Redo fertig bei %X/%X'] });
    const d = deriveCatalog(lower, upper, 14);
    expect(d.catalog.messages).toEqual({ 'deadlock detected': ['Verklemmung entdeckt'] });
    expect([d.agree, d.differ, d.onlyOne]).toEqual([1, 1, 2]);
    expect(d.catalog.derived).toEqual({ from: [13, 15], agree: 1, differ: 1, only_one: 2 });
    expect(d.catalog.signals).toEqual({ Killed: 'Getötet' });
    expect(describeCatalogs([d.catalog])).toBe('the PostgreSQL 14 message catalog derived from 13 and 15');
  });

  it('compares every plural form', () => {
    const id = 'checkpoints are occurring too frequently (%d second apart)';
    const d = deriveCatalog(catalog(13, { [id]: ['a %d', 'b %d'] }), catalog(15, { [id]: ['a %d', 'c %d'] }), 14);
    expect(d.differ).toBe(1);
  });

  it('refuses neighbours of two languages or a major outside them', () => {
    expect(() => deriveCatalog(catalog(13, {}), { ...catalog(15, {}), language: 'yy' }, 14)).toThrow(/different languages/);
    expect(() => deriveCatalog(catalog(13, {}), catalog(15, {}), 16)).toThrow(/does not lie between/);
  });
});

describe('a catalog derived from real neighbours, on the real middle major', () => {
  const shipped = readShippedCatalogs(null).filter((c) => c.derived === undefined);
  const find = (language: string, major: number): Catalog | undefined => shipped.find((c) => c.language === language && c.major === major);
  for (const [lower, middle, upper] of [[15, 17, 18], [17, 18, 19], [13, 15, 17]] as const) {
    it(`${middle} from ${lower} and ${upper}: reads each real ${middle} message as its English or not at all`, () => {
      const summary: string[] = [];
      const misread: string[] = [];
      for (const real of shipped.filter((c) => c.major === middle)) {
        const low = find(real.language, lower);
        const high = find(real.language, upper);
        if (low === undefined || high === undefined) continue;
        const derived = new Translator([deriveCatalog(low, high, middle).catalog]);
        let read = 0;
        const samples = sampleLines(real);
        for (const sample of samples) {
          const got = sample.role === 'message' ? derived.translateMessage(sample.translated) : derived.translateLine(sample.translated, sample.role);
          if (got === sample.english) read++;
          else if (got !== null && got !== sample.translated) misread.push(`${real.language}: ${sample.translated} -> ${got}`);
        }
        summary.push(`${real.language} ${read}/${samples.length}`);
      }
      expect(summary.length).toBeGreaterThan(8);
      expect(misread).toEqual([]);
    });
  }
});

describe('a log of unknown major', () => {
  it('is weighed with the real catalogs only: a line every major translates alike merges them, never a derived one', () => {
    const { setting } = offlineLanguage('de');
    const translator = setting !== undefined && 'detect' in setting ? setting.translatorFor('de', ['2026-01-01 00:00:00 UTC [1] FEHLER:  Verklemmung entdeckt']) : null;
    expect(translator?.majors).toEqual([13, 15, 17, 18, 19]);
  });
});
