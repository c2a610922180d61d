/**
 * The one direction of flow (README, Architecture): sources produce events and samples, the store
 * keeps them, rules read them, outputs read the store. A stage that imports a later one (a rule
 * reading a collector's constant) couples them so that neither can change alone; shared facts
 * belong in src/domain/. Checked on the import lines of every non-test module.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.dirname(new URL(import.meta.url).pathname);

/** Stage -> the stages it may not import. */
const FORBIDDEN: Record<string, readonly string[]> = {
  domain: ['parsers', 'collectors', 'sources', 'store', 'rules', 'report', 'notify', 'http', 'cli', 'config'],
  parsers: ['collectors', 'sources', 'store', 'rules', 'report', 'notify', 'http', 'cli'],
  collectors: ['store', 'rules', 'report', 'notify', 'http', 'cli'],
  rules: ['collectors', 'sources', 'http', 'cli', 'notify'],
  // Outputs (and the forwarder) read a store; a store hands out reads and composes no output. Not
  // notify yet: the alert store routes a transition's notifications into the outbox in the
  // transition's transaction (src/store/alert-store.ts), so they live and die together.
  store: ['rules', 'report', 'http', 'cli', 'forward'],
  central: ['rules', 'report', 'notify', 'http', 'cli', 'forward'],
};

function modulesOf(stage: string): string[] {
  return readdirSync(path.join(SRC, stage), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => path.join(SRC, stage, file));
}

/** The top-level src/ folders a module imports from. */
function importedStages(file: string): string[] {
  const specifiers = [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gms)].map((m) => m[1]!);
  return specifiers.map((s) => path.relative(SRC, path.resolve(path.dirname(file), s)).split(path.sep)[0]!);
}

describe('stages import only earlier stages', () => {
  for (const [stage, forbidden] of Object.entries(FORBIDDEN)) {
    it(`${stage} imports none of ${forbidden.join(', ')}`, () => {
      const violations = modulesOf(stage).flatMap((file) => importedStages(file)
        .filter((imported) => forbidden.includes(imported))
        .map((imported) => `${path.relative(SRC, file)} imports ${imported}/`));
      expect(violations).toEqual([]);
    });
  }
});
