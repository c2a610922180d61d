import { describe, expect, it } from 'vitest';
import type { ServerRestartDetails } from '../../domain/index.js';
import { stderrEntries, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

describe('server_restart: the §4.2 crash sequence (PG 18)', () => {
  const events = stderrEntries([
    '2026-10-14 04:00:00.100 UTC [1001] LOG:  client backend (PID 60001) was terminated by signal 9: Killed',
    '2026-10-14 04:00:00.100 UTC [1001] DETAIL:  Failed process was running: SELECT * FROM big_report(2026);',
    '2026-10-14 04:00:00.100 UTC [1001] LOG:  terminating any other active server processes',
    '2026-10-14 04:00:00.150 UTC [1001] LOG:  all server processes terminated; reinitializing',
    '2026-10-14 04:00:00.180 UTC [61000] LOG:  database system was interrupted; last known up at 2026-10-14 03:55:12 UTC',
    '2026-10-14 04:00:00.400 UTC [61000] LOG:  database system was not properly shut down; automatic recovery in progress',
    '2026-10-14 04:00:00.410 UTC [61000] LOG:  redo starts at 3/5A0012F8',
    '2026-10-14 04:00:02.900 UTC [61000] LOG:  invalid record length at 3/6B1C2D40: expected at least 24, got 0',
    '2026-10-14 04:00:02.900 UTC [61000] LOG:  redo done at 3/6B1C2D08 system usage: CPU: user: 1.80 s, system: 0.52 s, elapsed: 2.49 s',
    '2026-10-14 04:00:02.950 UTC [61001] LOG:  checkpoint starting: end-of-recovery immediate wait',
    '2026-10-14 04:00:03.280 UTC [61001] LOG:  checkpoint complete: wrote 5120 buffers (31.3%), wrote 3 SLRU buffers; 0 WAL file(s) added, 0 removed, 17 recycled; write=0.201 s, sync=0.090 s, total=0.330 s; sync files=40, longest=0.010 s, average=0.003 s; distance=279552 kB, estimate=279552 kB; lsn=3/6B1C2D40, redo lsn=3/6B1C2D40',
    '2026-10-14 04:00:03.300 UTC [1001] LOG:  database system is ready to accept connections',
  ].join('\n')).map((entry) => classifyEntry(entry, 't1'));

  it('classifies every line of the incident', () => {
    expect(events.map((e) => (e.kind === 'server_restart' ? `${e.kind}:${e.details.phase}` : e.kind))).toEqual([
      'server_crash',
      'server_restart:terminating_others',
      'server_restart:reinitializing',
      'server_restart:interrupted',
      'server_restart:automatic_recovery',
      'server_restart:redo_start',
      'generic',
      'server_restart:redo_done',
      'checkpoint',
      'checkpoint',
      'server_restart:ready',
    ]);
  });

  it('reads the positions, the last-up time and the redo system usage', () => {
    const restarts = events.flatMap((e) => (e.kind === 'server_restart' ? [e.details] : []));
    const byPhase = new Map(restarts.map((d) => [d.phase, d]));
    expect(byPhase.get('interrupted')?.last_known_up).toBe('2026-10-14 03:55:12 UTC');
    expect(byPhase.get('redo_start')?.lsn).toBe('3/5A0012F8');
    expect(byPhase.get('redo_done')).toMatchObject({ lsn: '3/6B1C2D08', cpu_user_s: 1.8, cpu_system_s: 0.52, elapsed_s: 2.49 });
    expect(byPhase.get('ready')?.read_only).toBe(false);
  });
});

describe('server_restart: other versions and phases', () => {
  it.each<[string, Partial<ServerRestartDetails>]>([
    ['redo done at 0/160A3F8', { phase: 'redo_done', lsn: '0/160A3F8', elapsed_s: null }],
    ['redo starts at 0/0160A3F8', { phase: 'redo_start', lsn: '0/0160A3F8' }],
    ['redo is not required', { phase: 'redo_not_required' }],
    ['database system is ready to accept read only connections', { phase: 'ready', read_only: true }],
    ['database system is ready to accept read-only connections', { phase: 'ready', read_only: true }],
    ['database system shutdown was interrupted; last known up at 2026-10-14 03:55:12 UTC', { phase: 'interrupted' }],
    ['database system was interrupted while in recovery at log time 2026-10-14 03:50:00 UTC', { phase: 'interrupted', last_known_up: '2026-10-14 03:50:00 UTC' }],
    ['shutting down because restart_after_crash is off', { phase: 'not_restarting' }],
    ['shutting down because "restart_after_crash" is off', { phase: 'not_restarting' }],
    ['aborting startup due to startup process failure', { phase: 'not_restarting' }],
    ['received fast shutdown request', { phase: 'shutdown_requested', shutdown_mode: 'fast' }],
    ['received immediate shutdown request', { phase: 'shutdown_requested', shutdown_mode: 'immediate' }],
    ['database system is shut down', { phase: 'shut_down' }],
    ['received promote request', { phase: 'promote_requested' }],
    ['selected new timeline ID: 2', { phase: 'new_timeline', timeline_id: 2 }],
  ])('%s', (message, expected) => {
    const event = classifyEntry(stderrEntry(`2026-10-14 04:00:00.100 UTC [1001] LOG:  ${message}`), 't1');
    expect(event.kind).toBe('server_restart');
    expect(event.details).toMatchObject(expected);
  });

  it.each(['database system was shut down at 2026-10-14 03:55:12 UTC', 'shutting down', 'terminating connection because of crash of another server process'])(
    'leaves %s generic',
    (message) => {
      expect(classifyEntry(stderrEntry(`2026-10-14 04:00:00.100 UTC [1001] LOG:  ${message}`), 't1').kind).toBe('generic');
    },
  );
});
