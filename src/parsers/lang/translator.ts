/**
 * Reads a log written in another language back into the English the classifiers know: from a
 * catalog's translations of the messages in ./messages.ts, one inverse matcher per translated
 * form, yielding the line the English server would have printed (the same values, in the English
 * argument order, through the English format). The framers get the translated severity words and
 * field labels; the classifiers get English entries and run unchanged.
 *
 * Exactness before coverage: a line is translated only when exactly one English text reads it.
 * Every matcher is run twice, with lazy and with greedy quantifiers; when the two readings give
 * different English (two values run together, a name holding the text around it), or two
 * messages read the same line differently, the line is left as written (a generic event), never
 * misread. A form whose values cannot be printed back exactly (a translator's other precision, a
 * dropped argument) is not compiled, and is listed in `skipped`.
 */
import type { LogEntry } from '../../domain/log-entry.js';
import { describeCatalogs, type Catalog } from './catalog.js';
import {
  CONTEXT_LINES, CURSOR_SUFFIX, DETAIL_LINES, FIELD_LABELS, MESSAGES, REPORT_LINES, SEVERITY_WORDS, SLOT_MESSAGES,
  type LineSpec, type MessageSpec, type Slot,
} from './messages.js';
import { argCount, conversionBetween, formatInteger, formatSource, joinFormats, parseFormat, type Directive, type ParsedFormat } from './printf-format.js';

type Role = 'message' | 'report' | 'detail' | 'context';

/** How the English text of a matched translation is printed. */
interface EnglishForms {
  singular: ParsedFormat;
  plural: ParsedFormat | null;
  count: { arg: number; list: boolean } | null;
}

interface Matcher {
  /** The translation's text before its first directive: a line not starting with it is skipped. */
  head: string;
  lazy: RegExp;
  greedy: RegExp;
  /** English argument index of each capture group. */
  groupArgs: number[];
  /** Per English argument: how its text is carried over, and the translated directive. */
  carry: Array<{ how: 'copy' | 'integer'; from: Directive } | undefined>;
  english: EnglishForms;
  slots: Readonly<Record<number, Slot>>;
  msgid: string;
  /** Matchers of one message, or of messages one renamed (MessageSpec.renames), share it. */
  sameFields: string;
  /** A form of a message a derived catalog left out (Catalog.guards): a line it reads is left unread. */
  guard: boolean;
}

/** Candidates by the first character of their head; heads that are empty go to `any`. */
class MatcherIndex {
  private readonly byFirst = new Map<number, Matcher[]>();
  private readonly any: Matcher[] = [];
  size = 0;

  add(m: Matcher): void {
    this.size++;
    if (m.head === '') this.any.push(m);
    else {
      const key = m.head.charCodeAt(0);
      const list = this.byFirst.get(key);
      if (list) list.push(m);
      else this.byFirst.set(key, [m]);
    }
  }

  candidates(text: string): readonly Matcher[] | null {
    const first = this.byFirst.get(text.charCodeAt(0));
    if (first === undefined) return this.any.length === 0 ? null : this.any;
    return this.any.length === 0 ? first : [...first, ...this.any];
  }
}

export interface SkippedForm {
  msgid: string;
  msgstr: string;
  why: string;
}

export interface CompiledLanguage {
  language: string;
  majors: number[];
  /** Line tokens after log_line_prefix (`FEHLER:  `, `ZUSAMMENHANG:  `) -> English word (`ERROR`, `CONTEXT`); English ones included. */
  lineWords: ReadonlyMap<string, string>;
  /** Severity words of csvlog/jsonlog (`FEHLER`) -> English. */
  severityWords: ReadonlyMap<string, string>;
  skipped: SkippedForm[];
}

const EMPTY: Readonly<Record<number, Slot>> = Object.freeze({});

export class Translator implements CompiledLanguage {
  readonly language: string;
  readonly majors: number[];
  /** The catalogs read, for the operator: `the PostgreSQL 14 message catalog derived from 13 and 15`. */
  readonly catalogs: string;
  readonly lineWords = new Map<string, string>();
  readonly severityWords = new Map<string, string>();
  readonly skipped: SkippedForm[] = [];
  private readonly roles: Record<Role, MatcherIndex> = {
    message: new MatcherIndex(), report: new MatcherIndex(), detail: new MatcherIndex(), context: new MatcherIndex(),
  };
  private readonly slots = new Map<Slot, MatcherIndex>();
  private cursorSuffix: RegExp | null = null;
  /** Set while a catalog's guards are compiled. */
  private compilingGuards = false;

