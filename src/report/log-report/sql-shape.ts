/**
 * A statement's shape: its text with every literal (number, quoted or dollar-quoted string)
 * replaced by one marker, everything else (white space, comments, identifiers, `$n`) kept as it
 * is. Two texts of one shape differ only in literal values, so PostgreSQL's parser gives them the
 * same fingerprint and the same normalised text: the shape is the key of fingerprint.ts's cache,
 * which makes pgbench's millions of distinct texts a handful of parser calls. It is also the
 * fallback normaliser for a text the parser rejects (a statement cut short).
 *
 * Owns: the scan (one pass over the characters, no regex per statement). Never: the parser.
 */
import { holdsAt } from './holds-at.js';

/** Stands for a literal in a shape: a control character no statement holds unquoted. */
export const LITERAL = '\u0001';

const enum Char {
  Space = 32, Dollar = 36, Quote = 39, DoubleQuote = 34, Asterisk = 42, Plus = 43, Minus = 45, Dot = 46, Slash = 47,
  Zero = 48, Nine = 57, Backslash = 92, Underscore = 95,
}

function isIdentifierChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= Char.Zero && code <= Char.Nine) || code === Char.Underscore || code === Char.Dollar || code > 127;
}

function isDigit(code: number): boolean {
  return code >= Char.Zero && code <= Char.Nine;
}

/** A shape as the text between literals: `segments[i]`, a literal, `segments[i + 1]`... */
export interface ShapeParts {
  segments: string[];
  /** Per literal: whether its last character could continue an identifier (a number's does). */
  literalEndsInWord: boolean[];
}

/** `text`'s shape as parts; an unterminated string or comment runs to the end. */
export function shapeParts(text: string): ShapeParts {
  const segments: string[] = [];
  const literalEndsInWord: boolean[] = [];
  let copied = 0;
  for (let i = 0; i < text.length;) {
    const end = literalEnd(text, i);
    if (end < 0) {
      i = tokenEnd(text, i);
      continue;
    }
    segments.push(text.slice(copied, i));
    literalEndsInWord.push(isIdentifierChar(text.charCodeAt(end - 1)));
    copied = i = end;
  }
  segments.push(text.slice(copied));
  return { segments, literalEndsInWord };
}

/** `text` with its literals replaced by LITERAL. */
export function shapeOf(text: string): string {
  return shapeParts(text).segments.join(LITERAL);
}

/**
 * Whether `text` has the shape `parts` (what `shapeOf` would tell, without scanning the text
 * character by character): its segments compared as they are, only its literals scanned. The
 * scan's decisions inside a segment depend on the character before it, which the literal's last
 * one gives: literals ending alike keep them.
 */
export function hasShape(text: string, parts: ShapeParts): boolean {
  const { segments, literalEndsInWord } = parts;
  if (!holdsAt(text, segments[0]!, 0)) return false;
  let at = segments[0]!.length;
  for (let i = 1; i < segments.length; i++) {
    const end = literalEnd(text, at);
    if (end < 0 || isIdentifierChar(text.charCodeAt(end - 1)) !== literalEndsInWord[i - 1] || !holdsAt(text, segments[i]!, end)) return false;
    at = end + segments[i]!.length;
  }
  return at === text.length;
}

/** The end of the literal that starts at `i`; -1 when none does. */
function literalEnd(text: string, i: number): number {
  const code = text.charCodeAt(i);
  const previous = i === 0 ? Char.Space : text.charCodeAt(i - 1);
  // E'...' strings take backslash escapes; the prefix letter (E, B, X, U&) stays in the shape.
  if (code === Char.Quote) return endOfQuoted(text, i + 1, (previous | 0x20) === 101);
  if (code === Char.Dollar && !isIdentifierChar(previous) && !isDigit(text.charCodeAt(i + 1))) {
    const end = endOfDollarQuoted(text, i);
    return end > i ? end : -1;
  }
  if ((isDigit(code) || (code === Char.Dot && isDigit(text.charCodeAt(i + 1)))) && !isIdentifierChar(previous)) return endOfNumber(text, i);
  return -1;
}

/** The end of what is kept as it is from `i`: a quoted identifier, a comment, an identifier (its digits its own), or one character. */
function tokenEnd(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code === Char.DoubleQuote) return endOfQuotedIdentifier(text, i + 1);
  if (code === Char.Minus && text.charCodeAt(i + 1) === Char.Minus) {
    const newline = text.indexOf('\n', i);
    return newline < 0 ? text.length : newline;
  }
  if (code === Char.Slash && text.charCodeAt(i + 1) === Char.Asterisk) return endOfBlockComment(text, i + 2);
  if (!isIdentifierChar(code)) return i + 1;
  let end = i + 1;
  while (end < text.length && isIdentifierChar(text.charCodeAt(end))) end++;
  return end;
}

function endOfQuoted(text: string, from: number, backslashEscapes: boolean): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (backslashEscapes && code === Char.Backslash) i++;
    else if (code === Char.Quote) {
      if (text.charCodeAt(i + 1) !== Char.Quote) return i + 1;
      i++;
    }
  }
  return text.length;
}

function endOfQuotedIdentifier(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text.charCodeAt(i) !== Char.DoubleQuote) continue;
    if (text.charCodeAt(i + 1) !== Char.DoubleQuote) return i + 1;
    i++;
  }
  return text.length;
}

function endOfBlockComment(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length - 1; i++) {
    const code = text.charCodeAt(i);
    if (code === Char.Asterisk && text.charCodeAt(i + 1) === Char.Slash) {
      if (--depth === 0) return i + 2;
      i++;
    } else if (code === Char.Slash && text.charCodeAt(i + 1) === Char.Asterisk) {
      depth++;
      i++;
    }
  }
  return text.length;
}

/** The end of `$tag$ ... $tag$` starting at `from`; `from` itself when no tag opens there. */
function endOfDollarQuoted(text: string, from: number): number {
  let i = from + 1;
  while (i < text.length && isIdentifierChar(text.charCodeAt(i)) && text.charCodeAt(i) !== Char.Dollar) i++;
  if (text.charCodeAt(i) !== Char.Dollar) return from;
  const tag = text.slice(from, i + 1);
  const close = text.indexOf(tag, i + 1);
  return close < 0 ? text.length : close + tag.length;
}

/** Digits, a fraction, an exponent with its sign, hex/octal/binary and `_` separators (PG 16+). */
function endOfNumber(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if ((code | 0x20) === 101 && (text.charCodeAt(i + 1) === Char.Plus || text.charCodeAt(i + 1) === Char.Minus) && isDigit(text.charCodeAt(i + 2))) i += 2;
    else if (isIdentifierChar(code) || code === Char.Dot) i++;
    else break;
  }
  return i;
}

const FOLDED_LIST = new RegExp(`\\b(in\\s*)\\(\\s*${LITERAL}(?:\\s*,\\s*${LITERAL})+\\s*\\)`, 'gi');
const HIGHEST_PARAMETER = /\$(\d+)/g;

/**
 * What a shape reads as when the parser rejected its text: `IN (...)` lists of literals folded to
 * one, literals as `$n` numbered after the text's own parameters, as PostgreSQL's normaliser does.
 */
export function normalisedShape(shape: string): string {
  let next = 1;
  for (const match of shape.matchAll(HIGHEST_PARAMETER)) next = Math.max(next, Number(match[1]) + 1);
  return shape.replace(FOLDED_LIST, `$1(${LITERAL})`).replace(/\u0001/g, () => `$${next++}`);
}
