/**
 * The fields of one csvlog record, read without csv-parse when the record is written the way
 * PostgreSQL writes csvlog (write_csvlog(): text fields quoted with inner quotes doubled, other
 * fields bare, no CR). csv-parse costs ~6 us a record even in batches; this costs a slice a
 * field. Anything else (a quote inside a bare field, text after a closing quote, a bare
 * newline, CR, an empty record) returns null and csv-parse, the reference, reads it:
 * csv-record.test.ts checks that whatever this returns, csv-parse returns the same.
 */
const QUOTE = 34;
const COMMA = 44;

export function splitCsvRecord(text: string): string[] | null {
  const length = text.length;
  if (length === 0 || text.indexOf('\r') !== -1) return null;
  const fields: string[] = [];
  let at = 0;
  for (;;) {
    if (text.charCodeAt(at) === QUOTE) {
      let value = '';
      let from = at + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) return null;
        if (text.charCodeAt(quote + 1) === QUOTE) {
          value += text.slice(from, quote + 1);
          from = quote + 2;
          continue;
        }
        value += text.slice(from, quote);
        at = quote + 1;
        break;
      }
      fields.push(value);
    } else {
      let end = text.indexOf(',', at);
      if (end === -1) end = length;
      const field = text.slice(at, end);
      if (field.indexOf('"') !== -1 || field.indexOf('\n') !== -1) return null;
      fields.push(field);
      at = end;
    }
    if (at === length) return fields;
    if (text.charCodeAt(at) !== COMMA) return null;
    at++;
    if (at === length) {
      fields.push('');
      return fields;
    }
  }
}
