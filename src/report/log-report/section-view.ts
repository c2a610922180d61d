/**
 * Any section's result (section.ts: plain JSON) as what a compact report prints: facts (its
 * numbers and small objects) and tables (its ranked lists), so the incident report shows every
 * registered section without knowing it. Per-minute histograms are left to the JSON and the
 * charts: a week of minutes is not a table. Pure.
 */

export interface SectionTable {
  title: string;
  columns: string[];
  rows: string[][];
}

export interface SectionView {
  key: string;
  title: string;
  facts: Array<[string, string]>;
  tables: SectionTable[];
  /** Lists left out of the tables (per-minute rows), with their length. */
  notShown: Array<[string, number]>;
}

/** Longer cells (a statement's text) are cut here, with an ellipsis: the JSON keeps them whole. */
const MAX_CELL_CHARS = 160;
/** Names listed in one cell (a fingerprint's databases, users). */
const MAX_NAMES_IN_CELL = 3;

/** Every section of a report (section key to result), in its order. */
export function sectionViews(sections: Record<string, unknown>): SectionView[] {
  return Object.entries(sections).map(([key, result]) => sectionView(key, result));
}

export function sectionView(key: string, result: unknown): SectionView {
  const view: SectionView = { key, title: titleOf(key), facts: [], tables: [], notShown: [] };
  if (!isRecord(result)) {
    view.facts.push([key, cellText(result)]);
    return view;
  }
  for (const [field, value] of Object.entries(result)) {
    if (Array.isArray(value)) {
      const rows = value.filter(isRecord);
      if (rows.length > 0 && 'minute' in rows[0]!) view.notShown.push([field, rows.length]);
      else view.tables.push(tableOf(field, rows));
    } else {
      view.facts.push([field.replace(/_/g, ' '), cellText(value)]);
    }
  }
  return view;
}

function tableOf(field: string, rows: Array<Record<string, unknown>>): SectionTable {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return { title: field.replace(/_/g, ' '), columns, rows: rows.map((row) => columns.map((column) => cellText(row[column]))) };
}

/** A value on one line: numbers rounded to 3 decimals, name/count lists as `name (n)`, objects as `key value`. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(Math.round(value * 1000) / 1000);
  if (typeof value === 'string') return cut(value.replace(/\s+/g, ' '));
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_NAMES_IN_CELL).map((item) => (isRecord(item) && 'name' in item && 'count' in item ? `${cellText(item.name)} (${cellText(item.count)})` : cellText(item)));
    return cut([...shown, ...(value.length > MAX_NAMES_IN_CELL ? [`+${value.length - MAX_NAMES_IN_CELL}`] : [])].join(', '));
  }
  if (isRecord(value)) return cut(Object.entries(value).map(([k, v]) => `${k.replace(/_/g, ' ')} ${cellText(v)}`).join(', '));
  return String(value);
}

function cut(text: string): string {
  return text.length > MAX_CELL_CHARS ? `${text.slice(0, MAX_CELL_CHARS - 1)}…` : text;
}

function titleOf(key: string): string {
  const words = key.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
