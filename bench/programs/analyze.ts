/** `pgvigil analyze --json FILE...` as the benchmark runs it: the CLI's code path, minus argv parsing. */
import { runAnalyze } from '../../src/cli/analyze.js';

const files = process.argv.slice(2);
process.exitCode = await runAnalyze(files, { json: true, prefix: process.env.BENCH_PREFIX, format: process.env.BENCH_PREFIX ? 'stderr' : 'auto' });