  /** Catalogs of one language (several majors may be merged: their messages are tried together). */
  /** The keys of lineWords, for the prefix regex. */
  get lineWordList(): readonly string[] {
    this.wordList ??= [...this.lineWords.keys()];
    return this.wordList;
  }

  private wordList: readonly string[] | null = null;

  constructor(catalogs: readonly Catalog[]) {
    const first = catalogs[0];
    if (first === undefined) throw new Error('Translator: no catalog given');
    if (catalogs.some((c) => c.language !== first.language)) throw new Error(`Translator: catalogs of several languages (${catalogs.map((c) => c.language).join(', ')})`);
    this.language = first.language;
    this.majors = [...new Set(catalogs.map((c) => c.major))].sort((a, b) => a - b);
    this.catalogs = describeCatalogs([...catalogs].sort((a, b) => a.major - b.major));
    for (const word of SEVERITY_WORDS) {
      this.severityWords.set(word, word);
      this.lineWords.set(`${word}:  `, word);
    }
    for (const [id, word] of Object.entries(FIELD_LABELS)) this.lineWords.set(id.slice(0, id.indexOf('%') < 0 ? id.length : id.indexOf('%')), word);
    for (const catalog of catalogs) this.addCatalog(catalog);
  }

  private addCatalog(catalog: Catalog): void {
    const t = catalog.messages;
    for (const word of SEVERITY_WORDS) {
      const translated = t[word]?.[0];
      if (translated === undefined) continue;
      this.severityWords.set(translated, word);
      this.lineWords.set(`${translated}:  `, word);
    }
    for (const [id, word] of Object.entries(FIELD_LABELS)) {
      const translated = t[id]?.[0];
      const cut = translated?.indexOf('%') ?? -1;
      if (translated !== undefined) this.lineWords.set(cut < 0 ? translated : translated.slice(0, cut), word);
    }
    const suffix = t[CURSOR_SUFFIX]?.[0];
    if (suffix !== undefined) {
      try {
        const parsed = parseFormat(suffix);
        if (parsed.directives.length === 1) this.cursorSuffix = new RegExp(`${formatSource(parsed, false)}$`);
      } catch {
        // an unreadable suffix only means the suffix stays
      }
    }
    const lookup = (id: string): string[] | undefined => t[id];
    for (const spec of MESSAGES) this.compile('message', spec, lookup);
    for (const spec of DETAIL_LINES) this.compile('detail', spec, lookup);
    for (const spec of CONTEXT_LINES) this.compile('context', spec, lookup);
    for (const line of REPORT_LINES) this.compileLine(line, lookup);
    if (catalog.guards !== undefined) this.compileGuards(catalog.guards, lookup);
    for (const [slot, specs] of Object.entries(SLOT_MESSAGES) as [Slot, readonly MessageSpec[]][]) {
      let index = this.slots.get(slot);
      if (index === undefined) {
        index = new MatcherIndex();
        this.slots.set(slot, index);
        // gettext prints the msgid itself when a catalog has no translation: every slot text
        // may come in English too.
        for (const spec of specs) this.addForms(index, spec, [spec.id], [spec.id]);
      }
      const forms = slot === 'signal_name' ? (id: string) => (catalog.signals[id] === undefined ? undefined : [catalog.signals[id]]) : lookup;
      for (const spec of specs) {
        const translated = forms(spec.id);
        if (translated !== undefined) this.addForms(index, spec, [spec.id], translated);
      }
    }
  }

  /**
   * The forms a derived catalog's neighbours print for the messages it left out: the middle major
   * may print one of them, alike to a message kept (Italian 15 prints the aggressive and the
   * anti-wraparound vacuum alike; 13 has no translation of the latter), so a line they read is
   * ambiguous and left unread.
   */
  private compileGuards(guards: Record<string, string[]>, lookup: (id: string) => string[] | undefined): void {
    this.compilingGuards = true;
    const guard = (id: string): string[] | undefined => guards[id];
    for (const spec of MESSAGES) this.compile('message', spec, guard);
    for (const spec of DETAIL_LINES) this.compile('detail', spec, guard);
    for (const spec of CONTEXT_LINES) this.compile('context', spec, guard);
    for (const line of REPORT_LINES) {
      if (!('pieces' in line)) this.compile('report', line, guard);
      else if (line.pieces.some((piece) => guards[piece.id] !== undefined)) this.compileLine(line, (id) => guards[id] ?? lookup(id));
    }
    for (const [slot, specs] of Object.entries(SLOT_MESSAGES) as [Slot, readonly MessageSpec[]][]) {
      for (const spec of specs) {
        const forms = guards[spec.id];
        if (forms !== undefined) this.addForms(this.slots.get(slot) as MatcherIndex, spec, [spec.id], forms);
      }
    }
    this.compilingGuards = false;
  }

