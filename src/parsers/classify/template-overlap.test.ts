import { describe, expect, it } from 'vitest';
import { templateItems, templatesOverlap } from './template-overlap.js';

/** The templates as anchored regexes, as partTable compiles them. */
function regexOf(template: string): RegExp {
  const source = template.split(/(\{int\}|\{dec\})/).map((piece) =>
    piece === '{int}' ? '\\d+' : piece === '{dec}' ? '[\\d.]+' : piece.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')).join('');
  return new RegExp(`^${source}$`);
}

describe('templatesOverlap', () => {
  it('tells the templates of real tables apart, and overlapping ones not', () => {
    const overlap = (a: string, b: string): boolean => templatesOverlap(templateItems(a), templateItems(b));
    expect(overlap('{int} full page images', '{int} full page image bytes')).toBe(false);
    expect(overlap('{int} removed', '{int} remain')).toBe(false);
    expect(overlap('{int} hits', '{int} misses')).toBe(false);
    expect(overlap('read: {dec} ms', 'write: {dec} ms')).toBe(false);
    expect(overlap('{int} x', '{dec} x')).toBe(true);
    expect(overlap('{dec} x', '{int}.5 x')).toBe(true);
    expect(overlap('{int} x', '{int}.5 x')).toBe(false);
    expect(overlap('a{int}', 'a{int}')).toBe(true);
    expect(overlap('no figure', 'no figure')).toBe(true);
    expect(overlap('no figure', 'no figures')).toBe(false);
  });

  it('agrees with the regexes on every text made of their pieces', () => {
    const templates = ['{int} x', '{dec} x', '{int}.{int} x', '1 x', '1.5 x', '{dec}', '{int}', '.', '{int}.', 'x', '{dec}{int}', '1{int}'];
    const texts: string[] = [];
    const pieces = ['1', '5', '.', ' x', 'x', ''];
    for (const a of pieces) for (const b of pieces) for (const c of pieces) for (const d of pieces) texts.push(a + b + c + d);
    for (const a of templates) {
      for (const b of templates) {
        const both = texts.some((text) => regexOf(a).test(text) && regexOf(b).test(text));
        // No witness among these texts must mean no overlap; a found witness must mean overlap.
        if (both) expect(templatesOverlap(templateItems(a), templateItems(b)), `${a} / ${b}`).toBe(true);
        else expect(templatesOverlap(templateItems(a), templateItems(b)), `${a} / ${b}`).toBe(false);
      }
    }
  });
});
