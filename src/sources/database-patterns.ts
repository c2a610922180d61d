/**
 * collectors.databases: which databases the per-database collectors visit, as shell-style
 * patterns the way pg_dump's --exclude-database and psql's \l take them: `*` any run of
 * characters, `?` one character, everything else literal (case-sensitive, the whole name).
 * Include empty: every database; exclude wins over include.
 */
export interface DatabasePatterns {
  include: readonly string[];
  exclude: readonly string[];
}

/** A pattern as an anchored RegExp: `*` -> `.*`, `?` -> `.`, the rest escaped. */
export function globRegExp(pattern: string): RegExp {
  const body = [...pattern].map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 's');
}

export function databaseMatcher(patterns: DatabasePatterns): (datname: string) => boolean {
  const include = patterns.include.map(globRegExp);
  const exclude = patterns.exclude.map(globRegExp);
  return (datname) => (include.length === 0 || include.some((r) => r.test(datname))) && !exclude.some((r) => r.test(datname));
}
