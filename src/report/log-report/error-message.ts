/**
 * An error message with the values taken out, so that errors group by what went wrong and on
 * which object, not by the data that met it: `duplicate key value violates unique constraint
 * "orders_pkey"` groups by constraint (the key's value is in the DETAIL, which the report never
 * keeps), `invalid input syntax for type integer: "abc"` and `syntax error at or near "SELEC"`
 * lose the value, `division by zero` stays as it is.
 *
 * What is taken out: single-quoted literals, a double-quoted text that follows `: `, `near ` or
 * `value ` (where PostgreSQL's messages quote input, not names), numbers outside double quotes,
 * and the ` at character N` stderr appends to a message with a cursor position (csvlog and jsonlog
 * keep it in a column of its own, so the three formats give one message).
 * Identifiers in double quotes elsewhere (relations, constraints, columns, roles) stay.
 */

const POSITION_SUFFIX = / at character \d+$/;
// One pass over the pieces that may hold a value: quoted texts (keeping a doubled quote inside),
// WAL positions (`0/3000148`), and numbers that do not end a word or a dotted name
// (`pg_hba.conf`, `orders_2024`).
const PIECES = /"(?:[^"]|"")*"|'(?:[^']|'')*'|(?<![\w.$/])[0-9A-F]{1,8}\/[0-9A-F]{1,8}\b|(?<![\w.$])\d+(?:\.\d+)?/g;
const VALUE_BEFORE_QUOTE = /(?:: |\bnear |\bvalue )$/;

export const VALUE_MARK = '?';

export function normalizeErrorMessage(message: string): string {
  const text = message.replace(POSITION_SUFFIX, '');
  return text.replace(PIECES, (piece: string, offset: number) => {
    if (piece.startsWith("'")) return `'${VALUE_MARK}'`;
    if (piece.startsWith('"')) return VALUE_BEFORE_QUOTE.test(text.slice(Math.max(0, offset - 8), offset)) ? `"${VALUE_MARK}"` : piece;
    return piece.includes('/') ? `${VALUE_MARK}/${VALUE_MARK}` : VALUE_MARK;
  });
}
