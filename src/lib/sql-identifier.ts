/**
 * An identifier as it must be written in SQL a person copies (a hint, an alert's advice): bare
 * when PostgreSQL would fold it to itself, double-quoted otherwise. Reserved words are not
 * checked: a role or an index called `order` gets a statement that needs its quotes added.
 */
export function sqlIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}
