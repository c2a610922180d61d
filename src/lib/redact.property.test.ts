/**
 * The literal stripper as a property: statements built from random literals in every syntax
 * PostgreSQL reads ('...', E'...', U&'...', B'...', X'...', N'...', $tag$...$tag$, numbers,
 * nested and line comments, and plain strings written for standard_conforming_strings on or off,
 * one setting per statement), each carrying a distinctive random payload between characters that end literals in other
 * syntaxes. After redaction no payload survives, whatever surrounds it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactSqlLiterals } from './redact.js';

const RUNS = 300;

/** A marker no statement text contains by chance. */
const payload = fc.stringMatching(/^[A-Za-z0-9]{10}$/).map((s) => `zq${s}`);
/** Characters that close or open something in one syntax or another, and letters of other alphabets. */
const noise = fc.array(fc.constantFrom("'", "''", '\\', '"', '$', '$$', '/*', '*/', '--', '\n', ' ', 'é', '日本', ';', '('), { maxLength: 4 }).map((parts) => parts.join(''));
/** A dollar-quote tag: empty, ASCII, of other alphabets, long. */
const tag = fc.oneof(fc.constant(''), fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/), fc.constantFrom('données', '日本', 'тег', `t${'x'.repeat(70)}`));

/** Text between quotes with its quotes doubled, and backslashes too where they escape. */
const quoted = (text: string, backslashes: boolean): string => (backslashes ? text.replaceAll('\\', '\\\\') : text).replaceAll("'", "''");

interface Literal {
  sql: string;
  /** What must not survive redaction. */
  secret: string;
}

/**
 * A literal as a server with standard_conforming_strings `on` (a backslash in '...' is a plain
 * character) or `off` (it escapes) reads it: one statement is written for one setting, as a real
 * client writes it; a mix of both means what neither reading says.
 */
const literal = (backslashesEscape: boolean): fc.Arbitrary<Literal> => fc.oneof(
  fc.tuple(payload, noise, noise).map(([secret, a, b]) => ({ sql: `'${quoted(a + secret + b, backslashesEscape)}'`, secret })),
  // standard_conforming_strings = off: a backslash escapes a quote inside a plain string.
  ...(backslashesEscape ? [fc.tuple(payload, noise).map(([secret, a]) => ({ sql: `'it\\'s ${a.replaceAll('\\', '').replaceAll("'", "\\'")}${secret}'`, secret }))] : []),
  fc.tuple(payload, noise, fc.constantFrom('E', 'e')).map(([secret, a, prefix]) => ({ sql: `${prefix}'\\'${quoted(a + secret, true)}\\\\'`, secret })),
  // The server refuses U&'...' while standard_conforming_strings is off.
  ...(backslashesEscape ? [] : [fc.tuple(payload, noise).map(([secret, a]) => ({ sql: `U&'${quoted(a + secret, false)}'`, secret }))]),
  fc.tuple(payload, noise).map(([secret, a]) => ({ sql: `N'${quoted(secret + a, backslashesEscape)}'`, secret })),
  fc.stringMatching(/^[01]{24}$/).map((secret) => ({ sql: `B'${secret}'`, secret })),
  fc.stringMatching(/^[0-9a-f]{24}$/).map((secret) => ({ sql: `X'${secret}'`, secret })),
  fc.tuple(payload, noise, tag).map(([secret, a, t]) => ({ sql: `$${t}$${a.replaceAll('$', '')}${secret}$${t}$`, secret })),
  fc.bigInt({ min: 10n ** 11n, max: 10n ** 12n }).map((n) => ({ sql: n.toString(), secret: n.toString() })),
  fc.tuple(payload, noise).map(([secret, a]) => ({ sql: `/* ${a.replaceAll('*', '')} /* ${secret} */ ${secret} */`, secret })),
  fc.tuple(payload, noise).map(([secret, a]) => ({ sql: `-- ${a.replaceAll('\n', '')}${secret}\n`, secret })),
);

/** A statement holding the literals: in a SELECT list, a WHERE clause, an IN list. */
const statement = fc.boolean().chain((backslashesEscape) => fc.array(literal(backslashesEscape), { minLength: 1, maxLength: 5 })).map((literals) => ({
  sql: `SELECT a, "Col ""x""" FROM t WHERE ${literals.map((l, i) => `c${i} = ${l.sql}`).join(' AND ')} AND d IN (${literals.map((l) => l.sql).join(', ')})`,
  secrets: literals.map((l) => l.secret),
}));

describe('redactSqlLiterals, as a property', () => {
  it('leaves no literal text of any syntax', () => {
    fc.assert(
      fc.property(statement, fc.boolean(), ({ sql, secrets }, quotedIdentifiers) => {
        const redacted = redactSqlLiterals(sql, quotedIdentifiers);
        for (const secret of secrets) expect(redacted).not.toContain(secret);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps the statement shape around the literals', () => {
    fc.assert(
      fc.property(statement, ({ sql }) => {
        expect(redactSqlLiterals(sql)).toMatch(/^SELECT a, "Col ""x""" FROM t WHERE c0 = /);
      }),
      { numRuns: RUNS },
    );
  });
});
