/**
 * One poll connection as it is made and used: its client config for a database
 * (databaseClientConfig), and how a query goes out on it (a named prepared statement, int8 as a
 * number). How many connections there are, to which database, and when they close is
 * connection-budget.ts'; when and where to query is the scheduler's (poll-scheduler.ts).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { pgClientConfig } from '../lib/pg-connection.js';

/**
 * The target's connection, to database db (null: as configured). The database is a field of its
 * own, never put into a URL: names with any character (`:`, `/`, `?`, quotes, spaces) reach their
 * database. A dsn is read by pgClientConfig (which pins search_path); a config without one
 * already was (clientConfigFor).
 */
export function databaseClientConfig(connection: string | pg.ClientConfig, db: string | null): pg.ClientConfig {
  const { connectionString, ...fields } = typeof connection === 'string' ? { connectionString: connection } : connection;
  const config = connectionString === undefined ? fields : pgClientConfig(connectionString, fields);
  return db === null ? config : { ...config, database: db };
}

const INT8_OID = 20;

/** An int8 as a number when it is one exactly (every counter and size below 2^53), else its text. */
function parseInt8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

/**
 * node-postgres returns int8 as text, after a regex test of every value; a full poll cycle reads
 * ~40,000 of them, and the collectors turn them into numbers anyway (row.ts): this parser saves
 * about a fifth of the client's CPU for pg_stat_user_tables' rows.
 */
export const POLL_TYPES = {
  getTypeParser: (oid: number, format?: 'text' | 'binary'): ((value: string) => unknown) =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format),
};

const statementNames = new Map<string, string>();

/**
 * Every query runs as a named prepared statement (node-postgres prepares it once per
 * connection): planning the catalog joins cost more server CPU than executing them. The name is
 * a hash of the text, so one text always has one name. (Needs a direct connection or a pooler in
 * session mode.)
 */
export function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `pgvigil_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return name;
}
