import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from './fingerprint.js';

const ints = fc.array(fc.integer({ min: -1_000_000, max: 1_000_000 }), { minLength: 1, maxLength: 8 });
const word = fc.string({ unit: fc.constantFrom(...'abc xyz\'"0123'.split('')), maxLength: 12 });

function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

describe('fingerprintOf', () => {
  it('gives one fingerprint and one normalised text to a statement whatever its literals and IN-list length', () => {
    const reference = fingerprintOf('SELECT id, balance FROM rw_accounts WHERE id IN (1) AND note = \'a\' AND balance > 2.5');
    expect(reference).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}$/), text: 'SELECT id, balance FROM rw_accounts WHERE id IN ($1) AND note = $2 AND balance > $3', parsed: true });
    fc.assert(fc.property(ints, word, fc.double({ min: 0, max: 1e6, noNaN: true }), (ids, note, balance) => {
      const text = `SELECT id, balance FROM rw_accounts WHERE id IN (${ids.join(', ')}) AND note = ${quote(note)} AND balance > ${balance.toFixed(2)}`;
      expect(fingerprintOf(text)).toEqual(reference);
    }));
  });

  it('gives the simple protocol\'s literal and the extended protocol\'s parameter the same fingerprint', () => {
    expect(fingerprintOf('SELECT balance FROM rw_accounts WHERE id = 42').id).toBe(fingerprintOf('SELECT balance FROM rw_accounts WHERE id = $1').id);
  });

  it('keeps no literal the normaliser leaves in a utility statement, whichever execution came first', () => {
    const first = fingerprintOf("ALTER SYSTEM SET log_filename = 'after-a.log'");
    expect(first).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}$/), text: 'ALTER SYSTEM SET log_filename = $1', parsed: true });
    expect(fingerprintOf("ALTER SYSTEM SET log_filename = 'after-b.log'")).toEqual(first);
  });

  it('groups a statement redacted to ? (redact: literals) with its executions as logged', () => {
    const logged = fingerprintOf("SELECT balance FROM rw_accounts WHERE id IN (3, 4) AND note = 'x'");
    expect(fingerprintOf('SELECT balance FROM rw_accounts WHERE id IN (?, ?, ?) AND note = ?')).toEqual(logged);
    expect(logged.parsed).toBe(true);
  });

  it('tells different statements apart', () => {
    expect(fingerprintOf('SELECT a FROM t WHERE id = 1').id).not.toBe(fingerprintOf('SELECT b FROM t WHERE id = 1').id);
  });

  it('groups a statement the parser rejects (cut short) by its literals blanked, never keeping a literal', () => {
    const cut = fingerprintOf("INSERT INTO rw_history (account_id, delta) VALUES (17, 'abc");
    expect(cut).toEqual({ id: expect.stringMatching(/^[0-9a-f]{16}$/), text: 'INSERT INTO rw_history (account_id, delta) VALUES ($1, $2', parsed: false });
    expect(fingerprintOf("INSERT INTO rw_history (account_id, delta) VALUES (99, 'xyz").id).toBe(cut.id);
    expect(fingerprintOf("SELECT * FROM t WHERE id IN (1, 2, 3) AND s = 'ab").id).toBe(fingerprintOf("SELECT * FROM t WHERE id IN (4, 5) AND s = 'c").id);
  });
});
