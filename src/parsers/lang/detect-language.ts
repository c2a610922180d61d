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

/** Heads shorter than this ("%s (PID", "Index ") say too little. */
const MIN_HEAD = 6;

interface LanguageClues {
  language: string;
  /** Tokens after the prefix that English does not use. */
  tokens: string[];
  /** Translated message texts up to their first directive. */
  heads: string[];
}

const ENGLISH_TOKENS = new Set<string>([
  ...SEVERITY_WORDS.map((word) => `${word}:  `),
  ...Object.keys(FIELD_LABELS).map((id) => (id.includes('%') ? id.slice(0, id.indexOf('%')) : id)),
]);

export class LanguageDetector {
  private readonly clues: LanguageClues[];
  /** Every token of every language, English included: what the format detection must accept. */
  readonly lineWords: readonly string[];

  constructor(catalogs: readonly Catalog[]) {
    const byLanguage = new Map<string, { tokens: Set<string>; heads: Set<string> }>();
    for (const catalog of catalogs) {
      let clues = byLanguage.get(catalog.language);
      if (clues === undefined) {
        clues = { tokens: new Set(), heads: new Set() };
        byLanguage.set(catalog.language, clues);
      }
      for (const [id, forms] of Object.entries(catalog.messages)) {
        for (const form of forms) {
          if ((SEVERITY_WORDS as readonly string[]).includes(id)) clues.tokens.add(`${form}:  `);
          else if (id in FIELD_LABELS) clues.tokens.add(form.includes('%') ? form.slice(0, form.indexOf('%')) : form);
          else {
            const head = form.includes('%') ? form.slice(0, form.indexOf('%')) : form;
            if (head.length >= MIN_HEAD && !id.startsWith(head)) clues.heads.add(head);
          }
        }
      }
    }
    this.clues = [...byLanguage].map(([language, c]) => ({
      language,
      tokens: [...c.tokens].filter((token) => !ENGLISH_TOKENS.has(token)),
      heads: [...c.heads],
    }));
    const words = new Set(ENGLISH_TOKENS);
    for (const c of this.clues) for (const token of c.tokens) words.add(token);
    this.lineWords = [...words];
  }

  /** The language most lines speak; null for English (or nothing recognisable). */
  detect(lines: readonly string[]): string | null {
    let best: { language: string; score: number } | null = null;
    for (const c of this.clues) {
      let score = 0;
      for (const line of lines) {
        if (c.tokens.some((token) => line.includes(token))) score++;
        const text = messageText(line);
        if (text !== null && c.heads.some((head) => text.startsWith(head))) score++;
      }
      if (score > 0 && (best === null || score > best.score)) best = { language: c.language, score };
    }
    return best?.language ?? null;
  }
}

/** The text after the first `:  ` of a stderr line (the severity word's), or the line's tab-led text. */
function messageText(line: string): string | null {
  if (line.charCodeAt(0) === 9) return line.slice(1);
  const at = line.indexOf(':  ');
  return at === -1 ? null : line.slice(at + 3);
}
