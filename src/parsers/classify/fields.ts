/**
 * Small readers for the fields PostgreSQL prints inside messages. All return null (or false)
 * for text they do not recognise: a classifier never throws on odd input.
 */

/** An LSN as PostgreSQL prints it: `%X/%X` (13-18) or `%X/%08X` (19). */
export const LSN_PATTERN = '[0-9A-F]+/[0-9A-F]+';

/** A decimal integer, or null (for undefined, '' and anything Number() does not read as an integer). */
export function toInt(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const value = plainDecimal(text);
  const read = value === value ? value : Number(text); // NaN: not a plain decimal, ask Number()
  return Number.isInteger(read) ? read : null;
}

export function toFloat(text: string | undefined): number | null {
  if (text === undefined || text === '') return null;
  const value = plainDecimal(text);
  const read = value === value ? value : Number(text);
  return Number.isFinite(read) ? read : null;
}

/** Up to 15 significant digits, an integer is exact in a double and so is 10^k for k <= 15. */
const EXACT_DIGITS = 15;
const POWERS_OF_TEN = Array.from({ length: EXACT_DIGITS + 1 }, (_, i) => 10 ** i);

/**
 * Number(text) for the common case of digits with at most one dot and at most 15 digits; NaN for
 * anything else (the caller then asks Number()). Digits read as an integer and divided by a power
 * of ten: both are exact, and IEEE division rounds the exact quotient to the nearest double, which
 * is what Number() returns for that decimal. Number() on a string costs a runtime call and a hash.
 */
function plainDecimal(text: string): number {
  const length = text.length;
  if (length > EXACT_DIGITS + 1) return Number.NaN;
  let mantissa = 0;
  let dot = -1;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) mantissa = mantissa * 10 + (c - 48);
    else if (c === 46 && dot === -1) dot = i;
    else return Number.NaN;
  }
  if (dot === -1) return length <= EXACT_DIGITS ? mantissa : Number.NaN;
  if (length === 1) return Number.NaN; // "."
  return mantissa / (POWERS_OF_TEN[length - dot - 1] as number);
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

/**
 * One part of a comma-separated line, for the report lines that come by the dozen per autovacuum
 * run: literal text with number slots, `{int}` (digits, read by toInt) and `{dec}` (digits and
 * dots, read by toFloat). `{int} scanned ({dec}% of total)` reads what the PieceSpec
 * `^(\d+) scanned \(([\d.]+)% of total\)$` reads. `apply` gets the slots' values in order, in an
 * array reused for the next part.
 */
export type PartSpec<T> = readonly [template: string, apply: (values: readonly (number | null)[], into: T) => void];

interface CompiledPart<T> {
  /**
   * A group that takes part in a match exactly when this alternative matched (its first slot's;
   * a group of its own for a template without slots), relative to its copy's first group.
   */
  group: number;
  slots: ReadonlyArray<{ group: number; dec: boolean }>;
  apply: PartSpec<T>[1];
}

/** Compiled PartSpecs (built once per module with partTable). */
export interface PartTable<T> {
  /** The templates as alternatives in table order; `groups` groups in all. */
  readonly alternatives: string;
  readonly groups: number;
  readonly parts: readonly CompiledPart<T>[];
  /** One sticky regex: one part, then its ", " or the end. */
  readonly onePart: RegExp;
  /** Sticky regexes of a whole line of N parts (index N), made when first needed. */
  readonly lines: RegExp[];
  /** How many parts the last line read whole had: the regex tried first on the next line. */
  lastCount: number;
}

/**
 * Compiles templates. A template must not be able to match a ", " (a literal holding one is
 * refused at module load): then the first alternative that matches up to a ", " or the end is
 * exactly the first template that matches the whole part, as with split(", ") and a loop.
 */
