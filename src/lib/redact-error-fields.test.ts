/**
 * What errors quote beside their statement, redacted: unit tables of DETAIL, HINT and CONTEXT
 * texts, and the log of a real server (test/fixtures/redaction: PG 13, 18 and 19, stderr without
 * SQLSTATEs, csvlog and jsonlog with them) whose every quoted value carries a marker that must not
 * survive `redact: literals` or `statements` in any field of any event.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../domain/index.js';
import { readCase } from '../../test/helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../../test/helpers/scenarios/parse-log.js';
import { ROW_SECRET } from '../../test/helpers/scenarios/row-data-in-errors.js';
import { redactDetailOrHint, redactMessageInput, redactQuotedInput, redactRowData } from './redact-error-fields.js';
import { redactEvent } from './redact.js';

describe('redactRowData', () => {
  const generic = (sqlstate: string | null, level: AnyLogEvent['level'] = 'ERROR') => ({ kind: 'generic', level, sqlstate }) as const;
  it.each([
    ['unique', 'Key (email)=(alice@example.com) already exists.', generic('23505'), 'Key (email)=(?) already exists.'],
    ['unique, no SQLSTATE in the log', 'Key (lower(email::text))=(alice@example.com) already exists.', generic(null, 'LOG'), 'Key (lower(email::text))=(?) already exists.'],
    ['a value holding parentheses', 'Key (a, b)=(x) y), (z) already exists.', generic(null), 'Key (a, b)=(?) already exists.'],
    ['foreign key', 'Key (user_id)=(42) is not present in table "users".', generic('23503'), 'Key (user_id)=(?) is not present in table "users".'],
    ['foreign key, German', 'Schlüssel (user_id)=(42) ist nicht in Tabelle »users« vorhanden.', generic(null), 'Schlüssel (user_id)=(?) ist nicht in Tabelle »users« vorhanden.'],
    ['foreign key, Chinese', '表 "users" 中不存在键 (user_id)=(42)。', generic(null), '表 "users" 中不存在键 (user_id)=(?)。'],
    ['exclusion', 'Key (room, during)=(1, [10:00,11:00)) conflicts with existing key (room, during)=(1, [10:30,12:00)).', generic('23P01'), 'Key (room, during)=(?).'],
    ['partition key', 'Partition key of the failing row contains (region) = (eu-alice).', generic('23514'), 'Partition key of the failing row contains (region) = (?).'],
    ['not null', 'Failing row contains (1, alice@example.com, null).', generic('23502'), 'Failing row contains (?).'],
    ['check, no SQLSTATE in the log', 'Failing row contains (7, -3.00, alice).', generic(null), 'Failing row contains (?).'],
    ['check, Japanese, no SQLSTATE', '失敗した行は(7, alice)を含みます', generic(null), '失敗した行は(?)を含みます'],
    ['check, Georgian', 'შეცდომიანი მწკრივი "(7, alice)"-ს შეიცავს.', generic('23514'), 'შეცდომიანი მწკრივი "(?)"-ს შეიცავს.'],
    ['a row cut short', 'Failing row contains (7, alice', generic('23514'), 'Failing row contains (?'],
  ])('replaces the row data of a DETAIL: %s', (_what, detail, event, expected) => expect(redactRowData(detail, event)).toBe(expected));

  it.each([
    ['another SQLSTATE', 'Array value must start with "{" (or dimension information).', generic('22P02')],
    ['a LOG line, no SQLSTATE', 'The failed archive command was: cp (x) y', generic(null, 'LOG')],
    ['a classified event', 'User query might have needed to see row versions (x) that must be removed.', { kind: 'recovery_conflict', level: 'ERROR', sqlstate: null } as const],
  ])('keeps a DETAIL without row data: %s', (_what, detail, event) => expect(redactRowData(detail, event)).toBe(detail));
});

describe('redactDetailOrHint', () => {
  const owner = (sqlstate: string | null, context?: string) => ({ kind: 'generic', level: 'ERROR', sqlstate, details: { classified: false, ...(context && { context }) } }) as const;
  it.each([
    ['a JSON token', 'Token "rdsecret_4111" is invalid.', owner('22P02'), 'Token "?" is invalid.'],
    ['a JSON token, no SQLSTATE in the log', 'Token "rdsecret_4111" is invalid.', owner(null), 'Token "?" is invalid.'],
    ['what RAISE composed', 'card rdsecret_4111', owner('P0001', 'PL/pgSQL function inline_code_block line 1 at RAISE'), '?'],
    ['what RAISE composed, in a function called by another', 'call rdsecret_4111', owner(null, 'PL/pgSQL function f(text) line 3 at RAISE\nPL/pgSQL function g() line 1 at PERFORM'), '?'],
    ['row data', 'Failing row contains (3, rdsecret_bob).', owner('23514'), 'Failing row contains (?).'],
  ])('replaces the data: %s', (_what, text, event, expected) => expect(redactDetailOrHint(text, event)).toBe(expected));

  it.each([
    ['a hint naming a setting', 'You might need to increase "max_slot_wal_keep_size".', owner('55000')],
    ['a hint naming a function', 'No function matches the given name and argument types. You might need to add explicit type casts.', owner('42883')],
    ['a DETAIL of another class naming a table', 'Key (id)=(?) is still referenced from table "orders".', owner('23503')],
  ])('keeps a text that quotes no data: %s', (_what, text, event) => expect(redactDetailOrHint(text, event)).toBe(text));
});

describe('redactQuotedInput', () => {
  it.each([
    ['JSON data, line 1: {"card": rdsecret_4111...', 'JSON data, line 1: ?'],
    ['JSON-Daten, Zeile 1: {"card": rdsecret_4111...', 'JSON-Daten, Zeile 1: ?'],
    ['COPY rd_users, line 1: "9\trdsecret_frank"', 'COPY rd_users, line 1: ?'],
    ['SQL statement "SELECT 1"\nPL/pgSQL function f() line 1 at PERFORM', 'SQL statement "SELECT 1"\nPL/pgSQL function f() line 1 at PERFORM'],
  ])('%s', (context, expected) => expect(redactQuotedInput(context)).toBe(expected));
});

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/redaction');

async function recorded(folder: string): Promise<AnyLogEvent[]> {
  const dir = path.join(FIXTURES, folder);
  const fixture = readCase(dir);
  return (await parseLogFile(path.join(dir, fixture.log_file), { format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone })).events;
}

/** Where in the events the marker is: `message`, `details.hint`... */
function fieldsHolding(events: readonly AnyLogEvent[], marker: string): string[] {
  const fields = new Set<string>();
  for (const event of events) {
    if (event.message.includes(marker)) fields.add('message');
    for (const [field, value] of Object.entries(event.details)) if (JSON.stringify(value ?? null).includes(marker)) fields.add(`details.${field}`);
  }
  return [...fields].sort();
}

