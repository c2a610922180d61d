/**
 * Message catalogs: the translations of the messages pgvigil reads (./messages.ts), for one
 * language of one PostgreSQL major. Two sources:
 * - the server's installation (live use): `<sharedir>/locale/<lang>/LC_MESSAGES/postgres-<major>.mo`
 *   (Debian: /usr/share/locale/...), and the C library's `libc.mo` beside it for signal names;
 * - the compact catalogs shipped in the package (offline analysis): `catalogs/pg<major>/<lang>.json`,
 *   generated from the same .mo files by scripts/build-catalogs.ts (PostgreSQL licence, see NOTICE).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { libcMsgids, postgresMsgids } from './messages.js';

export interface Catalog {
  /** Catalog language as its directory names it: `de`, `ja`, `zh_CN`, `pt_BR`. */
  language: string;
  /** PostgreSQL major the catalog belongs to. */
  major: number;
  /** Where it was read from. */
  source: string;
  /** msgid -> msgstr forms (one, or one per plural form); only translated messages. */
  messages: Record<string, string[]>;
  /** strsignal() names from the C library's catalog: English -> translated. */
  signals: Record<string, string>;
  /**
   * Set when no package of this major was at hand and the catalog was derived from the majors
   * around it (./derive-catalog.ts): only the messages both translate alike (`agree`); `differ`
   * and `only_one` count those left out.
   */
  derived?: { from: [number, number]; agree: number; differ: number; only_one: number };
  /**
   * Of a derived catalog: the neighbours' forms of the messages left out. The middle major may
   * print one of them alike to a message kept, so a line they read is left unread.
   */
  guards?: Record<string, string[]>;
}

/**
 * How catalogs are named to the operator: `the PostgreSQL 15 message catalog`, `the PostgreSQL 14
 * message catalog derived from 13 and 15`, `the PostgreSQL 15 and 17 message catalogs`.
 */
export function describeCatalogs(catalogs: ReadonlyArray<Pick<Catalog, 'major' | 'derived'>>): string {
  const majors = [...new Set(catalogs.map((c) => c.major))];
  const what = majors.length === 1 ? `the PostgreSQL ${majors[0]} message catalog` : `the PostgreSQL ${majors.slice(0, -1).join(', ')} and ${majors.at(-1)} message catalogs`;
  const derived = catalogs.flatMap((c) => (c.derived === undefined ? [] : [`${majors.length === 1 ? '' : `${c.major} `}derived from ${c.derived.from[0]} and ${c.derived.from[1]}`]));
  return derived.length === 0 ? what : `${what} ${derived.join(', ')}`;
}

/** The shipped catalogs (a directory `catalogs` at the package root: src/ and dist/ are as deep). */
export const SHIPPED_CATALOGS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../catalogs');

/**
 * gettext-parser (and the encoding tables it loads) is required on the first .mo file, a live
 * server's: loaded with the module, it cost every `analyze` and every parsing worker ~0.1 s of CPU.
 */
const requireHere = createRequire(import.meta.url);

/** The translated messages of a .mo file whose msgid is in `wanted`. */
export function readMoMessages(buffer: Buffer, wanted: ReadonlySet<string>): Record<string, string[]> {
  const { mo } = requireHere('gettext-parser') as typeof import('gettext-parser');
  const parsed = mo.parse(buffer);
  const out: Record<string, string[]> = {};
  for (const entry of Object.values(parsed.translations[''] ?? {})) {
    if (!wanted.has(entry.msgid) || entry.msgstr.length === 0 || entry.msgstr.some((form) => form === '')) continue;
    out[entry.msgid] = entry.msgstr;
  }
  return out;
}

/**
 * The directory names gettext tries for a locale name, most specific first:
 * `de_DE.UTF-8@euro` -> de_DE@euro, de_DE, de@euro, de. Null for C/POSIX (English, no catalog).
 */
export function catalogLanguages(locale: string): string[] | null {
  const m = /^([A-Za-z]{2,3})(?:_([A-Za-z0-9]{2,3}))?(?:\.[^@]*)?(?:@(.*))?$/.exec(locale.trim());
  if (!m || /^(C|POSIX)$/i.test(locale.trim())) return null;
  const [, language, territory, modifier] = m;
  const names: string[] = [];
  const add = (name: string): void => void (names.includes(name) || names.push(name));
  if (territory !== undefined && modifier !== undefined) add(`${language}_${territory}@${modifier}`);
  if (territory !== undefined) add(`${language}_${territory}`);
  if (modifier !== undefined) add(`${language}@${modifier}`);
  add(language as string);
  return names;
}

/**
 * The catalog of a server's installation for `lcMessages`; null when the locale is English (C,
 * POSIX, en*) ; throws when no catalog exists for it (the caller reports that once).
 */
export function readInstalledCatalog(localeDir: string, lcMessages: string, major: number): Catalog | null {
  const names = catalogLanguages(lcMessages);
  if (names === null || names.every((name) => name.startsWith('en'))) return null;
  for (const name of names) {
    const file = path.join(localeDir, name, 'LC_MESSAGES', `postgres-${major}.mo`);
    if (!fs.existsSync(file)) continue;
    const libc = path.join(localeDir, name, 'LC_MESSAGES', 'libc.mo');
    return {
      language: name,
      major,
      source: file,
      messages: readMoMessages(fs.readFileSync(file), postgresMsgids()),
      signals: fs.existsSync(libc) ? firstForms(readMoMessages(fs.readFileSync(libc), libcMsgids())) : {},
    };
  }
  throw new Error(`no PostgreSQL ${major} message catalog for lc_messages "${lcMessages}" (looked for ${names.map((n) => path.join(localeDir, n, 'LC_MESSAGES', `postgres-${major}.mo`)).join(', ')})`);
}

export function firstForms(messages: Record<string, string[]>): Record<string, string> {
  return Object.fromEntries(Object.entries(messages).map(([id, forms]) => [id, forms[0] as string]));
}

/** Languages and majors of the shipped catalogs. */
export function shippedCatalogs(dir = SHIPPED_CATALOGS_DIR): Array<{ language: string; major: number; file: string }> {
  if (!fs.existsSync(dir)) return [];
  const out: Array<{ language: string; major: number; file: string }> = [];
  for (const majorDir of fs.readdirSync(dir).sort()) {
    const m = /^pg(\d+)$/.exec(majorDir);
    if (!m) continue;
    for (const file of fs.readdirSync(path.join(dir, majorDir)).sort()) {
      if (file.endsWith('.json')) out.push({ language: file.slice(0, -'.json'.length), major: Number(m[1]), file: path.join(dir, majorDir, file) });
    }
  }
  return out;
}

export function readCatalogFile(file: string): Catalog {
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Catalog;
  if (typeof parsed.language !== 'string' || typeof parsed.major !== 'number' || typeof parsed.messages !== 'object') {
    throw new Error(`${file}: not a pgvigil message catalog`);
  }
  return { ...parsed, signals: parsed.signals ?? {} };
}

/** The shipped catalogs of `language` (every major shipped), or of every language when null. */
export function readShippedCatalogs(language: string | null, dir = SHIPPED_CATALOGS_DIR): Catalog[] {
  return shippedCatalogs(dir)
    .filter((c) => language === null || c.language === language)
    .map((c) => readCatalogFile(c.file));
}