export function partTable<T>(specs: readonly PartSpec<T>[]): PartTable<T> {
  let group = 0;
  const alternatives: string[] = [];
  const parts = specs.map(([template, apply]): CompiledPart<T> => {
    if (template.includes(', ')) throw new Error(`part template "${template}" holds the separator ", "`);
    // Slots are the only groups (each capture is a new string): the first one tells the match.
    const pieces = template.split(/(\{int\}|\{dec\})/);
    const ownGroup = pieces.length === 1 ? ++group : 0;
    const slots: Array<{ group: number; dec: boolean }> = [];
    const source = pieces.map((piece) => {
      if (piece === '{int}' || piece === '{dec}') {
        slots.push({ group: ++group, dec: piece === '{dec}' });
        return piece === '{int}' ? '(\\d+)' : '([\\d.]+)';
      }
      return piece.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
    }).join('');
    alternatives.push(ownGroup === 0 ? source : `(${source})`);
    return { group: ownGroup === 0 ? slots[0]!.group : ownGroup, slots, apply };
  });
  const alternation = `(?:${alternatives.join('|')})`;
  return { alternatives: alternation, groups: group, parts, onePart: new RegExp(`${alternation}(?:, |$)`, 'y'), lines: [], lastCount: 0 };
}

/** Lines longer than this many parts are only read part by part. */
const MAX_LINE_PARTS = 8;
const partValues: (number | null)[] = [];

/**
 * matchPieces for PartSpecs over `text` from `start` to its end, parts separated by ", ": each
 * part goes to the first template that matches it whole. True when every part was recognised.
 *
 * A report line has the same parts as the one before it, so the line is first read whole by one
 * regex (N copies of the alternation, for the N parts of the last line read whole): one exec
 * instead of N. Every copy still takes the first template that matches its part, so the result is
 * the same; a line it does not fit is read part by part.
 */
export function readParts<T>(text: string, start: number, table: PartTable<T>, into: T): boolean {
  const count = table.lastCount;
  if (count > 0) {
    const regex = table.lines[count] ?? lineRegex(table, count);
    regex.lastIndex = start;
    const groups = regex.exec(text);
    if (groups !== null) {
      for (let copy = 0; copy < count; copy++) applyPart(groups, copy * table.groups, table, into);
      return true;
    }
  }
  return readPartByPart(text, start, table, into);
}

function lineRegex<T>(table: PartTable<T>, count: number): RegExp {
  const regex = new RegExp(`${Array.from({ length: count }, () => table.alternatives).join(', ')}$`, 'y');
  table.lines[count] = regex;
  return regex;
}

function readPartByPart<T>(text: string, start: number, table: PartTable<T>, into: T): boolean {
  const regex = table.onePart;
  let all = true;
  let count = 0;
  let from = start;
  for (;;) {
    count++;
    regex.lastIndex = from;
    const groups = regex.exec(text);
    if (groups === null) {
      all = false; // a part no template knows: skip it
      const comma = text.indexOf(', ', from);
      if (comma === -1) break;
      from = comma + 2;
      continue;
    }
    applyPart(groups, 0, table, into);
    from = regex.lastIndex;
    // Matched up to the end, or up to a ", " that ends the text (an empty last part follows).
    if (from >= text.length && !text.endsWith(', ')) break;
  }
  if (all && count <= MAX_LINE_PARTS) table.lastCount = count;
  return all;
}

/** Applies the part that matched in the copy whose groups start after `offset`. */
function applyPart<T>(groups: RegExpExecArray, offset: number, table: PartTable<T>, into: T): void {
  for (const part of table.parts) {
    if (groups[offset + part.group] === undefined) continue;
    for (let i = 0; i < part.slots.length; i++) {
      const slot = part.slots[i]!;
      const text = groups[offset + slot.group];
      partValues[i] = slot.dec ? toFloat(text) : toInt(text);
    }
    part.apply(partValues, into);
    return;
  }
}

export interface RusageFields {
  cpu_user_s: number | null;
  cpu_system_s: number | null;
  elapsed_s: number | null;
}

const RUSAGE = partTable<RusageFields>([
  ['CPU: user: {dec} s', (v, r) => (r.cpu_user_s = v[0] ?? null)],
  ['system: {dec} s', (v, r) => (r.cpu_system_s = v[0] ?? null)],
  ['elapsed: {dec} s', (v, r) => (r.elapsed_s = v[0] ?? null)],
]);

/** `CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s` (pg_rusage_show, 13-19), read from `start`. */
export function parseRusage(text: string, into: RusageFields, start = 0): boolean {
  return readParts(text, start, RUSAGE, into);
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