  private compile(role: Role, spec: MessageSpec, lookup: (id: string) => string[] | undefined): void {
    const translated = lookup(spec.id);
    if (translated !== undefined) this.addForms(this.roles[role], spec, [spec.id], translated);
  }

  private compileLine(line: LineSpec, lookup: (id: string) => string[] | undefined): void {
    if (!('pieces' in line)) return this.compile('report', line, lookup);
    const forms = line.pieces.map((piece) => lookup(piece.id)?.[0] ?? piece.id);
    if (forms.every((form, i) => form === line.pieces[i]?.id)) return; // nothing translated
    this.addForms(this.roles.report, { id: line.pieces.map((p) => p.id).join('') }, line.pieces.map((p) => p.id), forms, true);
  }

  /**
   * Adds a matcher per translated form. `ids` are the English pieces of the line (one, or the
   * `_()` pieces printed in a row); with `joined`, `forms` are those pieces' translations, else the
   * msgstr forms of one (plural) message.
   */
  private addForms(index: MatcherIndex, spec: MessageSpec, ids: readonly string[], forms: readonly string[], joined = false): void {
    try {
      const english = joinFormats(ids.map(parseLine));
      const plural = spec.plural === undefined ? null : parseLine(spec.plural);
      const englishForms: EnglishForms = {
        singular: english,
        plural,
        count: plural === null ? null : { arg: spec.count?.arg ?? firstIntegerArg(english), list: spec.count?.list === true },
      };
      const translations = joined ? [joinFormats(forms.map(parseLine))] : forms.map(parseLine);
      translations.forEach((translation, i) => {
        const why = this.addMatcher(index, spec, englishForms, translation);
        if (why !== null) this.skipped.push({ msgid: spec.id, msgstr: joined ? forms.join('') : (forms[i] as string), why });
      });
    } catch (error) {
      this.skipped.push({ msgid: spec.id, msgstr: forms.join(' | '), why: (error as Error).message });
    }
  }

  /** Null when added, else why the form cannot be read back exactly. */
  private addMatcher(index: MatcherIndex, spec: MessageSpec, english: EnglishForms, translation: ParsedFormat): string | null {
    const englishArgs = argCount(english.singular);
    if (argCount(translation) > englishArgs) return 'the translation has more arguments than the English text';
    const carry: Matcher['carry'] = [];
    const used = [english.singular, ...(english.plural ? [english.plural] : [])];
    for (const form of used) {
      for (const to of form.directives) {
        const from = translation.directives.find((d) => d.arg === to.arg);
        if (from === undefined) return `argument ${to.arg + 1} is not printed by the translation`;
        const how = conversionBetween(from, to);
        if (how === null) return `argument ${to.arg + 1} is printed as ${from.spec}, the English text prints ${to.spec}`;
        carry[to.arg] = { how, from };
      }
    }
    if (english.count !== null && translation.directives.every((d) => d.arg !== english.count?.arg)) return 'the plural count is not printed';
    index.add({
      head: translation.literals[0] as string,
      lazy: new RegExp(`^${formatSource(translation, true)}$`),
      greedy: new RegExp(`^${formatSource(translation, false)}$`),
      groupArgs: translation.directives.map((d) => d.arg),
      carry,
      english,
      slots: spec.slots ?? EMPTY,
      msgid: spec.id,
      sameFields: spec.renames ?? spec.id,
      guard: this.compilingGuards,
    });
    return null;
  }

  /** How many translated forms were compiled, per role. */
  counts(): Record<Role | 'slots', number> {
    let slots = 0;
    for (const index of this.slots.values()) slots += index.size;
    return { message: this.roles.message.size, report: this.roles.report.size, detail: this.roles.detail.size, context: this.roles.context.size, slots };
  }

  /** The English text of one translated line of `role`; null when no message reads it exactly. */
  translateLine(text: string, role: Role): string | null {
    return this.read(this.roles[role], text);
  }