describe.each(fs.readdirSync(FIXTURES).sort())('a real server\'s errors quoting data: %s', (folder) => {
  it('quote the marked values in DETAIL, HINT, CONTEXT and STATEMENT', async () => {
    expect(fieldsHolding(await recorded(folder), ROW_SECRET)).toEqual(['details.context', 'details.detail', 'details.hint', 'details.statement']);
  });

  it.each(['literals', 'statements'] as const)('keep none of them at %s', async (level) => {
    expect(fieldsHolding((await recorded(folder)).map((e) => redactEvent(e, level)), ROW_SECRET)).toEqual([]);
  });

  it('keep the shape of what they say at literals', async () => {
    const redacted = (await recorded(folder)).map((e) => redactEvent(e, 'literals'));
    const detailsOf = (message: string) => redacted.find((e) => e.message.startsWith(message))?.details;
    expect(detailsOf('duplicate key value violates unique constraint "rd_users_email_key"')).toMatchObject({ detail: 'Key (email)=(?) already exists.', statement: 'INSERT INTO rd_users VALUES (?, ?, ?)' });
    expect(detailsOf('new row for relation "rd_users" violates check constraint')).toMatchObject({ detail: 'Failing row contains (?).' });
    expect(detailsOf('invalid input syntax for type json')).toMatchObject({ detail: 'Token "?" is invalid.', context: 'JSON data, line ?: ?' });
    expect(detailsOf('payment refused')).toMatchObject({ detail: '?', hint: '?', context: expect.stringMatching(/PL\/pgSQL function inline_code_block line \? at RAISE/) });
    expect(detailsOf('duplicate key value violates unique constraint "rd_users_pkey"')).toMatchObject({ context: expect.stringContaining('SQL statement "INSERT INTO rd_users VALUES (?, ?, ?)"') });
  });
});

describe('redactMessageInput', () => {
  const error = (sqlstate: string | null) => ({ kind: 'generic' as const, level: 'ERROR' as const, sqlstate });
  it('replaces the input a message quotes at its end, in any language\'s quotes', () => {
    expect(redactMessageInput('invalid input syntax for type integer: "4111 1111"', error(null))).toBe('invalid input syntax for type integer: "?"');
    expect(redactMessageInput('ungültige Eingabesyntax für Typ integer: »4111 1111«', error('22P02'))).toBe('ungültige Eingabesyntax für Typ integer: "?"');
    expect(redactMessageInput('syntaxe en entrée invalide pour le type integer : « 4111 1111 »', error(null))).toBe('syntaxe en entrée invalide pour le type integer : "?"');
  });
  it('replaces every quoted part of a data exception\'s message, and keeps the names other messages quote', () => {
    expect(redactMessageInput('value "alice@example.com" is out of range for type integer', error('22003'))).toBe('value "?" is out of range for type integer');
    expect(redactMessageInput('relation "orders" does not exist', error('42P01'))).toBe('relation "orders" does not exist');
    expect(redactMessageInput('relation "orders" does not exist', error(null))).toBe('relation "orders" does not exist');
    expect(redactMessageInput('duplicate key value violates unique constraint "users_email_key"', error('23505'))).toBe('duplicate key value violates unique constraint "users_email_key"');
  });
});
