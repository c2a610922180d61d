/**
 * Choosing the language a log is read in: from `--lang` or by detection (offline, with the
 * shipped catalogs), or from the server's lc_messages and its installed catalog (live). A
 * language without a catalog is said once, by the caller, with the text `noCatalog` returns; its
 * lines are then read as English and count as not understood.
 */
import { catalogLanguages, readInstalledCatalog, readShippedCatalogs, shippedCatalogs, type Catalog } from './catalog.js';
import { detectorIndex, LanguageDetector, readLine, type LogDetector } from './detect-language.js';
import { exactCatalogs, readDetectorIndex } from './detector-index.js';
import { Translator } from './translator.js';

/**
 * The log's language: a translator (the server's lc_messages, or `--lang`), or a detector that
 * picks one from the first lines of each file; English when absent.
 */
export type LanguageSetting =
  | { translator: Translator }
  | { detect: LogDetector; translatorFor: (language: string, lines: readonly string[]) => Translator | null }
  | undefined;

export interface LanguageChoice {
  setting: LanguageSetting;
  /** Why the asked language cannot be read (say it once); null when it can. */
  problem: string | null;
}

const ENGLISH = /^(en([_-].*)?|C(\..*)?|POSIX)$/i;

/**
 * `--lang`: `auto` (default; detected per file among the shipped catalogs), `en` (English only), or
 * a catalog language (`de`, `ja`, `zh_CN`, or a locale name such as `de_DE.UTF-8`).
 */
export function offlineLanguage(lang: string | undefined, catalogsDir?: string): LanguageChoice {
  if (lang === undefined || lang === 'auto') {
    const index = readDetectorIndex(catalogsDir);
    if (index.languages.length === 0) return { setting: undefined, problem: null };
    // Only the detected language's catalogs are read: none for an English log.
    return { setting: perFile((language) => exactCatalogs(readShippedCatalogs(language, catalogsDir)), new LanguageDetector(index)), problem: null };
  }
  if (ENGLISH.test(lang)) return { setting: undefined, problem: null };
  for (const language of catalogLanguages(lang) ?? [lang]) {
    const catalogs = exactCatalogs(readShippedCatalogs(language, catalogsDir));
    // The language is given; its major is still told per file.
    if (catalogs.length > 0) return { setting: perFile(() => catalogs, { lineWords: new LanguageDetector(detectorIndex(catalogs)).lineWords, detect: () => language }), problem: null };
  }
  const shipped = [...new Set(shippedCatalogs(catalogsDir).map((c) => c.language))].join(', ');
  return { setting: undefined, problem: noCatalog(`language "${lang}"`, `shipped catalogs: ${shipped || 'none'}`) };
}

/**
 * Each file's language from `detector`, read with the catalog of the major that reads its first
 * lines best; `catalogsOf(language)` reads a language's catalogs, once, when a file is in it.
 */
function perFile(catalogsOf: (language: string) => readonly Catalog[], detector: LogDetector): LanguageSetting {
  const catalogsByLanguage = new Map<string, readonly Catalog[]>();
  const catalogs = (language: string): readonly Catalog[] => {
    let found = catalogsByLanguage.get(language);
    if (found === undefined) {
      found = catalogsOf(language).filter((c) => c.language === language);
      catalogsByLanguage.set(language, found);
    }
    return found;
  };
  const translators = new Map<string, Translator>();
  const translator = (language: string, majors: readonly number[]): Translator => {
    const key = `${language}/${majors.join(',')}`;
    let found = translators.get(key);
    if (found === undefined) {
      found = new Translator(catalogs(language).filter((c) => majors.includes(c.major)));
      translators.set(key, found);
    }
    return found;
  };
  return {
    detect: detector,
    translatorFor: (language, lines) => {
      const majors = [...new Set(catalogs(language).map((c) => c.major))];
      return translator(language, likeliestMajors(majors.map((m) => ({ major: m, translator: translator(language, [m]) })), lines));
    },
  };
}

/**
 * A live server's language: its lc_messages read with the catalog of its own installation
 * (`<sharedir>/locale`, Debian's /usr/share/locale), falling back to the shipped catalog of the
 * same language and major.
 */
export function serverLanguage(lcMessages: string, major: number, localeDir: string, catalogsDir?: string): LanguageChoice {
  if (ENGLISH.test(lcMessages.trim()) || lcMessages.trim() === '') return { setting: undefined, problem: null };
  let installedProblem: string;
  try {
    const installed = readInstalledCatalog(localeDir, lcMessages, major);
    if (installed === null) return { setting: undefined, problem: null };
    return { setting: { translator: new Translator([installed]) }, problem: null };
  } catch (error) {
    installedProblem = (error as Error).message;
  }
  for (const language of catalogLanguages(lcMessages) ?? []) {
    const shipped = readShippedCatalogs(language, catalogsDir).filter((c) => c.major === major);
    if (shipped.length > 0) return { setting: { translator: new Translator(shipped) }, problem: null };
  }
  return { setting: undefined, problem: noCatalog(`lc_messages "${lcMessages}" of PostgreSQL ${major}`, installedProblem) };
}

/**
 * The major whose catalog reads the most of `lines`, or the majors that read as many (their
 * messages then tried together; a major that reads fewer lines is not the log's). One major's
 * catalog is the exact one: merged, a text two majors translate alike but print differently in
 * English has two readings, and is left unread (unless the classifier reads both alike:
 * MessageSpec.renames).
 */
function likeliestMajors(candidates: ReadonlyArray<{ major: number; translator: Translator }>, lines: readonly string[]): number[] {
  if (candidates.length === 1) return candidates.map((c) => c.major);
  let best: { majors: number[]; read: number } = { majors: [], read: -1 };
  for (const { major, translator } of candidates) {
    let read = 0;
    for (const line of lines) {
      // A jsonlog record holds a whole report: each of its lines counts, as stderr's do.
      for (const text of (readLine(line).text ?? line).split('\n')) {
        const trimmed = text.trim();
        if (translator.translateMessage(trimmed) !== trimmed || translator.translateLine(trimmed, 'report') !== null) read++;
      }
    }
    if (read > best.read) best = { majors: [major], read };
    else if (read === best.read) best.majors.push(major);
  }
  return best.majors;
}

function noCatalog(what: string, why: string): string {
  return `no message catalog for ${what} (${why}): its log lines are read as English, so most count as not understood`;
}
