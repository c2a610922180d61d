/**
 * The classifiers that read text from a CONTEXT line (lock-object.ts lockFromContext: PG 19's
 * `waiting for <mode> on <lock>` under a lock timeout or a recovery-conflict wait;
 * recovery-conflict.ts: `WAL redo at <lsn> for <record>`) get it in English from a translated
 * log too: each PostgreSQL 19 catalog's CONTEXT lines, printed as its server prints them, give
 * the same event as the English entry. (The WAL redo line of 15 is in the recorded translated
 * logs: test/integration/translated-logs-golden.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { printMessage } from '../../../test/helpers/catalog-samples.js';
import { logEntry } from '../../../test/helpers/log-entry.js';
import type { LogEntry } from '../../domain/index.js';
import { classifyEntry } from '../classify/index.js';
import { readShippedCatalogs, type Catalog } from './catalog.js';
import { Translator } from './translator.js';

const LOCK_TIMEOUT = 'canceling statement due to lock timeout';
const WAITING = 'waiting for %s on %s';
const RELATION = 'relation %u of database %u';
const STILL_WAITING = 'recovery still waiting after %ld.%03d ms: %s';
const ON_LOCK = 'recovery conflict on lock';
const REDO = 'WAL redo at %X/%08X for %s';

/** The catalog's text of `id` printed with `values`; gettext prints the English one when it has no translation. */
const say = (catalog: Catalog, id: string, values: readonly string[] = []): string => printMessage(catalog.messages[id]?.[0] ?? id, values);

/** A lock timeout and a recovery-conflict wait with the CONTEXT lines PostgreSQL 19 prints, in `catalog`'s words. */
function entries(catalog: Catalog | null): LogEntry[] {
  const t = (id: string, values: readonly string[] = []): string => (catalog === null ? printMessage(id, values) : say(catalog, id, values));
  const relation = t(RELATION, ['16402', '16384']);
  return [
    logEntry(t(LOCK_TIMEOUT), { level: 'ERROR', sqlstate: '55P03', context: t(WAITING, ['AccessExclusiveLock', relation]), statement: 'REPACK (CONCURRENTLY) orders;' }),
    logEntry(t(STILL_WAITING, ['1000', '072', t(ON_LOCK)]), {
      detail: 'Conflicting process: 4711.',
      context: `${t(WAITING, ['AccessExclusiveLock', relation])}\n${t(REDO, ['0', '0347F118', 'Standby/LOCK: xid 812 db 5 rel 16402 '])}`,
    }),
  ];
}

describe('CONTEXT lines a classifier reads, from a translated log', () => {
  const english = entries(null).map((entry) => classifyEntry(entry, 't1'));

  it('are read in English', () => {
    expect(english.map((e) => e.kind)).toEqual(['lock_timeout', 'recovery_conflict_wait']);
    expect(english[0]?.details).toMatchObject({ lock_mode: 'AccessExclusiveLock', lock_object: { relation_oid: 16402, database_oid: 16384 } });
    expect(english[1]?.details).toMatchObject({ lock_mode: 'AccessExclusiveLock', redo_lsn: '0/0347F118' });
  });

  const catalogs = readShippedCatalogs(null).filter((c) => c.major === 19 && c.messages[WAITING] !== undefined && c.messages[REDO] !== undefined);
  it('are translated by half the PostgreSQL 19 catalogs (es, fr, ru not yet)', () => {
    expect(catalogs.map((c) => c.language)).toEqual(expect.arrayContaining(['de', 'ja', 'uk', 'zh_CN']));
  });

  for (const catalog of catalogs) {
    it(`${catalog.language}: give the English events`, () => {
      const translator = new Translator([catalog]);
      const events = entries(catalog).map((entry) => classifyEntry(translator.translateEntry(entry), 't1'));
      // Only the CONTEXT's reading is compared: a DETAIL the detail catalog reads elsewhere.
      expect(events.map((e) => [e.kind, pick(e.details)])).toEqual(english.map((e) => [e.kind, pick(e.details)]));
    });
  }
});

function pick(details: unknown): Record<string, unknown> {
  const d = details as Record<string, unknown>;
  return { lock_mode: d.lock_mode, lock_object: d.lock_object, redo_lsn: d.redo_lsn, redo_record: d.redo_record, redo_description: d.redo_description };
}
