/**
 * A catalog's translated messages printed as a server would print them: each translated form of
 * every message the classifiers read (src/parsers/lang/messages.ts) rendered with sample values,
 * beside the English line the same values give. What the translator must read back exactly.
 */
import type { Catalog } from '../../src/parsers/lang/catalog.js';
import { CONTEXT_LINES, DETAIL_LINES, MESSAGES, REPORT_LINES, SLOT_MESSAGES, type MessageSpec, type Slot } from '../../src/parsers/lang/messages.js';
import { formatInteger, joinFormats, parseFormat, type Directive, type ParsedFormat } from '../../src/parsers/lang/printf-format.js';

export type SampleRole = 'message' | 'report' | 'detail' | 'context';

export interface SampleLine {
  role: SampleRole;
  msgid: string;
  translated: string;
  english: string;
}

/** The slot message a sample uses, with its own sample values. */
const SLOT_SAMPLES: Readonly<Record<Slot, string>> = {
  lock_tag: 'transaction %u',
  conflict_reason: 'recovery conflict on lock',
  process_name: 'server process',
  rusage: 'CPU: user: %d.%02d s, system: %d.%02d s, elapsed: %d.%02d s',
  signal_name: 'Killed',
};

/** One sample value per argument index: distinct, so a swapped pair shows. */
function sampleValue(d: Directive, arg: number, plural: boolean): string {
  if (plural) return '1';
  switch (d.conversion) {
    case 'd': case 'i': case 'u': return String(4711 + arg * 13);
    case 'x': return (0x1a2b + arg).toString(16);
    case 'X': return (0x1a2b + arg).toString(16).toUpperCase();
    case 's': return ['appdb', 'public', 'orders', 'spare'][arg % 4] as string;
    default: return (12.5 + arg).toFixed(d.precision ?? 6);
  }
}

function print(format: ParsedFormat, values: readonly string[]): string {
  let out = format.literals[0] as string;
  format.directives.forEach((d, i) => {
    const value = values[d.arg] as string;
    out += ('diu'.includes(d.conversion) ? formatInteger(value, d) : value) + (format.literals[i + 1] as string);
  });
  return out;
}

/** A catalog text printed with `values` (by English argument index), as the server prints it. */
export function printMessage(format: string, values: readonly string[]): string {
  return print(parseFormat(format), values);
}

const stripNewline = (text: string): string => (text.endsWith('\n') ? text.slice(0, -1) : text);

/** English and translated text of a slot (the English one when the catalog leaves it untranslated, as gettext does). */
function slotSample(catalog: Catalog, slot: Slot): { english: string; translated: string } {
  const id = SLOT_SAMPLES[slot];
  const spec = SLOT_MESSAGES[slot].find((s) => s.id === id) as MessageSpec;
  const translated = slot === 'signal_name' ? catalog.signals[id] ?? id : catalog.messages[id]?.[0] ?? id;
  const english = parseFormat(spec.id);
  const values = english.directives.map((d) => sampleValue(d, d.arg, false));
  return { english: print(english, values), translated: print(parseFormat(translated), values) };
}

function render(catalog: Catalog, role: SampleRole, spec: MessageSpec, ids: readonly string[], forms: readonly string[]): SampleLine[] {
  const englishParts = ids.map((id) => parseFormat(stripNewline(id)));
  const english = joinFormats(englishParts);
  const countArg = spec.plural === undefined ? null : spec.count?.arg ?? english.directives.find((d) => 'diu'.includes(d.conversion))?.arg ?? null;
  const values: string[] = [];
  const translatedValues: string[] = [];
  for (const d of english.directives) {
    if (values[d.arg] !== undefined) continue;
    const slot = spec.slots?.[d.arg];
    if (slot !== undefined) {
      const sample = slotSample(catalog, slot);
      values[d.arg] = sample.english;
      translatedValues[d.arg] = sample.translated;
    } else {
      values[d.arg] = sampleValue(d, d.arg, d.arg === countArg);
      translatedValues[d.arg] = values[d.arg] as string;
    }
  }
  const englishText = print(english, values);
  // The singular form is the one n = 1 takes in every language PostgreSQL ships.
  const translated = print(joinFormats(forms.map((f) => parseFormat(stripNewline(f)))), translatedValues);
  return [{ role, msgid: ids.join(''), translated, english: englishText }];
}


/** Every translated message of `catalog` the classifiers read, as printed (singular forms; unparsable msgstrs left out). */
export function sampleLines(catalog: Catalog): SampleLine[] {
  const out: SampleLine[] = [];
  const add = (role: SampleRole, spec: MessageSpec, ids: readonly string[], forms: readonly string[] | undefined): void => {
    if (forms === undefined) return;
    try {
      out.push(...render(catalog, role, spec, ids, forms));
    } catch {
      // a msgstr that is no readable printf format: the translator skips it too
    }
  };
  for (const spec of MESSAGES) add('message', spec, [spec.id], catalog.messages[spec.id]?.slice(0, 1));
  for (const spec of DETAIL_LINES) add('detail', spec, [spec.id], catalog.messages[spec.id]?.slice(0, 1));
  for (const spec of CONTEXT_LINES) add('context', spec, [spec.id], catalog.messages[spec.id]?.slice(0, 1));
  for (const line of REPORT_LINES) {
    if ('pieces' in line) {
      const forms = line.pieces.map((p) => catalog.messages[p.id]?.[0] ?? p.id);
      if (forms.some((f, i) => f !== line.pieces[i]?.id)) add('report', { id: line.pieces.map((p) => p.id).join('') }, line.pieces.map((p) => p.id), forms);
    } else add('report', line, [line.id], catalog.messages[line.id]?.slice(0, 1));
  }
  return out;
}