  /**
   * The entry as the English server would have written it (message, DETAIL and CONTEXT; the
   * level is English already, from the framer), or the same object when nothing was translated.
   */
  translateEntry(entry: LogEntry): LogEntry {
    const message = this.translateMessage(entry.message);
    const detail = entry.detail === null ? null : this.translateLines(entry.detail, 'detail');
    const context = entry.context === null ? null : this.translateLines(entry.context, 'context');
    if (message === entry.message && detail === entry.detail && context === entry.context) return entry;
    return { ...entry, message, detail, context };
  }

  /** A primary message (a report's lines, a cursor position included); the same text when nothing reads it. */
  translateMessage(message: string): string {
    const whole = this.read(this.roles.message, message);
    if (whole !== null) return whole;
    if (this.cursorSuffix !== null) {
      const suffix = this.cursorSuffix.exec(message);
      const head = suffix === null ? null : this.read(this.roles.message, message.slice(0, suffix.index));
      if (suffix !== null && head !== null) return `${head}${CURSOR_SUFFIX.replace('%d', suffix[1] as string)}`;
    }
    // A multi-line report: its header decides, then each later line is read on its own.
    const end = message.indexOf('\n');
    const header = this.read(this.roles.report, end === -1 ? message : message.slice(0, end));
    if (header === null) return message;
    return end === -1 ? header : `${header}\n${this.translateLines(message.slice(end + 1), 'report')}`;
  }

  /** Each line read on its own; lines no message reads (a query's text, say) stay as written. */
  private translateLines(text: string, role: Role): string {
    if (text.indexOf('\n') === -1) return this.read(this.roles[role], text) ?? text;
    return text.split('\n').map((line) => {
      const start = line.length - line.trimStart().length;
      const english = this.read(this.roles[role], start === 0 ? line : line.slice(start));
      return english === null ? line : line.slice(0, start) + english;
    }).join('\n');
  }

  private read(index: MatcherIndex, text: string): string | null {
    const candidates = index.candidates(text);
    if (candidates === null) return null;
    let found: string | null = null;
    let foundFields: string | null = null;
    // A guard's reading only makes a line ambiguous; alone it is no reading.
    let kept = false;
    for (let i = 0; i < candidates.length; i++) {
      const m = candidates[i] as Matcher;
      if (!text.startsWith(m.head)) continue;
      const lazy = m.lazy.exec(text);
      if (lazy === null) continue;
      const english = this.render(m, lazy);
      // The greedy reading must print the same English: else the split is ambiguous. A reading
      // whose slot text is no known message is no reading (both null: another candidate may fit).
      const greedy = m.groupArgs.length === 0 ? english : this.render(m, m.greedy.exec(text) as RegExpExecArray);
      if (english !== greedy) return null;
      if (english === null) continue;
      if (found !== null && found !== english) {
        // Another major's name for the same fields: the first reading stands.
        if (foundFields !== m.sameFields) return null;
      } else {
        found = english;
        foundFields = m.sameFields;
      }
      kept ||= !m.guard;
    }
    return kept ? found : null;
  }

  private render(m: Matcher, groups: RegExpExecArray): string | null {
    const values: string[] = [];
    for (let g = 0; g < m.groupArgs.length; g++) {
      const arg = m.groupArgs[g] as number;
      if (values[arg] !== undefined) continue;
      let value = groups[g + 1] as string;
      const slot = m.slots[arg];
      if (slot !== undefined) {
        const english = this.read(this.slots.get(slot) as MatcherIndex, value);
        if (english === null) return null;
        value = english;
      }
      values[arg] = value;
    }
    const e = m.english;
    let format = e.singular;
    if (e.plural !== null && e.count !== null) {
      const text = values[e.count.arg] ?? '';
      const n = e.count.list ? text.split(',').length : Number(text);
      if (n !== 1) format = e.plural;
    }
    let out = format.literals[0] as string;
    for (let i = 0; i < format.directives.length; i++) {
      const d = format.directives[i] as Directive;
      const carried = m.carry[d.arg];
      const value = values[d.arg] as string;
      out += (carried?.how === 'integer' ? formatInteger(value, d) : value) + (format.literals[i + 1] as string);
    }
    return out;
  }
}

/** A catalog line: without the trailing newline a report piece ends with. */
function parseLine(format: string): ParsedFormat {
  return parseFormat(format.endsWith('\n') ? format.slice(0, -1) : format);
}


function firstIntegerArg(format: ParsedFormat): number {
  const d = format.directives.find((x) => 'diu'.includes(x.conversion));
  if (d === undefined) throw new Error('a plural message without an integer argument needs `count`');
  return d.arg;
}
