/**
 * Benchmark programs run as plain JavaScript, as the shipped CLI does (from dist/): tsx would add
 * about a second of start-up, spent transpiling, to every timed run. esbuild (tsx's own compiler)
 * bundles each program's sources into node_modules/.cache, where its imports still resolve;
 * without it the programs run through tsx and the start-up cost is said.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The command that runs bench/programs/NAME.ts: [node, args...]. */
export function programCommand(name: string, say: (msg: string) => void): string[] {
  const source = path.join(root, 'bench', 'programs', `${name}.ts`);
  const esbuild = path.join(root, 'node_modules', '.bin', 'esbuild');
  if (!existsSync(esbuild)) {
    say(`bench: no esbuild; ${name} runs through tsx (about 1 s of start-up included in its times)`);
    return [process.execPath, '--import', 'tsx', source];
  }
  const outDir = path.join(root, 'node_modules', '.cache', 'pgvigil-bench');
  mkdirSync(outDir, { recursive: true });
  const out = path.join(outDir, `${name}.mjs`);
  execFileSync(esbuild, [source, '--bundle', '--platform=node', '--format=esm', '--target=node20', '--packages=external', `--outfile=${out}`, '--log-level=warning'], { stdio: 'inherit' });
  return [process.execPath, out];
}
