/**
 * README's configuration reference cannot drift from the schema: every key the schema accepts is
 * named in a row of README's Configuration table that also names its top-level key. A key added
 * to the schema without a line for the operator fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { configSchema } from './schema.js';

interface Def { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; out?: z.ZodType; element?: z.ZodType; options?: z.ZodType[] }

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Dotted paths of every key an operator can write (`targets[].log.path`); a record's keys are free (rule ids, collector names). */
function keyPaths(schema: z.ZodType, prefix: string): string[] {
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      return Object.entries(def.shape!).flatMap(([key, child]) => {
        const path = prefix ? `${prefix}.${key}` : key;
        const below = keyPaths(child, path);
        return below.length > 0 ? below : [path];
      });
    case 'default': case 'nullable': case 'optional': case 'prefault':
      return keyPaths(def.innerType!, prefix);
    case 'pipe':
      return keyPaths(def.out!, prefix);
    case 'array':
      return keyPaths(def.element!, `${prefix}[]`);
    case 'union':
      return [...new Set(def.options!.flatMap((option) => keyPaths(option, prefix)))];
    default:
      return [];
  }
}

function configurationRows(): string[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.split('\n## Configuration\n')[1]?.split('\n## ')[0] ?? '';
  return section.split('\n').filter((line) => line.startsWith('| `') || line.startsWith('| ('));
}

describe("README's configuration reference", () => {
  const rows = configurationRows();
  const paths = keyPaths(configSchema, '');

  it('is found, and the schema has keys to check', () => {
    expect(rows.length).toBeGreaterThan(10);
    expect(paths).toEqual(expect.arrayContaining(['listen', 'retention.max_age_days', 'targets[].log.start_at']));
  });

  it.each(paths)('names %s', (path) => {
    const top = path.split(/[.[]/)[0]!;
    const leaf = path.split('.').pop()!.replace('[]', '');
    const named = rows.some((row) => new RegExp(`\`${top}[.\`\\[]`).test(row) && row.includes(leaf));
    expect(named, `no row of README's Configuration table names ${top} and ${leaf}`).toBe(true);
  });
});
