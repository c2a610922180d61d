/**
 * A vitest reporter that closes a run with how many tests were skipped and why, grouped by
 * reason: a gate that turns a whole file into skips (a missing tool, locale or mount) must be seen
 * in the log of a green run, not only in a warning scrolled past. Listed beside 'default' in
 * vitest.config.ts.
 *
 * A skip's reason is, in order: the note given to `ctx.skip(note)`; the `[skipped: why]` that the
 * gates (test/helpers/tools.ts) put in a test's or its suite's name; else the flag (skip, todo).
 */
import type { Reporter, TestModule } from 'vitest/node';

export interface SkippedTest {
  fullName: string;
  note: string | undefined;
  mode: string;
}

const NAMED_REASON = /\[skipped: ([^\]]+)\]/;

export function skipReason(test: SkippedTest): string {
  if (test.note) return test.note;
  const named = NAMED_REASON.exec(test.fullName);
  if (named) return named[1]!;
  return test.mode === 'todo' ? 'todo' : `${test.mode} flag without a reason`;
}

/** The closing lines: a count, then one line per reason with its count, most frequent first. */
export function describeSkips(skipped: readonly SkippedTest[]): string[] {
  if (skipped.length === 0) return ['Skipped: none'];
  const byReason = new Map<string, number>();
  for (const test of skipped) {
    const reason = skipReason(test);
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  const rows = [...byReason].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  // A skip nobody explained (often: the tests of a suite whose beforeAll failed) is named.
  const unexplained = skipped.filter((test) => skipReason(test).endsWith('flag without a reason')).slice(0, UNEXPLAINED_LISTED);
  return [
    `Skipped: ${skipped.length} test${skipped.length === 1 ? '' : 's'}, by reason:`,
    ...rows.map(([reason, n]) => `  ${String(n).padStart(5)}  ${reason}`),
    ...unexplained.map((test) => `         without a reason: ${test.fullName}`),
  ];
}

const UNEXPLAINED_LISTED = 10;

export default class SkipSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: SkippedTest[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const result = test.result();
        skipped.push({ fullName: test.fullName, note: result.state === 'skipped' ? result.note : undefined, mode: test.options.mode });
      }
    }
    process.stdout.write(`\n${describeSkips(skipped).join('\n')}\n`);
  }
}
