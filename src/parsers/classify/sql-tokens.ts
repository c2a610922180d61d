/**
 * Just enough of a SQL reader for the start of a DDL statement: keywords, a parenthesised
 * option list and a comma-separated list of (possibly qualified, possibly quoted) relation
 * names. Relation names come back normalised the way PostgreSQL resolves them: quotes removed,
 * unquoted parts lower-cased, so they compare with the names vacuum prints.
 */
const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;

export class SqlTokens {
  private pos = 0;

  constructor(private readonly sql: string) {}

  /** The next unquoted word, lower-cased and consumed; '' when the next token is not a word. */
  keyword(): string {
    this.skipSpace();
    const start = this.pos;
    if (!WORD_START.test(this.sql.charAt(start))) return '';
    this.pos = this.wordEnd(start);
    return this.sql.slice(start, this.pos).toLowerCase();
  }

  /** Consumes words while they are in `words`; returns how many. */
  skipKeywords(...words: string[]): number {
    let count = 0;
    for (;;) {
      const before = this.pos;
      const word = this.keyword();
      if (word === '' || !words.includes(word)) {
        this.pos = before;
        return count;
      }
      count++;
    }
  }

  /** `(name [value], ...)` -> name -> value ('' when none), lower-cased; empty when no list follows. */
  optionList(): Map<string, string> {
    const options = new Map<string, string>();
    this.skipSpace();
    if (this.sql.charAt(this.pos) !== '(') return options;
    this.pos++;
    while (this.pos < this.sql.length) {
      const name = this.keyword();
      const valueStart = this.pos;
      while (this.pos < this.sql.length && !',)'.includes(this.sql.charAt(this.pos))) this.pos++;
      const value = this.sql.slice(valueStart, this.pos).trim().toLowerCase();
      if (name !== '') options.set(name, value);
      const separator = this.sql.charAt(this.pos);
      this.pos++;
      if (separator !== ',') break;
    }
    return options;
  }

  /** `[ONLY] name [*] [(columns)], ...`; stops at the first token that does not continue the list. */
  relationList(): string[] {
    const names: string[] = [];
    for (;;) {
      this.skipKeywords('only');
      const name = this.qualifiedName();
      if (name === null) return names;
      names.push(name);
      this.skipSpace();
      if (this.sql.charAt(this.pos) === '*') this.pos++;
      this.skipParenthesised();
      this.skipSpace();
      if (this.sql.charAt(this.pos) !== ',') return names;
      this.pos++;
    }
  }

  private qualifiedName(): string | null {
    const parts: string[] = [];
    for (;;) {
      this.skipSpace();
      const part = this.identifier();
      if (part === null) return null;
      // A bare USING ends a relation-less REPACK/CLUSTER, e.g. `REPACK USING INDEX`.
      if (parts.length === 0 && part.quoted === false && part.text === 'using') return null;
      parts.push(part.text);
      if (this.sql.charAt(this.pos) !== '.') return parts.join('.');
      this.pos++;
    }
  }

  private identifier(): { text: string; quoted: boolean } | null {
    const start = this.pos;
    if (this.sql.charAt(start) === '"') {
      let text = '';
      let i = start + 1;
      while (i < this.sql.length) {
        const close = this.sql.indexOf('"', i);
        if (close < 0) return null;
        text += this.sql.slice(i, close);
        if (this.sql.charAt(close + 1) !== '"') {
          this.pos = close + 1;
          return { text, quoted: true };
        }
        text += '"';
        i = close + 2;
      }
      return null;
    }
    if (!WORD_START.test(this.sql.charAt(start))) return null;
    this.pos = this.wordEnd(start);
    return { text: this.sql.slice(start, this.pos).toLowerCase(), quoted: false };
  }

  private wordEnd(start: number): number {
    let end = start + 1;
    while (end < this.sql.length && WORD_PART.test(this.sql.charAt(end))) end++;
    return end;
  }

  private skipParenthesised(): void {
    this.skipSpace();
    if (this.sql.charAt(this.pos) !== '(') return;
    const close = this.sql.indexOf(')', this.pos);
    this.pos = close < 0 ? this.sql.length : close + 1;
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.sql.charAt(this.pos);
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
        this.pos++;
      } else if (this.sql.startsWith('--', this.pos)) {
        const eol = this.sql.indexOf('\n', this.pos);
        this.pos = eol < 0 ? this.sql.length : eol + 1;
      } else if (this.sql.startsWith('/*', this.pos)) {
        const end = this.sql.indexOf('*/', this.pos + 2);
        this.pos = end < 0 ? this.sql.length : end + 2;
      } else {
        return;
      }
    }
  }
}
