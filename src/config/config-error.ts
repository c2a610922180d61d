/**
 * A configuration that cannot be used. Lists every problem at once, each with where it is, the
 * bad value and what is allowed, so an operator fixes them in one edit. pgvigil exits 2.
 */
export interface ConfigProblem {
  /** Dotted path of the key, e.g. `targets.0.log.format`; `(file)` for file-level problems. */
  path: string;
  message: string;
  value?: unknown;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';

  constructor(
    readonly source: string,
    readonly problems: ConfigProblem[],
  ) {
    super(`invalid configuration (${source}):\n${problems.map(formatProblem).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function formatProblem(problem: ConfigProblem): string {
  const got = problem.value === undefined ? '' : ` (got ${JSON.stringify(problem.value)})`;
  return `  - ${problem.path}: ${problem.message}${got}`;
}
