/**
 * Small readers for the fields PostgreSQL prints inside messages. All return null (or false)
 * for text they do not recognise: a classifier never throws on odd input.
 */

/** An LSN as PostgreSQL prints it: `%X/%X` (13-18) or `%X/%08X` (19). */
export const LSN_PATTERN = '[0-9A-F]+/[0-9A-F]+';

/** A decimal integer, or null (for undefined, '' and anything Number() does not read as an integer). */
export function toInt(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const value = Number(text);
  return Number.isInteger(value) ? value : null;
}

export function toFloat(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/** "60001, 60002" -> [60001, 60002]; "" -> []; null when any item is not a PID. */
export function pidList(text: string): number[] | null {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const pids: number[] = [];
  for (const item of trimmed.split(',')) {
    const pid = toInt(item.trim());
    if (pid === null) return null;
    pids.push(pid);
  }
  return pids;
}

/**
 * One part of a comma-separated line: an anchored pattern and where its groups go. Spec tables
 * are built once per module, not per line.
 */
export type PieceSpec<T> = readonly [RegExp, (groups: RegExpExecArray, into: T) => void];

/**
 * Splits `body` on `separator` and hands each part to the first spec whose pattern matches.
 * Returns true only when every part was recognised; recognised parts are applied either way, so
 * a line with one new part still yields the known ones.
 */
export function matchPieces<T>(body: string, separator: string | RegExp, specs: readonly PieceSpec<T>[], into: T): boolean {
  let all = true;
  for (const piece of body.split(separator)) {
    let matched = false;
    for (const [pattern, apply] of specs) {
      const groups = pattern.exec(piece);
      if (groups) {
        apply(groups, into);
        matched = true;
        break;
      }
    }
    if (!matched) all = false;
  }
  return all;
}

export interface RusageFields {
  cpu_user_s: number | null;
  cpu_system_s: number | null;
  elapsed_s: number | null;
}

const RUSAGE: readonly PieceSpec<RusageFields>[] = [
  [/^CPU: user: ([\d.]+) s$/, (g, r) => (r.cpu_user_s = toFloat(g[1]))],
  [/^system: ([\d.]+) s$/, (g, r) => (r.cpu_system_s = toFloat(g[1]))],
  [/^elapsed: ([\d.]+) s$/, (g, r) => (r.elapsed_s = toFloat(g[1]))],
];

/** `CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s` (pg_rusage_show, 13-19). */
export function parseRusage(text: string, into: RusageFields): boolean {
  return matchPieces(text, ', ', RUSAGE, into);
}

/**
 * `"db.schema.table"` as vacuum/analyze print it (unquoted names joined by dots). A name with a
 * dot is ambiguous; the first dot ends the database and the last dot starts the table.
 */
export function splitQualifiedName(name: string): { database: string; schema: string; table: string } | null {
  const first = name.indexOf('.');
  const last = name.lastIndexOf('.');
  if (first <= 0 || last === first) return null;
  return { database: name.slice(0, first), schema: name.slice(first + 1, last), table: name.slice(last + 1) };
}
