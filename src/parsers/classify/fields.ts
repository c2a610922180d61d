/**
 * Small readers for the fields PostgreSQL prints inside messages. All return null (or false)
 * for text they do not recognise: a classifier never throws on odd input.
 */
import { templateItems, templatesOverlap } from './template-overlap.js';

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

export function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
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
  /** The template as a regex source, a group for each slot. */
  capturing: string;
  /** The same without groups, for lookaheads. */
  plain: string;
  /** In `onePart`: a group that takes part in a match exactly when this template matched. */
  group: number;
  /** In `onePart`: each slot's group, and whether it is a {dec}. */
  slots: ReadonlyArray<{ group: number; dec: boolean }>;
  /** The templates before this one in the table that can match a part this one matches. */
  overlapped: readonly CompiledPart<T>[];
  apply: PartSpec<T>[1];
}

/** A line's parts as the templates that read them, in order, and the regex of that line. */
export interface Shape<T> {
  regex: RegExp;
  /**
   * The parts as a regex source without anchors, for a regex over several lines: a part's end
   * is ", " or the end of its line, not of the text.
   */
  source: string;
  /** Capture groups in `source`: one per slot. */
  groups: number;
  parts: readonly CompiledPart<T>[];
}

/** Compiled PartSpecs (built once per module with partTable). */
export interface PartTable<T> {
  readonly parts: readonly CompiledPart<T>[];
  /** One sticky regex: one part (the templates as alternatives in table order), then its ", " or the end. */
  readonly onePart: RegExp;
  /** Line regexes by the templates of their parts ("0,1,3"), made when a line of that shape is first read. */
  readonly shapes: Map<string, Shape<T>>;
  /** The shape of the last line read whole (null when it has none): tried first on the next line. */
  last: Shape<T> | null;
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
    const pieces = template.split(/(\{int\}|\{dec\})/);
    // In `onePart` the slots are the only groups (each capture is a new string) and the first
    // one tells which template matched; a template without slots gets a group of its own.
    const ownGroup = pieces.length === 1 ? ++group : 0;
    const slots: Array<{ group: number; dec: boolean }> = [];
    let plain = '';
    let capturing = '';
    for (const piece of pieces) {
      if (piece === '{int}' || piece === '{dec}') {
        slots.push({ group: ++group, dec: piece === '{dec}' });
        const pattern = piece === '{int}' ? '\\d+' : '[\\d.]+';
        plain += pattern;
        capturing += `(${pattern})`;
      } else {
        const literal = escapeRegExp(piece);
        plain += literal;
        capturing += literal;
      }
    }
    alternatives.push(ownGroup === 0 ? capturing : `(${capturing})`);
    return { capturing, plain, group: ownGroup === 0 ? slots[0]!.group : ownGroup, slots, overlapped: [], apply };
  });
  const items = specs.map(([template]) => templateItems(template));
  parts.forEach((part, i) => (part.overlapped = parts.slice(0, i).filter((_, j) => templatesOverlap(items[j]!, items[i]!))));
  return { parts, onePart: new RegExp(`(?:${alternatives.join('|')})(?:, |$)`, 'y'), shapes: new Map(), last: null };
}

const partValues: (number | null)[] = [];

/**
 * matchPieces for PartSpecs over `text` from `start` to its end, parts separated by ", ": each
 * part goes to the first template that matches it whole. True when every part was recognised.
 *
 * A report line has the parts of the one before it, so the line is first read whole by the regex
 * of that shape: each part's template, behind a lookahead that no earlier template of the table
 * that can match the same text matches the part (so it is still the first that matches). One
 * exec, and groups for the figures only; a line of another shape is read part by part, and its
 * shape kept for the next line.
 */
export function readParts<T>(text: string, start: number, table: PartTable<T>, into: T): boolean {
  const shape = table.last;
  if (shape !== null) {
    const regex = shape.regex;
    regex.lastIndex = start;
    const groups = regex.exec(text);
    if (groups !== null) {
      applyShape(shape, groups, 1, into);
      return true;
    }
  }
  return readPartByPart(text, start, table, into);
}

