/**
 * A catalog for a major no package was at hand for (14, 16), derived from its two neighbours:
 * a message whose translation (every plural form) is the same in both is taken as the middle
 * major's; a message they translate differently, or that only one of them has, is left out, so
 * its lines count as not understood rather than read with a guess. The forms the neighbours print
 * for those left out are kept as guards: the middle major may print one of them alike to a
 * message kept, and such a line must stay unread (Catalog.guards). The counts are what
 * scripts/build-catalogs.ts prints and the catalog keeps (`derived`).
 */
import type { Catalog } from './catalog.js';

export interface Derivation {
  catalog: Catalog;
  /** Messages both neighbours translate alike (kept). */
  agree: number;
  /** Messages both translate, differently (left out). */
  differ: number;
  /** Messages only one neighbour translates (left out). */
  onlyOne: number;
}

export function deriveCatalog(lower: Catalog, upper: Catalog, major: number): Derivation {
  if (lower.language !== upper.language) throw new Error(`deriveCatalog: ${lower.language} and ${upper.language} are different languages`);
  if (!(lower.major < major && major < upper.major)) throw new Error(`deriveCatalog: ${major} does not lie between ${lower.major} and ${upper.major}`);
  const messages: Record<string, string[]> = {};
  const guards: Record<string, string[]> = {};
  let differ = 0;
  let onlyOne = 0;
  for (const id of new Set([...Object.keys(lower.messages), ...Object.keys(upper.messages)])) {
    const low = lower.messages[id];
    const high = upper.messages[id];
    if (low !== undefined && high !== undefined && sameForms(low, high)) {
      messages[id] = low;
      continue;
    }
    if (low === undefined || high === undefined) onlyOne++;
    else differ++;
    guards[id] = [...new Set([...(low ?? []), ...(high ?? [])])];
  }
  const signals = Object.fromEntries(Object.entries(lower.signals).filter(([id, name]) => upper.signals[id] === name));
  const agree = Object.keys(messages).length;
  return {
    catalog: {
      language: lower.language,
      major,
      source: `derived from the PostgreSQL ${lower.major} and ${upper.major} catalogs (${lower.language}): the ${agree} messages both translate alike`,
      derived: { from: [lower.major, upper.major], agree, differ, only_one: onlyOne },
      messages,
      guards,
      signals,
    },
    agree,
    differ,
    onlyOne,
  };
}

function sameForms(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((form, i) => form === b[i]);
}
