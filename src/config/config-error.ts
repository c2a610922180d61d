/**
 * A configuration that cannot be used. Lists every problem at once, each with where it is, the
 * bad value and what is allowed, so an operator fixes them in one edit. pgvigil exits 2.
 *
 * Never holds a secret: a config error is printed, logged and shown by `pgvigil check`. The value
 * of a key named like a secret (password, secret, key, token; not the *_file that names where it
 * is) is hidden, and so are passwords inside any text: a URL's userinfo, libpq's password=.
 */
export interface ConfigProblem {
  /** Dotted path of the key, e.g. `targets.0.log.format`; `(file)` for file-level problems. */
  path: string;
  message: string;
  value?: unknown;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly problems: ConfigProblem[];

  constructor(
    readonly source: string,
    problems: ConfigProblem[],
  ) {
    const safe = problems.map(withoutSecrets);
    super(`invalid configuration (${source}):\n${safe.map(formatProblem).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = safe;
  }
}

function formatProblem(problem: ConfigProblem): string {
  const got = problem.value === undefined ? '' : ` (got ${JSON.stringify(problem.value)})`;
  return `  - ${problem.path}: ${problem.message}${got}`;
}

const HIDDEN = '(hidden)';

const isSecretKey = (key: string): boolean => /password|secret|key|token/i.test(key) && !/_file$/i.test(key);

function withoutSecrets(problem: ConfigProblem): ConfigProblem {
  const key = problem.path.split('.').filter((part) => !/^\d+$/.test(part)).at(-1) ?? '';
  const safe: ConfigProblem = { path: problem.path, message: withoutPasswords(problem.message) };
  if (problem.value !== undefined) safe.value = isSecretKey(key) ? HIDDEN : valueWithoutSecrets(problem.value);
  return safe;
}

function valueWithoutSecrets(value: unknown): unknown {
  if (typeof value === 'string') return withoutPasswords(value);
  if (Array.isArray(value)) return value.map(valueWithoutSecrets);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, isSecretKey(key) ? HIDDEN : valueWithoutSecrets(inner)]));
  }
  return value;
}

/**
 * Text with the passwords it may carry hidden: a URL's `user:password@` (up to the last @ of the
 * word, as a password may hold an unencoded @ or /), and libpq's `password=` (quoted or bare, in
 * keyword/value strings and URL queries).
 */
export function withoutPasswords(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/@:]*):\S*@/gi, `$1:${HIDDEN}@`)
    .replace(/\b(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|[^\s&]*)/gi, `$1${HIDDEN}`);
}
