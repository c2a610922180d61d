import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hasShape, LITERAL, normalisedShape, shapeOf, shapeParts } from './sql-shape.js';

const L = LITERAL;

describe('shapeOf', () => {
  it.each([
    ['SELECT abalance FROM pgbench_accounts WHERE aid = 12;', `SELECT abalance FROM pgbench_accounts WHERE aid = ${L};`],
    // The sign stays (PostgreSQL's normaliser keeps it out of the constant too); white space stays.
    ['UPDATE t SET v = v + -4001 WHERE id  =  7', `UPDATE t SET v = v + -${L} WHERE id  =  ${L}`],
    // Digits of identifiers, parameters and quoted identifiers are not literals.
    ['SELECT c1, "t 2".x FROM t2 WHERE a$1 = $1', 'SELECT c1, "t 2".x FROM t2 WHERE a$1 = $1'],
    // Numbers of every form: fraction, exponent with its sign, hex, separators (PG 16+).
    ['SELECT 1.5, .5, 1e-5, 0x1F, 1_000, 3-5', `SELECT ${L}, ${L}, ${L}, ${L}, ${L}, ${L}-${L}`],
    // Strings: doubled quotes, E'' escapes (the prefix stays), dollar quotes.
    ["SELECT 'it''s', E'a\\'b', $$x 'y'$$, $tag$ $ $tag$, B'01'", `SELECT ${L}, E${L}, ${L}, ${L}, B${L}`],
    // Comments are kept as written, quotes and digits in them too.
    ["SELECT 1 -- it's 2\n, /* 'x' /* 3 */ */ 4", `SELECT ${L} -- it's 2\n, /* 'x' /* 3 */ */ ${L}`],
    // A statement cut short: the open string runs to the end.
    ["INSERT INTO t VALUES ('abc", `INSERT INTO t VALUES (${L}`],
  ])('%j', (text, shape) => {
    expect(shapeOf(text)).toBe(shape);
  });
});

describe('normalisedShape', () => {
  it('numbers literals after the text\'s own parameters and folds IN lists of literals', () => {
    expect(normalisedShape(shapeOf("SELECT * FROM t WHERE a = $1 AND id IN (1, 2, 3) AND s = 'x"))).toBe('SELECT * FROM t WHERE a = $1 AND id IN ($2) AND s = $3');
  });
});

describe('hasShape', () => {
  const pieces = ['SELECT ', 'x', 'a1', ' = ', '1', '22', '1.5e-3', "'a'", "E'b\\''", '$$c$$', '"q 1"', ', ', ' -- 7\n', '/* 8 */', '$1', '(', ')', '-', 'e', "'", '.', '3a'];
  // A shape it recognises is the one shapeOf gives (a cache hit is never wrong); a text always has its own.
  it('never recognises a text of another shape, on texts made of literals, names, comments and their edges', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 10 }), fc.array(fc.constantFrom(...pieces), { maxLength: 10 }), (a, b) => {
      const [textA, textB] = [a.join(''), b.join('')];
      expect(hasShape(textA, shapeParts(textA))).toBe(true);
      if (hasShape(textB, shapeParts(textA))) expect(shapeOf(textB), `${JSON.stringify(textA)} / ${JSON.stringify(textB)}`).toBe(shapeOf(textA));
    }), { numRuns: 5000 });
  });

  it('recognises every execution of one statement', () => {
    const parts = shapeParts('UPDATE pgbench_accounts SET abalance = abalance + -4001 WHERE aid = 12;');
    expect(hasShape('UPDATE pgbench_accounts SET abalance = abalance + -7 WHERE aid = 99871;', parts)).toBe(true);
    expect(hasShape('UPDATE pgbench_accounts SET abalance = abalance + 7 WHERE aid = 99871;', parts)).toBe(false);
  });
});
