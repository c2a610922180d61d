/**
 * Whether two part templates (literal text with `{int}` and `{dec}` slots, see PartSpec) can
 * match the same text. A line's regex guards each part against the templates before it in its
 * table (the first template that matches a part reads it); a guard against a template that can
 * never match the same part is work for nothing on every line, and real tables have none.
 */

/** A template as items: a character code (>= 0), or a slot: INT (`\d+`) or DEC (`[\d.]+`). */
export type TemplateItem = number;
const INT = -1;
const DEC = -2;

export function templateItems(template: string): TemplateItem[] {
  const items: TemplateItem[] = [];
  for (const piece of template.split(/(\{int\}|\{dec\})/)) {
    if (piece === '{int}') items.push(INT);
    else if (piece === '{dec}') items.push(DEC);
    else for (let i = 0; i < piece.length; i++) items.push(piece.charCodeAt(i));
  }
  return items;
}

function slotTakes(slot: TemplateItem, code: number): boolean {
  return (code >= 48 && code <= 57) || (slot === DEC && code === 46);
}

/** Some character matches both items (two slots share the digits). */
function compatible(a: TemplateItem, b: TemplateItem): boolean {
  if (a >= 0 && b >= 0) return a === b;
  if (a >= 0) return slotTakes(b, a);
  if (b >= 0) return slotTakes(a, b);
  return true;
}

/**
 * The moves from state `p` of a template's automaton (p items read): read item p, or, right after
 * a slot, one more character of that slot.
 */
function moves(items: readonly TemplateItem[], p: number): Array<[item: TemplateItem, to: number]> {
  const out: Array<[TemplateItem, number]> = [];
  if (p < items.length) out.push([items[p]!, p + 1]);
  if (p > 0 && items[p - 1]! < 0) out.push([items[p - 1]!, p]);
  return out;
}

/** True when some text matches both templates whole: a search of the product of their automata. */
export function templatesOverlap(a: readonly TemplateItem[], b: readonly TemplateItem[]): boolean {
  const width = b.length + 1;
  const seen = new Set<number>([0]);
  const todo: Array<[number, number]> = [[0, 0]];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    const [p, q] = next;
    if (p === a.length && q === b.length) return true;
    for (const [itemA, toA] of moves(a, p)) {
      for (const [itemB, toB] of moves(b, q)) {
        const key = toA * width + toB;
        if (compatible(itemA, itemB) && !seen.has(key)) {
          seen.add(key);
          todo.push([toA, toB]);
        }
      }
    }
  }
  return false;
}
