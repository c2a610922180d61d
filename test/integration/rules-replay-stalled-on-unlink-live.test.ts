/**
 * Seed 003 live (issue #9): a table is dropped on a PostgreSQL 18 primary while a standby reader
 * has it open; replay waits on the reader's lock (a short recovery conflict), then the standby's
 * startup process removes the table's files while replay stands still and the primary keeps
 * writing WAL. replay-stalled-on-unlink must say so live (pgvigil's tailers, collectors and rules
 * engine on both servers: basis log+samples) and offline (`pgvigil analyze --rules --json` on the
 * two servers' logs: basis log, a "possible" stall), naming the same relation.
 *
 * Why the unlink is slowed with strace: on this machine (ext4 mounted with discard), removing a
 * freshly written table costs the startup process its truncate() calls (PostgreSQL truncates each
 * segment, then unlinks it), measured with strace -T on the startup process: 0.18 s for a 1 GB
 * table, 2.3 s for 3 GB (0.9, 1.05 and 0.29 s per segment; each unlink() under 0.1 ms). The
 * seed's terabytes take minutes; a table a test can build here stalls replay for about one poll
 * interval, too little to tell from noise (with UNLINK_DELAY_MS at 1 ms the live alert does not
 * come). So strace holds each of the startup process's real unlink() calls for UNLINK_DELAY_MS:
 * one call per file of the table (each 1 GB segment, its free space map, its TOAST table and
 * index), so the stall is the real process inside its real unlinks and grows with the table's
 * segments as on a slow filesystem. The stall threshold is lowered to MIN_STALL_S in this test only.
 *
 * The table is PGVIGIL_UNLINK_TABLE_MB large (default 256, 4 files: an 8 s stall): one 800-byte
 * row per 8 kB page (fillfactor 10), so its WAL is about a ninth of its size. A 3 GB run
 * (PGVIGIL_UNLINK_TABLE_MB=3072, 80 s on a loaded 2-core machine, most of it building the table):
 * six unlinks held, replay stood still 13.6 s from the end of the recovery conflict (12 s held, the
 * rest the real truncates), live "replay on standby1 stalled for 14 s (14 kB of received WAL
 * waiting) on unlink of unlink_big (DROP TABLE on primary at 01:08:39 UTC)".
 *
 * On 18 nothing shows which record replay is inside of, so live the unlink is probable (the DROP
 * lines up with the stall after the conflict); offline, from the logs alone, it is not claimed:
 * the unlink logs nothing.
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basisOf, type Evidence } from '../../src/domain/index.js';
import type { AnalyzeReport } from '../../src/report/analyze-text.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { waitForReplay } from '../helpers/scenarios/recovery-conflicts.js';
import { heldUnlinks, slowUnlinksOf } from '../helpers/slow-unlink.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { startWalTicker } from '../helpers/wal-ticker.js';
import { describeWithTool } from '../helpers/tools.js';
import { createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRulesOn, type LiveRules } from './live-rules-rig.js';

const RULE = 'replay-stalled-on-unlink';
const TABLE = 'unlink_big';
const TABLE_MB = Number(process.env.PGVIGIL_UNLINK_TABLE_MB ?? 256);
const SEGMENT_MB = 1024;
const UNLINK_DELAY_MS = 2_000;
const MIN_STALL_S = 3;
/** WAL the primary writes while the standby stands still, so received WAL waits. */
const WRITE_EVERY_MS = 200;
const CONFLICT_WAIT_MS = 15_000;

