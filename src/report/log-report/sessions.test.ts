import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../domain/index.js';
import { expectMergeProperty, expectSectionGolden, fixtureEvents, foldResult, LOG_REPORT_FIXTURES_DIR, logReportCases } from '../../../test/helpers/report-section.js';
import { LOGIN_WINDOW_MS } from './connection-hosts.js';
import { sessionLine } from './session-lines.js';
import { sessionsSection, UNKNOWN_HOST } from './sessions.js';


const FORMATS = ['stderr', 'csvlog', 'jsonlog'] as const;
/**
 * Both workloads of test/fixtures/log-report (README.md there) in every version and format
 * recorded: sessions-and-errors (overlapping sessions, wrong SCRAM passwords, no pg_hba.conf line;
 * PG 13-19, 18+ with `log_connections = all`) and log-report-workload (logins refused after
 * authorization: a missing database, a missing role; PG 15 and 18).
 */
const CASES = [...logReportCases('sessions-and-errors'), ...logReportCases('log-report-workload')];

const events = (name: string) => fixtureEvents(name, LOG_REPORT_FIXTURES_DIR);

describe('sessions section', () => {
  it('folds the recorded workloads of PG 15 and 18, in all three formats (golden)', async () => {
    await expectSectionGolden(sessionsSection, CASES, LOG_REPORT_FIXTURES_DIR);
  });

  it('reads the same sessions from stderr, csvlog and jsonlog', async () => {
    for (const stderrCase of CASES.filter((name) => name.includes('-stderr-'))) {
      const stderr = foldResult(sessionsSection, await events(stderrCase));
      for (const format of FORMATS) {
        const name = stderrCase.replace('-stderr-', `-${format}-`);
        if (CASES.includes(name)) expect(foldResult(sessionsSection, await events(name)), name).toEqual(stderr);
      }
    }
  });

  it('counts connections, session times, the peak of three sessions and the refused logins by host, PG 13 to 19', async () => {
    const stderrCases = logReportCases('sessions-and-errors').filter((name) => name.includes('-stderr-'));
    expect(stderrCases).toEqual(['pg13-stderr-sessions-and-errors', 'pg15-stderr-sessions-and-errors', 'pg18-stderr-sessions-and-errors', 'pg19-stderr-sessions-and-errors']);
    for (const name of stderrCases) {
      const result = foldResult(sessionsSection, await events(name));
      expect(result.connections.by_application).toContainEqual({ name: 'se-orders', count: 2 });
      expect(result.connections.by_user).toContainEqual({ name: 'se_report', count: 1 });
      expect(result.connections.by_host).toEqual([{ name: '127.0.0.1', count: result.connections.total }]);
      // PG 13 and 19: the harness's last connection closed after the log was switched away.
      expect(result.connections.total - result.disconnections.total).toBe(name.startsWith('pg13') || name.startsWith('pg19') ? 1 : 0);
      expect(result.session_time.by_database.map((row) => row.name).sort()).toEqual(['postgres', 'se_shop']);
      // se-orders, se-reports and the short-lived se-orders session overlap; nothing else does.
      expect(result.peak_concurrent_sessions).toMatchObject({ count: 3, opened_before_log: 0 });
      expect(result.auth_failures).toEqual({
        total: 3,
        by_user: [{ name: 'se_app', count: 2 }, { name: 'se_intruder', count: 1 }],
        by_host: [{ name: '127.0.0.1', count: 3 }],
        by_reason: [{ name: 'password', count: 2 }, { name: 'no_pg_hba_entry', count: 1 }],
      });
    }
  });

  it('a login refused after its authorized line is no session, and its role failure has the host of its received line', async () => {
    const result = foldResult(sessionsSection, await events('pg18-stderr-log-report-workload'));
    expect(result.connections.refused_after_authorization).toBe(2);
    // One session more: the harness's connection that switched the log away closed after it.
    expect(result.connections.total - result.connections.refused_after_authorization).toBe(result.disconnections.total + 1);
    expect(result.auth_failures).toMatchObject({ total: 1, by_user: [{ name: 'rw_nobody', count: 1 }], by_host: [{ name: '127.0.0.1', count: 1 }], by_reason: [{ name: 'role', count: 1 }] });
  });

  it('counts sessions open before the log from their disconnections', async () => {
    const all = await events('pg18-stderr-sessions-and-errors');
    // Cut the log after se-orders and se-reports opened: their disconnections come without their connections.
    const cut = all.findIndex((event) => event.message.startsWith('connection authorized: user=se_report'));
    const result = foldResult(sessionsSection, all.slice(cut + 1));
    expect(result.peak_concurrent_sessions).toMatchObject({ count: 3, opened_before_log: 2 });
  });

  it('merges any split of the real logs as one pass, linking hosts across the split', async () => {
    for (const name of CASES) expectMergeProperty(sessionsSection, await events(name), undefined, 100);
  });

  it('links a refused login to its received line only within authentication_timeout', async () => {
    const all = await events('pg15-stderr-sessions-and-errors');
    const failed = all.find((event) => event.message.startsWith('password authentication failed'))!;
    const received = all.filter((event) => event.pid === failed.pid);
    const late = received.map((event) => (event === failed ? { ...event, tsMs: event.tsMs + LOGIN_WINDOW_MS + 1 } : event)) as AnyLogEvent[];
    expect(foldResult(sessionsSection, received).auth_failures.by_host).toEqual([{ name: '127.0.0.1', count: 1 }]);
    expect(foldResult(sessionsSection, late).auth_failures.by_host).toEqual([{ name: UNKNOWN_HOST, count: 1 }]);
  });
});

