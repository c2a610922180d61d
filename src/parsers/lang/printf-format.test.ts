import { describe, expect, it } from 'vitest';
import { conversionBetween, formatInteger, formatSource, parseFormat, type Directive } from './printf-format.js';

const directive = (spec: string): Directive => parseFormat(spec).directives[0] as Directive;

describe('parseFormat', () => {
  it('splits literals and directives, numbering arguments in order', () => {
    const parsed = parseFormat('process %d still waiting for %s after %ld.%03d ms (100%%)');
    expect(parsed.literals).toEqual(['process ', ' still waiting for ', ' after ', '.', ' ms (100%)']);
    expect(parsed.directives.map((d) => [d.arg, d.spec, d.conversion, d.width, d.precision])).toEqual([
      [0, '%d', 'd', null, null], [1, '%s', 's', null, null], [2, '%ld', 'd', null, null], [3, '%03d', 'd', 3, null],
    ]);
    expect(parsed.directives[3]?.flags).toBe('0');
  });

  it('reads positional arguments, and numbers on after them as C does', () => {
    expect(parseFormat('%2$s auf %1$d, dann %s').directives.map((d) => d.arg)).toEqual([1, 0, 1]);
  });

  it('keeps precision and length modifiers in the spec', () => {
    expect(['%.1f', '%lld', '%X', '%08X'].map((spec) => directive(spec).spec)).toEqual(['%.1f', '%lld', '%X', '%08X']);
    expect(directive('%.2f').precision).toBe(2);
  });

  it('refuses %m (errno text cannot be read back) and what is no directive', () => {
    expect(() => parseFormat('could not open file: %m')).toThrow(/%m/);
    expect(() => parseFormat('50 %y')).toThrow(/unreadable printf directive at 3/);
  });
});

describe('formatSource', () => {
  const match = (format: string, text: string, lazy = false): string[] | null =>
    new RegExp(`^${formatSource(parseFormat(format), lazy)}$`).exec(text)?.slice(1) ?? null;

  it('captures each directive; a decimal comma is the translation\'s literal text', () => {
    expect(match('nach %ld,%03d ms', 'nach 1000,072 ms')).toEqual(['1000', '072']);
    expect(match('nach %ld,%03d ms', 'nach 1000.072 ms')).toBeNull();
  });

  it('escapes regex characters of the literal text', () => {
    expect(match('wrote %d buffers (%.1f%%)', 'wrote 12 buffers (0.5%)')).toEqual(['12', '0.5']);
    expect(match('a+b %d', 'aab 1')).toBeNull();
  });

  it('reads floats with a point only (the server prints numbers with LC_NUMERIC=C)', () => {
    expect(match('%.1f%%', '2,5%')).toBeNull();
  });

  it('splits adjacent strings differently lazy and greedy (how ambiguity is told)', () => {
    expect(match('%s %s', 'a b c', true)).toEqual(['a', 'b c']);
    expect(match('%s %s', 'a b c', false)).toEqual(['a b', 'c']);
  });
});

describe('conversionBetween', () => {
  it('copies what prints alike (length modifiers aside)', () => {
    expect(conversionBetween(directive('%ld'), directive('%lld'))).toBe('copy');
    expect(conversionBetween(directive('%s'), directive('%s'))).toBe('copy');
    expect(conversionBetween(directive('%.2f'), directive('%.2f'))).toBe('copy');
  });

  it('re-pads integers printed with another width', () => {
    expect(conversionBetween(directive('%d'), directive('%03d'))).toBe('integer');
  });

  it('refuses what cannot be printed back: another precision or type', () => {
    expect(conversionBetween(directive('%.1f'), directive('%.2f'))).toBeNull();
    expect(conversionBetween(directive('%s'), directive('%d'))).toBeNull();
    expect(conversionBetween(directive('%d'), directive('%X'))).toBeNull();
  });
});

describe('formatInteger', () => {
  it('prints as the English directive would', () => {
    expect(formatInteger('72', directive('%03d'))).toBe('072');
    expect(formatInteger('0072', directive('%d'))).toBe('72');
    expect(formatInteger('-5', directive('%04d'))).toBe('-005');
    expect(formatInteger('5', directive('%+d'))).toBe('+5');
    expect(formatInteger('5', directive('%3d'))).toBe('  5');
    expect(formatInteger('5', directive('%-3d'))).toBe('5  ');
    expect(formatInteger('1234', directive('%03d'))).toBe('1234');
  });
});