describeWithTool('strace', 'replay-stalled-on-unlink on a live PostgreSQL 18 primary and standby, and offline on their logs', () => {
  let primary: PgServer;
  let standby: PgServer;
  let rig: LiveRules;
  const traceDir = suiteTempDir('pgvigil-slow-unlink-');

  beforeAll(async () => {
    if (!(TABLE_MB > 0)) throw new Error(`PGVIGIL_UNLINK_TABLE_MB must be a positive number of MB, got ${process.env.PGVIGIL_UNLINK_TABLE_MB}`);
    primary = await startPrimary({ version: 18, name: 'rules-unlink', settings: { log_statement: 'ddl', max_wal_size: '4GB' } });
    await createMonitorRole(primary);
    standby = await startStandby(primary, {
      name: 'rules_unlink_standby',
      settings: { hot_standby_feedback: false, log_recovery_conflict_waits: true, deadlock_timeout: '100ms' },
    });
    await primary.query(`CREATE TABLE ${TABLE} (id int NOT NULL, pad text NOT NULL) WITH (fillfactor = 10, autovacuum_enabled = off)`);
    await primary.query(`INSERT INTO ${TABLE} SELECT g, repeat('x', 800) FROM generate_series(1, ${Math.ceil(TABLE_MB * 128)}) g`);
    await primary.query('CREATE TABLE wal_ticks (at timestamptz NOT NULL)');
    await waitForReplay(primary, standby);
    rig = await startLiveRulesOn([{ target: 'primary', server: primary }, { target: 'standby1', server: standby }], { [RULE]: { minStallSeconds: MIN_STALL_S } });
    await waitUntil(() => rig.db.prepare(`SELECT 1 FROM series WHERE target = 'standby1' AND name = 'pg_standby_replay_pending_bytes'`).get() !== undefined,
      20_000, 'the standby to be sampled');
  }, 180_000);

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('live: names the standby, the relation, the DROP TABLE and the primary, probably (log+samples); offline, from the logs, no unlink', async () => {
    const { file, bytes } = (await standby.query<{ file: string; bytes: string }>(
      'SELECT pg_relation_filepath($1) AS file, pg_relation_size($1)::text AS bytes', [TABLE]))[0]!;
    const segments = Math.max(1, Math.ceil(Number(bytes) / (SEGMENT_MB * 1024 * 1024)));
    // Besides the segments, the free space map, the TOAST table and its index are unlinked.
    const waitMs = (segments + 3) * UNLINK_DELAY_MS + 20_000;
    const startup = (await standby.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'startup'"))[0]!;
    const slow = await slowUnlinksOf(startup.pid, UNLINK_DELAY_MS, path.join(traceDir, 'startup-unlinks.txt'));
    const reader = await openSession(standby);
    const ticker = await startWalTicker(primary, WRITE_EVERY_MS);
    let trace: string;
    try {
      await reader.client.query('BEGIN');
      await reader.client.query(`SELECT 1 FROM ${TABLE} LIMIT 1`);
      await primary.query(`DROP TABLE ${TABLE}`);
      // Replay waits on the reader's lock (logged after deadlock_timeout); the reader lets go, and
      // replay goes on to the commit, whose files the startup process now removes.
      await standby.waitForLog(/recovery still waiting after [\d.]+ ms: recovery conflict on lock/, CONFLICT_WAIT_MS);
      await reader.client.query('COMMIT');

      await waitUntil(() => rig.alerts(RULE).length > 0, waitMs, `the live ${RULE} alert`);
      await waitUntil(() => rig.alerts(RULE).every((a) => a.state === 'resolved'), waitMs, 'the alert to resolve once replay moves');
    } finally {
      await ticker.stop().catch(() => undefined);
      trace = await slow.detach();
      await reader.client.end().catch(() => undefined);
    }

    // The stall was the startup process inside its unlinks of the dropped table's files.
    const segmentFiles = Array.from({ length: segments }, (_, i) => (i === 0 ? file : `${file}.${i}`));
    expect(heldUnlinks(trace), trace).toEqual(expect.arrayContaining(segmentFiles));

    const [fired, ...more] = rig.alerts(RULE);
    expect(more).toEqual([]);
    const evidence = JSON.parse(fired!.evidence) as Evidence;
    const context = JSON.stringify({ fired, trace }, null, 1);
    expect(fired!.summary, context).toMatch(new RegExp(
      `^replay on standby1 stalled for \\d+ s \\([\\d.]+ \\S+ of received WAL waiting\\) probably on unlink of ${TABLE} \\(DROP TABLE on primary at \\d\\d:\\d\\d:\\d\\d UTC\\): the unlink logs nothing`,
    ));
    expect(basisOf(evidence)).toBe('log+samples');
    expect(JSON.parse(fired!.labels)).toMatchObject({ relation: TABLE, primary: 'primary' });
    expect(evidence.facts).toMatchObject({ relation: TABLE, command: 'DROP TABLE', dropped_on: 'primary', possible: true });
    // The stall it reports is the held unlinks (less up to a poll and an update interval).
    expect(evidence.facts.standing_still_seconds).toBeGreaterThanOrEqual(Math.max(MIN_STALL_S, (heldUnlinks(trace).length * UNLINK_DELAY_MS) / 1000 - 2));
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);

    // Offline, the two servers' logs: replay's standing still after the conflict is not in them.
    const { code, stdout, stderr } = await analyzeCaptured([...primary.logFiles(), ...standby.logFiles()], { rules: true, json: true });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as AnalyzeReport).alerts!.filter((a) => a.rule === RULE), stdout).toEqual([]);
  }, 90_000);
});