describe('sessionLine', () => {
  const template = { level: 'LOG', sqlstate: null, user: null } as unknown as AnyLogEvent;
  const read = (message: string, level = 'LOG', sqlstate: string | null = null) => sessionLine({ ...template, message, level, sqlstate } as AnyLogEvent);

  // Texts no server here writes (SSL, GSS, replication, Unix sockets, other methods), as
  // pg-messages.md §6.3 and the servers' binaries spell them.
  it.each([
    ['connection received: host=[local]', { kind: 'received', host: '[local]' }],
    ['connection authorized: user=app database=shop application_name=orders api SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)',
      { kind: 'authorized', replication: false, user: 'app', database: 'shop', application: 'orders api' }],
    ['connection authorized: user=app database=shop SSL enabled (protocol=TLSv1.2, cipher=ECDHE-RSA-AES256-GCM-SHA384, bits=256, compression=off)',
      { kind: 'authorized', replication: false, user: 'app', database: 'shop', application: null }],
    ['connection authorized: user=app database=shop application_name=psql GSS (authenticated=yes, encrypted=yes, delegated_credentials=no, principal=app@EXAMPLE.COM)',
      { kind: 'authorized', replication: false, user: 'app', database: 'shop', application: 'psql' }],
    ['replication connection authorized: user=rep application_name=walreceiver',
      { kind: 'authorized', replication: true, user: 'rep', database: null, application: 'walreceiver' }],
    ['disconnection: session time: 1:30:12.404 user=app database=shop host=[local]',
      { kind: 'disconnection', sessionMs: 5_412_404, user: 'app', database: 'shop', host: '[local]' }],
  ])('%s', (message, expected) => {
    expect(read(message)).toEqual(expected);
  });

  it.each([
    ['LDAP authentication failed for user "app"', { reason: 'other', user: 'app', host: null, afterAuthorization: false }],
    ['pg_hba.conf rejects connection for host "10.1.2.3", user "app", database "shop", SSL encryption', { reason: 'pg_hba_reject', user: 'app', host: '10.1.2.3', afterAuthorization: false }],
    ['no pg_hba.conf entry for replication connection from host "10.1.2.4", user "rep", no encryption', { reason: 'no_pg_hba_entry', user: 'rep', host: '10.1.2.4', afterAuthorization: false }],
    ['role "ghost" is not permitted to log in', { reason: 'role', user: 'ghost', host: null, afterAuthorization: true }],
  ])('FATAL: %s', (message, expected) => {
    expect(read(message, 'FATAL')).toEqual({ kind: 'auth_failure', ...expected });
  });

  it('reads a refusal after authorization, and class 28 by SQLSTATE alone', () => {
    expect(read('too many connections for role "app"', 'FATAL')).toEqual({ kind: 'refused_after_authorization' });
    expect(read('remaining connection slots are reserved for roles with the SUPERUSER attribute', 'FATAL')).toEqual({ kind: 'refused_after_authorization' });
    expect(read('a message of a later release', 'FATAL', '28000')).toMatchObject({ kind: 'auth_failure', reason: 'other' });
    expect(read('password authentication failed for user "app"', 'ERROR')).toBeNull();
  });
});
