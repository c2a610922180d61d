/**
 * One line per aspect that `pgvigil check` examined: its state, what was found and, when not
 * ok, how to fix it. Pure formatting, so the wording is tested without a server.
 */
export type CheckState = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  aspect: string;
  state: CheckState;
  message: string;
  hint?: string;
}

export function formatCheckResults(results: CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.aspect.length));
  return results
    .map((r) => {
      const line = `${r.state.toUpperCase().padEnd(4)}  ${r.aspect.padEnd(width)}  ${r.message}`;
      return r.hint && r.state !== 'ok' ? `${line}\n${' '.repeat(width + 8)}hint: ${r.hint}` : line;
    })
    .join('\n');
}

/** Exit code of `pgvigil check`: 0 when nothing failed (warnings allowed), 1 otherwise. */
export function checkExitCode(results: CheckResult[]): 0 | 1 {
  return results.some((r) => r.state === 'fail') ? 1 : 0;
}
