/**
 * Parses the lock descriptions of DescribeLockTag() (lmgr.c, identical 13-19; the
 * `remote transaction` form is 16+) and the PG 19 CONTEXT `waiting for <mode> on <lock>`.
 */
import type { LockObject, LockObjectType } from '../../domain/index.js';
import { toInt } from './fields.js';

type Fill = (g: RegExpExecArray, o: LockObject) => void;

const FORMS: ReadonlyArray<readonly [RegExp, LockObjectType, Fill]> = [
  [/^relation (\d+) of database (\d+)$/, 'relation', (g, o) => {
    o.relation_oid = toInt(g[1]);
    o.database_oid = toInt(g[2]);
  }],
  [/^tuple \((\d+),(\d+)\) of relation (\d+) of database (\d+)$/, 'tuple', (g, o) => {
    o.block = toInt(g[1]);
    o.offset = toInt(g[2]);
    o.relation_oid = toInt(g[3]);
    o.database_oid = toInt(g[4]);
  }],
  [/^transaction (\d+)$/, 'transactionid', (g, o) => (o.transaction_id = toInt(g[1]))],
  [/^virtual transaction (-?\d+\/\d+)$/, 'virtualxid', (g, o) => (o.virtual_transaction = g[1] ?? null)],
  [/^page (\d+) of relation (\d+) of database (\d+)$/, 'page', (g, o) => {
    o.block = toInt(g[1]);
    o.relation_oid = toInt(g[2]);
    o.database_oid = toInt(g[3]);
  }],
  [/^extension of relation (\d+) of database (\d+)$/, 'extend', (g, o) => {
    o.relation_oid = toInt(g[1]);
    o.database_oid = toInt(g[2]);
  }],
  [/^pg_database\.datfrozenxid of database (\d+)$/, 'frozenid', (g, o) => (o.database_oid = toInt(g[1]))],
  [/^speculative token (\d+) of transaction (\d+)$/, 'spectoken', (g, o) => {
    o.keys = [Number(g[1])];
    o.transaction_id = toInt(g[2]);
  }],
  [/^object (\d+) of class (\d+) of database (\d+)$/, 'object', (g, o) => {
    o.object_id = toInt(g[1]);
    o.class_oid = toInt(g[2]);
    o.database_oid = toInt(g[3]);
  }],
  [/^advisory lock \[(\d+),(\d+),(\d+),(\d+)\]$/, 'advisory', (g, o) => (o.keys = g.slice(1, 5).map(Number))],
  [/^user lock \[(\d+),(\d+),(\d+)\]$/, 'userlock', (g, o) => (o.keys = g.slice(1, 4).map(Number))],
  // PG 16+: logical replication parallel apply.
  [/^remote transaction (\d+) of subscription (\d+) of database (\d+)$/, 'applytransaction', (g, o) => {
    o.transaction_id = toInt(g[1]);
    o.subscription_oid = toInt(g[2]);
    o.database_oid = toInt(g[3]);
  }],
];

export function parseLockObject(description: string): LockObject {
  const object: LockObject = {
    type: 'unknown',
    description,
    relation_oid: null,
    database_oid: null,
    block: null,
    offset: null,
    transaction_id: null,
    virtual_transaction: null,
    class_oid: null,
    object_id: null,
    subscription_oid: null,
    keys: null,
  };
  for (const [pattern, type, fill] of FORMS) {
    const groups = pattern.exec(description);
    if (groups) {
      object.type = type;
      fill(groups, object);
      break;
    }
  }
  return object;
}

/** Lock mode names (GetLockmodeName) are single CamelCase words. */
const MODE_ON = /^(\w+) on (.+)$/;

/** `<mode> on <lock description>` as used in lock-wait and deadlock lines. */
export function parseModeOn(text: string): { lock_mode: string; lock_object: LockObject } | null {
  const groups = MODE_ON.exec(text);
  if (!groups || groups[1] === undefined || groups[2] === undefined) return null;
  return { lock_mode: groups[1], lock_object: parseLockObject(groups[2]) };
}

/** PG 19+: the CONTEXT line `waiting for <mode> on <lock>` (may be one line of a longer CONTEXT). */
export function lockFromContext(context: string | null): { lock_mode: string; lock_object: LockObject } | null {
  if (context === null) return null;
  for (const line of context.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('waiting for ')) {
      const parsed = parseModeOn(trimmed.slice('waiting for '.length));
      if (parsed) return parsed;
    }
  }
  return null;
}
