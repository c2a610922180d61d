/**
 * The csvlog fast path against csv-parse, the reference: on random records (quotes, embedded
 * newlines and commas, empty fields, unicode, CR, stray quotes), whatever splitCsvRecord returns
 * csv-parse returns too; and every record as PostgreSQL writes it takes the fast path.
 */
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCsvRecord } from './csv-record.js';

const PARSE_OPTIONS = { relax_column_count: true, record_delimiter: '\n' } as const;

function reference(text: string): string[][] | 'error' {
  try {
    return parse(text, PARSE_OPTIONS) as string[][];
  } catch {
    return 'error';
  }
}

const fieldText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: fc.constantFrom('"', ',', '\n', '\r', 'a', ' ', 'é', '\u{1F418}'), maxLength: 12 }),
);
/** A field as write_csvlog() writes it: quoted with doubled quotes, or bare. */
const writtenField = fc.oneof(fieldText.map((t) => `"${t.replaceAll('"', '""')}"`), fc.stringMatching(/^[0-9A-Za-z .:/\-[\]]{0,12}$/));
const anyField = fc.oneof(writtenField, fieldText);

describe('splitCsvRecord', () => {
  it('returns what csv-parse returns whenever it returns anything', () => {
    fc.assert(fc.property(fc.array(anyField, { minLength: 1, maxLength: 8 }), (fields) => {
      const text = fields.join(',');
      const fast = splitCsvRecord(text);
      if (fast !== null) expect([fast]).toEqual(reference(text));
    }), { numRuns: 3000 });
  });

  it('takes the fast path on every record written as PostgreSQL writes it, without CR', () => {
    fc.assert(fc.property(fc.array(writtenField, { minLength: 1, maxLength: 26 }), (fields) => {
      const text = fields.join(',');
      fc.pre(text !== '' && !text.includes('\r'));
      expect(splitCsvRecord(text)).toEqual(reference(text)[0]);
    }), { numRuns: 3000 });
  });

  it('declines what it does not read exactly as csv-parse', () => {
    for (const text of ['', 'a"b,c', '"a"b,c', 'a\nb', '"a"\r', '"unclosed']) expect(splitCsvRecord(text), text).toBeNull();
    expect(splitCsvRecord('"a""b",,"c\nd",')).toEqual(['a"b', '', 'c\nd', '']);
  });
});
