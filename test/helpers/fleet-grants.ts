/** The roles of docs/fleet.md for fleet tests: its GRANT block, as an operator would paste it. */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export function documentedGrants(): string {
  const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/fleet.md'), 'utf8');
  const block = /<!-- fleet-grants -->\n```sql\n([\s\S]*?)```\n<!-- \/fleet-grants -->/.exec(doc);
  if (!block) throw new Error('docs/fleet.md has no fleet-grants block');
  return block[1]!;
}
