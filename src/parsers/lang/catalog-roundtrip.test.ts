/**
 * Every shipped catalog, real (.mo-derived: 13, 15, 17, 18, 19) and derived (14, 16), read back:
 * each translated form of each message the classifiers read, printed with sample values, must
 * give the English line the same values give, or be left as written when the translator says it
 * cannot read that form exactly (`skipped`) or when two messages print it alike (the message
 * alone, with its slots, reads it). Never another text.
 */
import { describe, expect, it } from 'vitest';
import { sampleLines, type SampleLine } from '../../../test/helpers/catalog-samples.js';
import { readShippedCatalogs, type Catalog } from './catalog.js';
import { SLOT_MESSAGES } from './messages.js';
import { Translator } from './translator.js';

const SLOT_IDS = new Set(Object.values(SLOT_MESSAGES).flat().map((spec) => spec.id));

/** The catalog with only `msgid` (its pieces) and the slot texts left: no other message, no guard, to make a line ambiguous. */
function alone(catalog: Catalog, msgid: string): Catalog {
  return { ...catalog, guards: undefined, messages: Object.fromEntries(Object.entries(catalog.messages).filter(([id]) => SLOT_IDS.has(id) || msgid.includes(id.replace(/\n$/, '')))) };
}

/** Two strings printed side by side: where one ends is not in the text, so the line is left as written. */
const ADJACENT_STRINGS = /%(?:\d+\$)?s\s*%(?:\d+\$)?s/;

function readBack(translator: Translator, sample: SampleLine): string | null {
  const got = sample.role === 'message' ? translator.translateMessage(sample.translated) : translator.translateLine(sample.translated, sample.role);
  // A translation that is the English text itself reads as written.
  return got === null || (got === sample.translated && sample.translated !== sample.english) ? null : got;
}

const catalogs = readShippedCatalogs(null);

describe('shipped catalogs read their own messages back into English', () => {
  it('include 13 and 17 from packages and 14 and 16 derived from them', () => {
    const majors = (language: string): number[] => catalogs.filter((c) => c.language === language).map((c) => c.major).sort((a, b) => a - b);
    expect(majors('de')).toEqual([13, 14, 15, 16, 17, 18, 19]);
    expect(catalogs.filter((c) => c.derived !== undefined).map((c) => c.major).sort()).toEqual(expect.arrayContaining([14, 16]));
    expect(catalogs.every((c) => (c.derived !== undefined) === (c.major === 14 || c.major === 16))).toBe(true);
  });

  for (const catalog of catalogs) {
    it(`${catalog.language} ${catalog.major}`, () => {
      const translator = new Translator([catalog]);
      const skipped = new Set(translator.skipped.map((s) => s.msgid));
      const samples = sampleLines(catalog);
      expect(samples.length).toBeGreaterThan(catalog.derived !== undefined ? 0 : 40);
      const misread: string[] = [];
      const unread: string[] = [];
      for (const sample of samples) {
        const read = readBack(translator, sample);
        if (read === sample.english) continue;
        if (read !== null) misread.push(`${sample.translated} -> ${read} (expected ${sample.english})`);
        else if (!skipped.has(sample.msgid) && !ADJACENT_STRINGS.test(catalog.messages[sample.msgid]?.[0] ?? '') && readBack(new Translator([alone(catalog, sample.msgid)]), sample) !== sample.english) {
          unread.push(`${sample.msgid} | ${sample.translated}`);
        }
      }
      expect(misread).toEqual([]);
      expect(unread).toEqual([]);
    });
  }
});
