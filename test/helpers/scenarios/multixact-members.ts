/**
 * The multixact members space running short (13-18): every multixact's member list goes in one
 * space of 2^32 members, and the server warns from 20 SLRU segments before the stop limit, one
 * segment short of the oldest multixact's members. Filling 4 billion members takes days; instead
 * one multixact is made and kept as the oldest, and pg_resetwal -O moves the next members offset to
 * a segment start (where the first new member zeroes a fresh page) just short of wrapping onto it.
 * The next multixact then logs the warning (multixact.c GetNewMultiXactId). 19 widened the offsets
 * to 64 bits: no such limit, no warning there.
 */
import { Cluster } from '../../../src/demo/pg-cluster.js';
import { runCommand } from '../../../src/demo/processes.js';
import type { PgServer } from '../pg-harness.js';
import type { Scenario } from './scenario.js';
import { withSessions } from './session.js';

/** MULTIXACT_MEMBERS_PER_PAGE (1636) x SLRU_PAGES_PER_SEGMENT (32): pg_resetwal's "multiply by 52352". */
const MEMBERS_PER_SEGMENT = 52_352;
/** The last whole segment start before 2^32: 9,216 members short of the stop limit (2^32 - one segment). */
const NEAR_WRAP_OFFSET = Math.floor(2 ** 32 / MEMBERS_PER_SEGMENT - 1) * MEMBERS_PER_SEGMENT;

/** Two sessions share-lock one row: the second makes a multixact of both. */
async function shareLockTwice(server: PgServer, id: number): Promise<void> {
  await withSessions(server, { first: 'postgres', second: 'postgres' }, async ({ first, second }) => {
    for (const session of [first, second]) {
      await session.query('BEGIN');
      await session.query('SELECT id FROM mx_members WHERE id = $1 FOR SHARE', [id]);
    }
    for (const session of [first, second]) await session.query('COMMIT');
  });
}

export const multixactMembersRunShort: Scenario = {
  name: 'multixact-members-run-short',
  description:
    'One multixact made and kept as the oldest; pg_resetwal -O moves the next members offset a segment short of wrapping onto it; ' +
    'the next multixact: "database with OID n must be vacuumed before N more multixact members are used".',
  // The embedded PostgreSQL 18 (npm) ships no pg_resetwal; 13, 14, 16 and 17 too. Debian's 15 has it.
  versions: [15],
  logOf: 'primary',
  settings: () => ({}),
  sessionSettings: {},
  async run({ primary, log }) {
    if (!(primary instanceof Cluster)) throw new Error('multixact-members-run-short runs pg_resetwal: it needs a harness cluster');
    await primary.query('CREATE TABLE mx_members (id int PRIMARY KEY)');
    await primary.query('INSERT INTO mx_members VALUES (1), (2)');
    await shareLockTwice(primary, 1);
    await primary.query('CHECKPOINT');
    await primary.stop('fast');
    await runCommand(primary.install.command('pg_resetwal', ['-O', String(NEAR_WRAP_OFFSET), '-D', primary.serverPath(primary.dataDir)]));
    await primary.start();
    await shareLockTwice(primary, 2);
    await log.waitFor(/must be vacuumed before \d+ more multixact members? (?:is|are) used/);
  },
};
