/**
 * A logical replication slot nobody consumes, invalidated by the checkpointer once the WAL it
 * holds exceeds max_slot_wal_keep_size.
 */
import { ALL_VERSIONS, type Scenario } from './scenario.js';

const SLOT = 'pgvigil_cdc';

export const logicalSlotInvalidated: Scenario = {
  name: 'logical-slot-invalidated',
  description:
    `An unconsumed logical slot "${SLOT}" (pgoutput) and three WAL segment switches with max_slot_wal_keep_size = 1MB: ` +
    'the CHECKPOINT invalidates the slot.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({ max_slot_wal_keep_size: '1MB' }),
  sessionSettings: {},
  async run({ primary, log }) {
    await primary.query(`SELECT pg_create_logical_replication_slot('${SLOT}', 'pgoutput')`);
    await primary.query('CREATE TABLE slot_fill (note text NOT NULL)');
    for (let segment = 0; segment < 3; segment++) {
      await primary.query("INSERT INTO slot_fill SELECT repeat('x', 100) FROM generate_series(1, 10000)");
      await primary.query('SELECT pg_switch_wal()');
    }
    await primary.query('CHECKPOINT');
    await log.waitFor(new RegExp(`invalidating (?:obsolete replication )?slot "${SLOT}"`));
    await primary.query(`SELECT pg_drop_replication_slot('${SLOT}')`);
  },
};
