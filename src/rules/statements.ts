/**
 * What a logged statement (a STATEMENT line, a crash DETAIL's query) is about, as far as the rules
 * need it: which command that rewrites or drops a table it is, and the table it names. Only the
 * first words are read. Relation names are normalised like the ddl classifier does: quotes
 * removed, unquoted parts lower-cased.
 */

export interface TableCommand {
  /** `DROP TABLE`, `TRUNCATE`, `ALTER TABLE`, `REPACK`, `VACUUM FULL`, `CLUSTER`, `LOCK TABLE`, `CREATE INDEX`... */
  command: string;
  /** The first relation named; null when the statement names none (`REPACK;`). */
  relation: string | null;
  /** REPACK (CONCURRENTLY ...). */
  concurrently: boolean;
}

const NAME = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)`;
const QUALIFIED = `(${NAME}(?:\\s*\\.\\s*${NAME}){0,2})`;

const FORMS: ReadonlyArray<readonly [string, RegExp]> = [
  ['DROP TABLE', new RegExp(`^drop\\s+table\\s+(?:if\\s+exists\\s+)?${QUALIFIED}`, 'i')],
  ['TRUNCATE', new RegExp(`^truncate\\s+(?:table\\s+)?(?:only\\s+)?${QUALIFIED}`, 'i')],
  ['ALTER TABLE', new RegExp(`^alter\\s+table\\s+(?:if\\s+exists\\s+)?(?:only\\s+)?${QUALIFIED}`, 'i')],
  ['DROP INDEX', new RegExp(`^drop\\s+index\\s+(?:concurrently\\s+)?(?:if\\s+exists\\s+)?${QUALIFIED}`, 'i')],
  ['LOCK TABLE', new RegExp(`^lock\\s+(?:table\\s+)?(?:only\\s+)?${QUALIFIED}`, 'i')],
  ['REINDEX', new RegExp(`^reindex\\s+(?:\\([^)]*\\)\\s*)?(?:table|index)\\s+${QUALIFIED}`, 'i')],
  // PG 19+: REPACK [(options)] [table]
  ['REPACK', new RegExp(`^repack(?:\\s*\\(([^)]*)\\))?(?:\\s+${QUALIFIED})?`, 'i')],
  ['VACUUM FULL', new RegExp(`^vacuum\\s*(?:\\([^)]*\\bfull\\b[^)]*\\)|\\s+full\\b(?:\\s+(?:freeze|verbose|analyze|analyse)\\b)*)(?:\\s+${QUALIFIED})?`, 'i')],
  ['CLUSTER', new RegExp(`^cluster(?:\\s*\\([^)]*\\))?(?:\\s+verbose\\b)?(?:\\s+${QUALIFIED})?`, 'i')],
  ['CREATE INDEX', new RegExp(`^create\\s+(?:unique\\s+)?index\\s+(?:concurrently\\s+)?(?:if\\s+not\\s+exists\\s+)?(?:${NAME}\\s+)?on\\s+(?:only\\s+)?${QUALIFIED}`, 'i')],
  ['CREATE TRIGGER', new RegExp(`^create\\s+(?:or\\s+replace\\s+)?(?:constraint\\s+)?trigger\\s+${NAME}\\s+[^;]*?\\bon\\s+${QUALIFIED}`, 'i')],
  ['REFRESH MATERIALIZED VIEW', new RegExp(`^refresh\\s+materialized\\s+view\\s+(?:concurrently\\s+)?${QUALIFIED}`, 'i')],
];

/**
 * Parsed statements: the rules read the same STATEMENT lines at every evaluation (an offline
 * replay evaluates every 5 s of log time). Bounded; cleared when full. The results are frozen,
 * since every caller shares them.
 */
const parsed = new Map<string, TableCommand | null>();
const MAX_PARSED = 10_000;

export function tableCommandOf(statement: string | null): TableCommand | null {
  if (statement === null) return null;
  const known = parsed.get(statement);
  if (known !== undefined) return known;
  const command = parseTableCommand(statement);
  const shared = command === null ? null : Object.freeze(command);
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(statement, shared);
  return shared;
}

function parseTableCommand(statement: string): TableCommand | null {
  const sql = stripLeadingComments(statement);
  for (const [command, pattern] of FORMS) {
    const g = pattern.exec(sql);
    if (!g) continue;
    if (command === 'REPACK') {
      const options = (g[1] ?? '').toLowerCase();
      const concurrently = /\bconcurrently\b(?!\s+(?:false|off|0)\b)/.test(options);
      // `REPACK USING INDEX` (every table with a clustered index) names no table.
      const relation = normaliseRelation(g[2]);
      return { command, relation: relation === 'using' ? null : relation, concurrently };
    }
    return { command, relation: normaliseRelation(g[1]), concurrently: false };
  }
  return null;
}

function stripLeadingComments(sql: string): string {
  let s = sql.trimStart();
  for (;;) {
    if (s.startsWith('--')) s = s.slice(s.indexOf('\n') < 0 ? s.length : s.indexOf('\n') + 1).trimStart();
    else if (s.startsWith('/*')) s = s.slice(s.indexOf('*/') < 0 ? s.length : s.indexOf('*/') + 2).trimStart();
    else return s;
  }
}

function normaliseRelation(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const parts = raw.match(new RegExp(NAME, 'g')) ?? [];
  if (parts.length === 0) return null;
  return parts.map((p) => (p.startsWith('"') ? p.slice(1, -1).replace(/""/g, '"') : p.toLowerCase())).join('.');
}

/** The last part of a possibly qualified name: `shop.public.orders` -> `orders`. */
export function relationName(relation: string): string {
  return relation.slice(relation.lastIndexOf('.') + 1);
}

// DML names its table after these words; DDL goes through tableCommandOf.
const DML = /^\s*(?:with\b[\s\S]*?\)\s*)?(?:update\s+(?:only\s+)?|insert\s+into\s+|delete\s+from\s+(?:only\s+)?|merge\s+into\s+|copy\s+|select\b[\s\S]*?\bfrom\s+(?:only\s+)?)((?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)(?:\s*\.\s*(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*))*)/i;

/** Relations of statements read before, bounded like `parsed`: the same statements come back at every evaluation. */
const relations = new Map<string, string | null>();

/** The table a statement names first (`UPDATE orders ...` -> `orders`, `SELECT ... FROM "Sales".items` -> `Sales.items`); null when none. */
export function statementRelationOf(statement: string | null): string | null {
  if (statement === null) return null;
  const known = relations.get(statement);
  if (known !== undefined) return known;
  const named = tableCommandOf(statement)?.relation ?? DML.exec(statement)?.[1];
  const relation = named
    ? named.split(/\s*\.\s*/).map((p) => (p.startsWith('"') ? p.slice(1, -1).replace(/""/g, '"') : p.toLowerCase())).join('.')
    : null;
  if (relations.size >= MAX_PARSED) relations.clear();
  relations.set(statement, relation);
  return relation;
}
