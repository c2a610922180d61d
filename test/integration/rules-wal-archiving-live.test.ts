/**
 * WAL archiving failing, live on a PostgreSQL 18 primary seen by the daemon's own machinery (log
 * tailer, poll scheduler with every collector as a pg_monitor role, store writer, rules engine
 * writing alerts): archive_command copies each segment into a directory that is not there (an
 * archive volume that did not mount), so every attempt fails with cp's exit code 1 and the
 * segments pile up in pg_wal. The alert names the segment and the archiver's own log line with
 * the command; creating the directory lets the next retry succeed and the alert resolves.
 * The sustain is shortened to seconds; everything else runs at its defaults.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 30_000;

describe('wal-archiving-failing on a live PostgreSQL 18: an archive directory that is not there', () => {
  const mountPoint = suiteTempDir('archive');
  const archiveDir = path.join(mountPoint, 'not-mounted');
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({
      version: 18, name: 'rules-archiving',
      settings: { archive_mode: 'on', archive_command: `cp %p ${archiveDir}/%f` },
    });
    await createMonitorRole(server);
    rig = await startLiveRules(server, { 'wal-archiving-failing': { sustainMs: 3_000 } });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('names the segment that cannot be archived and the archiver\'s failure; resolves once a segment is archived', async () => {
    await server.query('CREATE TABLE filler (note text NOT NULL)');
    for (let segment = 0; segment < 2; segment++) {
      await server.query("INSERT INTO filler SELECT repeat('x', 100) FROM generate_series(1, 1000)");
      await server.query('SELECT pg_switch_wal()');
    }
    const alerts = () => rig.alerts('wal-archiving-failing');
    // Fired once the failure line is in the store too: the tailer and the poller race.
    await waitUntil(() => alerts()[0]?.summary.includes('the archiver logged') === true, WAIT_MS, 'the wal-archiving-failing alert with its log line');
    const [fired] = alerts();
    const [{ wal }] = await server.query<{ wal: string }>('SELECT last_failed_wal AS wal FROM pg_stat_archiver') as [{ wal: string }];
    expect(fired?.severity).toBe('error');
    expect(fired?.summary).toMatch(new RegExp(
      `^WAL archiving on primary has failed for \\d+ s \\(since \\d\\d:\\d\\d:\\d\\d UTC\\): ${wal} is not archived, [\\d,]+ failed attempts? in that time; ` +
      '\\d+ WAL files? wait in pg_wal; nothing archived since the statistics were reset; ' +
      `the archiver logged "archive command failed with exit code 1" for \`cp pg_wal/${wal} ${archiveDir}/${wal}\`: pg_wal grows until archive_command succeeds$`,
    ));
    const evidence = JSON.parse(fired!.evidence) as { eventIds: number[]; facts: Record<string, unknown> };
    expect(evidence.eventIds).toHaveLength(1);
    expect(evidence.facts).toMatchObject({ last_failed_wal: wal, archive_command: `cp pg_wal/${wal} ${archiveDir}/${wal}` });

    // The volume comes back; a reload wakes the archiver at once instead of at its next minute.
    // The server runs as another user than the test.
    chmodSync(mountPoint, 0o755);
    mkdirSync(archiveDir);
    chmodSync(archiveDir, 0o777);
    await server.query('SELECT pg_reload_conf()');
    await waitUntil(() => alerts()[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once a segment is archived');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
    expect(alerts()).toHaveLength(1);
  });
});
