/**
 * `npm run bench [-- NAME...]`: runs the named benchmarks, or all of them. A benchmark is a file
 * bench/NAME.ts exporting `benchmark: Benchmark`; adding one needs no change here.
 * Benchmarks print ratios against a reference measured in the same run (this machine is shared
 * and noisy: absolute times are not comparable across runs). They are not tests: nothing fails.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface Benchmark {
  description: string;
  run(args: string[]): Promise<void>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

async function load(name: string): Promise<Benchmark | null> {
  const module = (await import(pathToFileURL(path.join(here, `${name}.ts`)).href)) as { benchmark?: Benchmark };
  return module.benchmark ?? null;
}

async function main(argv: string[]): Promise<number> {
  const names = argv.filter((a) => !a.startsWith('-'));
  const flags = argv.filter((a) => a.startsWith('-'));
  const available = readdirSync(here).filter((f) => f.endsWith('.ts') && f !== 'run.ts').map((f) => f.slice(0, -3)).sort();
  const chosen: Array<[string, Benchmark]> = [];
  for (const name of names.length > 0 ? names : available) {
    if (!available.includes(name)) {
      process.stderr.write(`unknown benchmark "${name}"; available: ${available.join(', ')}\n`);
      return 2;
    }
    const benchmark = await load(name);
    if (benchmark) chosen.push([name, benchmark]);
    else if (names.length > 0) {
      process.stderr.write(`bench/${name}.ts exports no benchmark\n`);
      return 2;
    }
  }
  for (const [name, benchmark] of chosen) {
    process.stdout.write(`\n=== ${name}: ${benchmark.description}\n`);
    await benchmark.run(flags);
  }
  return 0;
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
