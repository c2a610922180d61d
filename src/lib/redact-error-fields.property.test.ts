/**
 * What errors quote, as a property: random values (with the characters that end a quote or a
 * parenthesis in the texts PostgreSQL composes) in the DETAILs, HINTs and CONTEXTs that quote data,
 * with and without a SQLSTATE in the log. After `redact: literals` no value survives in any field.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../domain/index.js';
import { redactEvent } from './redact.js';

const RUNS = 300;

/** A marker no server text contains by chance. */
const payload = fc.stringMatching(/^[A-Za-z0-9]{10}$/).map((s) => `zq${s}`);
/** Characters that close or open something in one text or another, and letters of other alphabets. */
const noise = fc.array(fc.constantFrom('(', ')', ', ', '"', "'", '=', ' ', 'é', '日本', 'null'), { maxLength: 4 }).map((parts) => parts.join(''));
/** A value as the server prints it in a row: anything, around the payload. */
const value = fc.tuple(noise, payload, noise).map(([a, secret, b]) => ({ text: a + secret + b, secret }));
/** A JSON token: letters, digits and `_` (json_lex), so the server quotes it whole. */
const token = payload.map((secret) => ({ text: `${secret}_x`, secret }));

interface Quoting {
  sqlstate: string;
  fields: Record<string, string>;
  secrets: string[];
}

const quoting: fc.Arbitrary<Quoting> = fc.oneof(
  value.map(({ text, secret }) => ({ sqlstate: '23505', fields: { detail: `Key (email)=(${text}) already exists.` }, secrets: [secret] })),
  value.map(({ text, secret }) => ({ sqlstate: '23503', fields: { detail: `Key (a, b)=(1, ${text}) is not present in table "t".` }, secrets: [secret] })),
  value.map(({ text, secret }) => ({ sqlstate: '23514', fields: { detail: `Failing row contains (1, ${text}, null).` }, secrets: [secret] })),
  token.map(({ text, secret }) => ({ sqlstate: '22P02', fields: { detail: `Token "${text}" is invalid.`, context: `JSON data, line 1: {"k": ${text}...` }, secrets: [secret] })),
  fc.tuple(value, value).map(([detail, hint]) => ({
    sqlstate: 'P0001', fields: { detail: `card ${detail.text}`, hint: `ask ${hint.text}`, context: 'PL/pgSQL function f(text) line 3 at RAISE' }, secrets: [detail.secret, hint.secret],
  })),
  value.map(({ text, secret }) => ({ sqlstate: '22P04', fields: { context: `COPY t, line 2: "${text}"` }, secrets: [secret] })),
);

const eventOf = ({ sqlstate, fields }: Quoting, sqlstateLogged: boolean): AnyLogEvent => ({
  kind: 'generic', target: 't', tsMs: 0, pid: 1, database: 'd', user: 'u', level: 'ERROR', sqlstate: sqlstateLogged ? sqlstate : null,
  message: 'an error', details: { classified: false, ...fields }, source: { file: 'f', offset: 0, line: null },
} as AnyLogEvent);

describe('redactEvent on what errors quote, as a property', () => {
  it('leaves no quoted value at literals, with or without a SQLSTATE in the log', () => {
    fc.assert(
      fc.property(quoting, fc.boolean(), (quoted, sqlstateLogged) => {
        const redacted = JSON.stringify(redactEvent(eventOf(quoted, sqlstateLogged), 'literals'));
        for (const secret of quoted.secrets) expect(redacted).not.toContain(secret);
      }),
      { numRuns: RUNS },
    );
  });
});
