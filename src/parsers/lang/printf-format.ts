/**
 * The C printf formats of PostgreSQL's messages (msgid and msgstr of its gettext catalogs), as
 * far as a log reader needs them: split into literal text and directives (`%s`, `%d`, `%u`,
 * `%lld`, `%.2f`, `%03d`, `%X`, positional `%2$s`), a regex source that captures each directive,
 * and the English text rebuilt from captured values.
 *
 * The server formats numbers with LC_NUMERIC = C, so a decimal comma is never printf's: it is a
 * literal a translator wrote between two directives (`%ld,%03d`), and stays in the literal text.
 */

export interface Directive {
  /** 0-based argument index (positional `%n$` or the directive's order). */
  arg: number;
  /** The directive as written without its `n$`, e.g. `%03d`, `%.2f`, `%lld`. */
  spec: string;
  /** Conversion letter. */
  conversion: string;
  flags: string;
  width: number | null;
  precision: number | null;
}

/** A format: literal texts around directives; `literals.length === directives.length + 1`. */
export interface ParsedFormat {
  literals: string[];
  directives: Directive[];
}

// % [n$] [flags] [width] [.precision] [length] conversion
const DIRECTIVE = /%(?:(\d+)\$)?([-+ #0']*)(\d+)?(?:\.(\d+))?(hh|h|ll|l|z|j|t|L|q)?([diouxXfFeEgGcsp%m])/y;

/** Parses a C format; throws on a `%` it cannot read (a catalog entry that is not a c-format). */
export function parseFormat(format: string): ParsedFormat {
  const literals: string[] = [];
  const directives: Directive[] = [];
  let literal = '';
  let next = 0;
  let i = 0;
  while (i < format.length) {
    const c = format.charAt(i);
    if (c !== '%') {
      literal += c;
      i++;
      continue;
    }
    DIRECTIVE.lastIndex = i;
    const m = DIRECTIVE.exec(format);
    if (m === null) throw new Error(`unreadable printf directive at ${i} in ${JSON.stringify(format)}`);
    i = DIRECTIVE.lastIndex;
    const conversion = m[6] as string;
    if (conversion === '%') {
      literal += '%';
      continue;
    }
    if (conversion === 'm') throw new Error(`%m (errno text) in ${JSON.stringify(format)} cannot be read back`);
    const arg = m[1] !== undefined ? Number(m[1]) - 1 : next;
    next = arg + 1;
    literals.push(literal);
    literal = '';
    const spec = `%${m[2] ?? ''}${m[3] ?? ''}${m[4] !== undefined ? `.${m[4]}` : ''}${m[5] ?? ''}${conversion}`;
    directives.push({
      arg, spec, conversion, flags: m[2] ?? '',
      width: m[3] === undefined ? null : Number(m[3]), precision: m[4] === undefined ? null : Number(m[4]),
    });
  }
  literals.push(literal);
  return { literals, directives };
}

/** Formats printed one after the other, their arguments numbered on. */
export function joinFormats(formats: readonly ParsedFormat[]): ParsedFormat {
  if (formats.length === 1) return formats[0] as ParsedFormat;
  const literals: string[] = [''];
  const directives: Directive[] = [];
  let offset = 0;
  for (const f of formats) {
    literals[literals.length - 1] += f.literals[0] as string;
    f.directives.forEach((d, i) => {
      directives.push({ ...d, arg: d.arg + offset });
      literals.push(f.literals[i + 1] as string);
    });
    offset += argCount(f);
  }
  return { literals, directives };
}

export function argCount(format: ParsedFormat): number {
  let count = 0;
  for (const d of format.directives) count = Math.max(count, d.arg + 1);
  return count;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/**
 * The regex piece capturing one directive. `lazy` makes every quantifier lazy: comparing a lazy
 * and a greedy reading of the same text tells an ambiguous split (two values run together) from
 * an exact one.
 */
function directiveSource(d: Directive, lazy: boolean): string {
  const q = lazy ? '+?' : '+';
  switch (d.conversion) {
    case 'd':
    case 'i':
      return `(-?\\d${q})`;
    case 'u':
      return `(\\d${q})`;
    case 'o':
      return `([0-7]${q})`;
    case 'x':
      return `([0-9a-f]${q})`;
    case 'X':
      return `([0-9A-F]${q})`;
    case 'c':
      return '([^])';
    case 's':
    case 'p':
      return lazy ? '([^]*?)' : '([^]*)';
    default: // f F e E g G: the server's LC_NUMERIC is C
      return `(-?\\d${q}(?:\\.\\d${q})?)`;
  }
}

/** An anchored regex source matching the whole text of `format`, one group per directive in text order. */
export function formatSource(format: ParsedFormat, lazy: boolean): string {
  let source = escapeRegExp(format.literals[0] as string);
  for (let i = 0; i < format.directives.length; i++) {
    source += directiveSource(format.directives[i] as Directive, lazy) + escapeRegExp(format.literals[i + 1] as string);
  }
  return source;
}

const INTEGER = new Set(['d', 'i', 'u']);
const FLOAT = new Set(['f', 'F', 'e', 'E', 'g', 'G']);

/**
 * How a value printed by the translation's directive `from` becomes what the English directive
 * `to` prints: 'copy' when both print the same text, 'integer' when only padding differs, null
 * when the text cannot be reproduced (another precision, another type): such a translation is
 * not read.
 */
export function conversionBetween(from: Directive, to: Directive): 'copy' | 'integer' | null {
  const sameLength = from.spec.replace(/(hh|h|ll|l|z|j|t|L|q)(?=[a-zA-Z]$)/, '') === to.spec.replace(/(hh|h|ll|l|z|j|t|L|q)(?=[a-zA-Z]$)/, '');
  if (sameLength) return 'copy';
  if (INTEGER.has(from.conversion) && INTEGER.has(to.conversion)) return 'integer';
  if (FLOAT.has(from.conversion) && FLOAT.has(to.conversion) && from.precision === to.precision && to.width === null && from.flags === to.flags) return 'copy';
  if (from.conversion === 's' && to.conversion === 's' && to.width === null && to.precision === null) return 'copy';
  return null;
}

/** An integer's text as printed by `to` (width, zero padding, `-` and `+` flags). */
export function formatInteger(text: string, to: Directive): string {
  const negative = text.startsWith('-');
  let digits = (negative ? text.slice(1) : text).replace(/^0+(?=\d)/, '');
  const sign = negative ? '-' : to.flags.includes('+') ? '+' : to.flags.includes(' ') ? ' ' : '';
  if (to.precision !== null && digits.length < to.precision) digits = digits.padStart(to.precision, '0');
  const width = to.width ?? 0;
  if (sign.length + digits.length >= width) return sign + digits;
  if (to.flags.includes('-')) return (sign + digits).padEnd(width, ' ');
  if (to.flags.includes('0')) return sign + digits.padStart(width - sign.length, '0');
  return (sign + digits).padStart(width, ' ');
}
