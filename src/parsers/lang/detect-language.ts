/**
 * Which language a log is written in, from its first lines, among the shipped catalogs: each
 * line scores for a language when it carries one of the language's own severity words or labels
 * (`FEHLER:  `, `ПОДРОБНОСТИ:  `), and when its text after the word starts like one of the
 * language's translated messages (Spanish keeps `LOG` and `ERROR`, so words alone do not tell).
 * English wins when no language scores. Only heads and words are compared: building a language's
 * matchers costs more than the whole scan, so only the winner's are built.
 */
import type { Catalog } from './catalog.js';
import { FIELD_LABELS, SEVERITY_WORDS } from './messages.js';

/**
 * Heads shorter than this ("%s (PID", "Index ") say too little. A CJK character says as much as
 * two letters (`テーブル"` is a telling head).
 */
const MIN_HEAD = 6;

function headWeight(head: string): number {
  let weight = 0;
  for (const ch of head) weight += (ch.codePointAt(0) as number) >= 0x2e80 ? 2 : 1;
  return weight;
}

interface LanguageClues {
  language: string;
  /** Tokens after the prefix that English does not use. */
  tokens: string[];
  /** Severity words English does not use (`FEHLER`), as csvlog and jsonlog print them. */
  severities: Set<string>;
  /** Translated message texts up to their first directive. */
  /** By their first UTF-16 unit: a line is compared with the few heads that can start it. */
  heads: Map<number, string[]>;
}

/**
 * The clues of every language, as plain data: what detection needs of the catalogs (73 KB of
 * 1.6 MB). Shipped precomputed beside the catalogs (./detector-index.ts), so that an `analyze`
 * reads only the catalogs of the language its log turns out to be in, none for English.
 */
export interface DetectorIndex {
  languages: Array<{ language: string; tokens: string[]; severities: string[]; heads: string[] }>;
}

const ENGLISH_SEVERITIES = new Set<string>(SEVERITY_WORDS);

const ENGLISH_TOKENS = new Set<string>([
  ...SEVERITY_WORDS.map((word) => `${word}:  `),
  ...Object.keys(FIELD_LABELS).map((id) => (id.includes('%') ? id.slice(0, id.indexOf('%')) : id)),
]);

/** What the parser needs of a detector: the words the format detection must accept, and the language of a file's first lines. */
export interface LogDetector {
  readonly lineWords: readonly string[];
  detect(lines: readonly string[]): string | null;
}

/** The detection clues of `catalogs`, per language in the order the catalogs first name it. */
export function detectorIndex(catalogs: readonly Catalog[]): DetectorIndex {
  const byLanguage = new Map<string, { tokens: Set<string>; severities: Set<string>; heads: Set<string> }>();
  for (const catalog of catalogs) {
    let clues = byLanguage.get(catalog.language);
    if (clues === undefined) {
      clues = { tokens: new Set(), severities: new Set(), heads: new Set() };
      byLanguage.set(catalog.language, clues);
    }
    for (const [id, forms] of Object.entries(catalog.messages)) {
      for (const form of forms) {
        if ((SEVERITY_WORDS as readonly string[]).includes(id)) {
          clues.tokens.add(`${form}:  `);
          if (!ENGLISH_SEVERITIES.has(form)) clues.severities.add(form);
        }
        else if (id in FIELD_LABELS) clues.tokens.add(form.includes('%') ? form.slice(0, form.indexOf('%')) : form);
        else {
          const head = form.includes('%') ? form.slice(0, form.indexOf('%')) : form;
          if (headWeight(head) >= MIN_HEAD && !id.startsWith(head)) clues.heads.add(head);
        }
      }
    }
  }
  return {
    languages: [...byLanguage].map(([language, c]) => ({
      language,
      tokens: [...c.tokens].filter((token) => !ENGLISH_TOKENS.has(token)),
      severities: [...c.severities],
      heads: [...c.heads],
    })),
  };
}

export class LanguageDetector implements LogDetector {
  private readonly clues: LanguageClues[];
  /** Every token of every language, English included: what the format detection must accept. */
  readonly lineWords: readonly string[];

  constructor(index: DetectorIndex) {
    this.clues = index.languages.map((c) => ({
      language: c.language,
      tokens: c.tokens,
      severities: new Set(c.severities),
      heads: byFirstUnit(c.heads),
    }));
    const words = new Set(ENGLISH_TOKENS);
    for (const c of this.clues) for (const token of c.tokens) words.add(token);
    this.lineWords = [...words];
  }

  /** The language most lines speak; null for English (or nothing recognisable). */
  detect(lines: readonly string[]): string | null {
    const read = lines.map(readLine);
    let best: { language: string; score: number } | null = null;
    for (const c of this.clues) {
      let score = 0;
      for (let i = 0; i < lines.length; i++) {
        const { severity, text } = read[i] as LineClue;
        if (severity === null ? c.tokens.some((token) => (lines[i] as string).includes(token)) : c.severities.has(severity)) score++;
        if (text !== null && c.heads.get(text.charCodeAt(0))?.some((head) => text.startsWith(head)) === true) score++;
      }
      if (score > 0 && (best === null || score > best.score)) best = { language: c.language, score };
    }
    return best?.language ?? null;
  }
}

function byFirstUnit(heads: Iterable<string>): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const head of heads) {
    const list = out.get(head.charCodeAt(0));
    if (list === undefined) out.set(head.charCodeAt(0), [head]);
    else list.push(head);
  }
  return out;
}

export interface LineClue {
  /** The severity field of a csvlog or jsonlog record; null for stderr (its tokens are searched). */
  severity: string | null;
  /** Where the message text starts. */
  text: string | null;
}

/** A csvlog record's severity, SQLSTATE and the opening quote of its message. */
const CSV_SEVERITY = /,([^,"]+),([0-9A-Z]{5}),"/;

/**
 * The severity and message text of one physical line: a jsonlog object's fields (parsed: its
 * quotes are escaped), a csvlog
 * record's, else a stderr line's text after its first `:  ` (the severity word's), or its tab-led
 * continuation.
 */
export function readLine(line: string): LineClue {
  if (line.charCodeAt(0) === 9) return { severity: null, text: line.slice(1) };
  if (line.charCodeAt(0) === 123) { // {
    try {
      const record = JSON.parse(line) as { error_severity?: unknown; message?: unknown };
      return { severity: typeof record.error_severity === 'string' ? record.error_severity : null, text: typeof record.message === 'string' ? record.message : null };
    } catch {
      return { severity: null, text: null };
    }
  }
  const csv = CSV_SEVERITY.exec(line);
  // The message's quotes are doubled in the record.
  if (csv !== null) return { severity: csv[1] as string, text: line.slice(csv.index + csv[0].length).replaceAll('""', '"') };
  const at = line.indexOf(':  ');
  return { severity: null, text: at === -1 ? null : line.slice(at + 3) };
}