/** Applies a match of `shape`'s source whose first group is groups[first]. */
export function applyShape<T>(shape: Shape<T>, groups: RegExpExecArray, first: number, into: T): void {
  let group = first;
  for (const part of shape.parts) {
    for (let i = 0; i < part.slots.length; i++) partValues[i] = readSlot(groups[group++], part.slots[i]!.dec);
    part.apply(partValues, into);
  }
}

function readSlot(text: string | undefined, dec: boolean): number | null {
  return dec ? toFloat(text) : toInt(text);
}

/** Lines of more parts than this are only read part by part. */
const MAX_SHAPE_PARTS = 8;
/** Shapes kept per table: a real report has a handful; odd input must not grow memory. */
export const MAX_SHAPES = 64;

function readPartByPart<T>(text: string, start: number, table: PartTable<T>, into: T): boolean {
  const regex = table.onePart;
  const read: CompiledPart<T>[] = [];
  let all = true;
  let from = start;
  for (;;) {
    regex.lastIndex = from;
    const groups = regex.exec(text);
    if (groups === null) {
      all = false; // a part no template knows: skip it
      const comma = text.indexOf(', ', from);
      if (comma === -1) break;
      from = comma + 2;
      continue;
    }
    read.push(applyPart(groups, table, into));
    from = regex.lastIndex;
    // Matched up to the end, or up to a ", " that ends the text (an empty last part follows).
    if (from >= text.length && !text.endsWith(', ')) break;
  }
  if (all && read.length <= MAX_SHAPE_PARTS) table.last = shapeOf(table, read);
  return all;
}

/** The shape of a line read by these templates; null when the table keeps no more shapes. */
function shapeOf<T>(table: PartTable<T>, parts: readonly CompiledPart<T>[]): Shape<T> | null {
  const key = parts.map((part) => table.parts.indexOf(part)).join(',');
  let shape = table.shapes.get(key);
  if (shape === undefined) {
    if (table.shapes.size >= MAX_SHAPES) return null;
    // (?![^\n]): the end of the line, which is the end of the text when the line is read alone.
    const source = parts.map((part) => {
      const earlier = part.overlapped.map((p) => p.plain);
      const guard = earlier.length === 0 ? '' : `(?!(?:${earlier.join('|')})(?:, |(?![^\\n])))`;
      return guard + part.capturing;
    }).join(', ');
    const groups = parts.reduce((sum, part) => sum + part.slots.length, 0);
    shape = { regex: new RegExp(`${source}$`, 'y'), source, groups, parts };
    table.shapes.set(key, shape);
  }
  return shape;
}

/** Applies the template that matched a part in `onePart`; returns it. */
function applyPart<T>(groups: RegExpExecArray, table: PartTable<T>, into: T): CompiledPart<T> {
  for (const part of table.parts) {
    if (groups[part.group] === undefined) continue;
    for (let i = 0; i < part.slots.length; i++) partValues[i] = readSlot(groups[part.slots[i]!.group], part.slots[i]!.dec);
    part.apply(partValues, into);
    return part;
  }
  throw new Error('readParts: a part matched no template'); // the alternation matched one of them
}

export interface RusageFields {
  cpu_user_s: number | null;
  cpu_system_s: number | null;
  elapsed_s: number | null;
}

/** The parts of pg_rusage_show(): `CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s`. */
export const RUSAGE_PARTS = partTable<RusageFields>([
  ['CPU: user: {dec} s', (v, r) => (r.cpu_user_s = v[0] ?? null)],
  ['system: {dec} s', (v, r) => (r.cpu_system_s = v[0] ?? null)],
  ['elapsed: {dec} s', (v, r) => (r.elapsed_s = v[0] ?? null)],
]);

/** `CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s` (pg_rusage_show, 13-19), read from `start`. */
export function parseRusage(text: string, into: RusageFields, start = 0): boolean {
  return readParts(text, start, RUSAGE_PARTS, into);
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
