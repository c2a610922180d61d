/**
 * Statements that rewrite or drop a table's files, as log_statement logs them
 * (`statement: <sql>`, or `execute <name>: <sql>` for the extended protocol; postgres.c, 13-19):
 * DROP TABLE, TRUNCATE, REPACK (19), VACUUM FULL and CLUSTER. Only the start of the statement is
 * read (keywords and the relation names that follow); anything else is left to generic.
 * `duration: ... statement: ...` lines are not looked at: they are the bulk of a busy log.
 */
import type { DdlCommand, DdlDetails } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { SqlTokens } from './sql-tokens.js';

/**
 * `message` is `statement: <sql>` or `execute <name>: <sql>` with the SQL from `sqlStart`; null
 * when the SQL is not one of the commands above.
 */
export function classifyDdl(message: string, sqlStart: number): Classification | null {
  if (sqlStart < 2 || !mayBeDdl(message.charCodeAt(sqlStart))) return null;
  const details = parseDdl(new SqlTokens(message.slice(sqlStart)));
  return details === null ? null : { kind: 'ddl', details };
}

/**
 * One character test before any parsing: the commands start with c, d, r, t or v in either case;
 * a statement may also open with a comment or white space. Most logged statements (SELECT,
 * INSERT, UPDATE, BEGIN...) stop here.
 */
function mayBeDdl(code: number): boolean {
  switch (code | 0x20) {
    case 0x63: // c C
    case 0x64: // d D
    case 0x72: // r R
    case 0x74: // t T
    case 0x76: // v V
    case 0x2f: // '/' of a comment
    case 0x2d: // '-' of a comment ('\r' too)
    case 0x20: // space
    case 0x29: // TAB
    case 0x2a: // newline
      return true;
    default:
      return false;
  }
}

function parseDdl(t: SqlTokens): DdlDetails | null {
  switch (t.keyword()) {
    case 'drop':
      if (t.keyword() !== 'table') return null;
      t.skipKeywords('if', 'exists');
      return result('DROP TABLE', t.relationList(), false);
    case 'truncate':
      t.skipKeywords('table');
      return result('TRUNCATE', t.relationList(), false);
    case 'repack': {
      // PG 19+: REPACK [(options)] [table [USING INDEX ...]]
      const options = t.optionList();
      return result('REPACK', t.relationList(), isOn(options, 'concurrently'));
    }
    case 'vacuum': {
      const options = t.optionList();
      const full = isOn(options, 'full') || t.skipKeywords('full') > 0;
      if (!full) return null;
      t.skipKeywords('freeze', 'verbose', 'analyze', 'analyse');
      return result('VACUUM FULL', t.relationList(), false);
    }
    case 'cluster':
      t.optionList();
      t.skipKeywords('verbose');
      return result('CLUSTER', t.relationList(), false);
    default:
      return null;
  }
}

/** `(full, verbose false)` -> true for `full`; an option named without a value is on. */
function isOn(options: Map<string, string>, name: string): boolean {
  const value = options.get(name);
  return value !== undefined && !['false', 'off', '0'].includes(value);
}

function result(command: DdlCommand, relations: string[], concurrently: boolean): DdlDetails {
  return { command, relation: relations[0] ?? null, relations, concurrently };
}
