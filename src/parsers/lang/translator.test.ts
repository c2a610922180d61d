/**
 * The exactness rules of the translator, on small catalogs written here (what a translator could
 * have written) and on the shipped German catalog of PostgreSQL 15 (what one did write).
 */
import { describe, expect, it } from 'vitest';
import type { Catalog } from './catalog.js';
import { readShippedCatalogs } from './catalog.js';
import { Translator } from './translator.js';

const WAITING = 'process %d still waiting for %s on %s after %ld.%03d ms';
const ACQUIRED = 'process %d acquired %s on %s after %ld.%03d ms';

function catalog(messages: Record<string, string>): Catalog {
  return {
    language: 'xx', major: 15, source: 'test', signals: {},
    messages: Object.fromEntries(Object.entries(messages).map(([id, text]) => [id, [text]])),
  };
}

describe('Translator on the shipped German catalog of PostgreSQL 15', () => {
  const german = new Translator(readShippedCatalogs('de').filter((c) => c.major === 15));

  it('reads a decimal comma and a translated lock tag back into the English text', () => {
    expect(german.translateMessage('Prozess 4711 wartet immer noch auf ShareLock-Sperre auf Transaktion 812 nach 1000,072 ms'))
      .toBe('process 4711 still waiting for ShareLock on transaction 812 after 1000.072 ms');
    expect(german.translateMessage('storniere Anfrage wegen Zeitüberschreitung einer Sperre')).toBe('canceling statement due to lock timeout');
  });

  it('maps its severity words and field labels to English', () => {
    expect(german.severityWords.get('FEHLER')).toBe('ERROR');
    expect(german.lineWords.get('ZUSAMMENHANG:  ')).toBe('CONTEXT');
  });

  it('leaves a line no message reads as written', () => {
    expect(german.translateMessage('Prozess 4711 wartet auf Godot')).toBe('Prozess 4711 wartet auf Godot');
  });
});

describe('Translator exactness', () => {
  it('follows positional arguments back to the English order', () => {
    const t = new Translator([catalog({
      [ACQUIRED]: 'nach %4$ld,%5$03d ms erhielt Prozess %1$d %2$s auf %3$s',
      'transaction %u': 'Transaktion %u',
    })]);
    expect(t.translateMessage('nach 12,005 ms erhielt Prozess 77 ShareLock auf Transaktion 9'))
      .toBe('process 77 acquired ShareLock on transaction 9 after 12.005 ms');
  });

  it('leaves a line two messages read differently untranslated', () => {
    const t = new Translator([catalog({
      'canceling statement due to lock timeout': 'Anfrage abgebrochen',
      'canceling statement due to statement timeout': 'Anfrage abgebrochen',
    })]);
    expect(t.translateMessage('Anfrage abgebrochen')).toBe('Anfrage abgebrochen');
  });

  it('leaves a line whose values can be split two ways untranslated', () => {
    // Two adjacent lock tags: where one ends and the next begins is not in the text.
    const t = new Translator([catalog({
      [WAITING]: '%2$s %3$s %4$ld,%5$03d %1$d',
      'transaction %u': 'T %u',
      'relation %u of database %u': 'T %u T %u',
    })]);
    const line = 'ShareLock T 5 T 6 1,002 3';
    expect(t.translateMessage(line)).toBe(line);
  });

  it('skips, and says why, a translation whose values cannot be printed back exactly', () => {
    const t = new Translator([catalog({
      [WAITING]: 'Prozess %d wartet auf %s auf %s', // the time is dropped
      'canceling statement due to lock timeout': 'Zeitüberschreitung %d', // an argument the English text lacks
    })]);
    expect(t.skipped.map((s) => [s.msgid, s.why])).toEqual([
      [WAITING, 'argument 4 is not printed by the translation'],
      ['canceling statement due to lock timeout', 'the translation has more arguments than the English text'],
    ]);
    expect(t.translateMessage('Prozess 1 wartet auf ShareLock auf Transaktion 2')).toBe('Prozess 1 wartet auf ShareLock auf Transaktion 2');
  });
});
