import { describe, expect, it } from 'vitest';
import { cloudLoggingOpener } from './cloud-logging.js';
import { openCnpg } from './cnpg.js';
import { startsLineOf } from './detect-input.js';
import { hasJoint, splitJoinedLine } from './joined-lines.js';
import { openLogplex } from './logplex.js';

const startsLine = startsLineOf('%m [%p] %q%u@%d ');
const HEAD = '2026-11-30 07:20:21.476 UTC [24946] LOG:  automatic vacuum of table "db.public.t": index scans: 0';

describe('splitJoinedLine', () => {
  it.each([
    ['rsyslog escapes', `${HEAD}#012#011pages: 0 removed, 839 remain#012#011tuples: 0 removed`],
    ['newline as TAB', `${HEAD}\t\tpages: 0 removed, 839 remain\t\ttuples: 0 removed`],
    ['newline dropped', `${HEAD}\tpages: 0 removed, 839 remain\ttuples: 0 removed`],
    ['literal newline', `${HEAD}\\n\tpages: 0 removed, 839 remain\\n\ttuples: 0 removed`],
    ['literal escapes', `${HEAD}\\n\\tpages: 0 removed, 839 remain\\n\\ttuples: 0 removed`],
  ])('%s', (_, joined) => {
    expect(hasJoint(joined, startsLine)).toBe(true);
    expect(splitJoinedLine(joined, startsLine)).toEqual([HEAD, '\tpages: 0 removed, 839 remain', '\ttuples: 0 removed']);
  });

  it('a prefixed line after a joint is a line of its own (DETAIL, STATEMENT)', () => {
    const statement = '2026-11-30 07:20:22.001 UTC [300] app@shop STATEMENT:  DROP TABLE t';
    expect(splitJoinedLine(`2026-11-30 07:20:22.001 UTC [300] app@shop ERROR:  x\t${statement}`, startsLine))
      .toEqual(['2026-11-30 07:20:22.001 UTC [300] app@shop ERROR:  x', statement]);
    expect(splitJoinedLine(`2026-11-30 07:20:22.001 UTC [300] app@shop ERROR:  x\\n${statement}`, startsLine))
      .toEqual(['2026-11-30 07:20:22.001 UTC [300] app@shop ERROR:  x', statement]);
  });

  it('leaves alone a line without a joint, a literal \\n inside SQL and #ddd that is no control character', () => {
    expect(hasJoint(`${HEAD} E'a\\nb' #123`, startsLine)).toBe(false);
    expect(splitJoinedLine(`${HEAD} E'a\\nb'`, startsLine)).toEqual([`${HEAD} E'a\\nb'`]);
    expect(splitJoinedLine(`${HEAD}#012#011x #101`, startsLine)).toEqual([HEAD, '\tx #101']);
    expect(hasJoint('\tpages: 0 removed', startsLine)).toBe(false); // a continuation's own TAB
    expect(splitJoinedLine('\t\tindented SQL', startsLine)).toEqual(['\t\tindented SQL']);
  });
});

describe('openCnpg', () => {
  const record = (fields: Record<string, string>, logger = 'postgres'): string =>
    JSON.stringify({ level: 'info', ts: 1796023221.476, logger, msg: 'record', logging_pod: 'pg-1', record: fields });

  it('turns a record into the jsonlog line of the same entry, location split back into its parts', () => {
    const [line] = openCnpg(record({
      log_time: '2026-11-30 07:20:21.476 UTC', process_id: '24946', error_severity: 'ERROR', sql_state_code: '40P01',
      message: 'deadlock detected', query: 'UPDATE t SET v = 1', location: 'DeadLockReport, deadlock.c:1135', user_name: 'app',
    }))!;
    expect(JSON.parse(line!)).toEqual({
      timestamp: '2026-11-30 07:20:21.476 UTC', pid: 24946, error_severity: 'ERROR', state_code: '40P01', message: 'deadlock detected',
      statement: 'UPDATE t SET v = 1', func_name: 'DeadLockReport', file_name: 'deadlock.c', file_line_num: 1135, user: 'app',
    });
  });

  it("skips the manager's own lines and anything not of its shape", () => {
    expect(openCnpg(record({ message: 'x' }, 'instance-manager'))).toBeNull();
    expect(openCnpg(JSON.stringify({ level: 'info', ts: 1, logger: 'postgres', msg: 'record', record: { process_id: 7 } }))).toBeNull();
    expect(openCnpg('{"logger":"postgres"')).toBeNull();
    expect(openCnpg('2026-11-30 07:20:21.476 UTC [1] LOG:  plain')).toBeNull();
  });
});

describe('cloudLoggingOpener', () => {
  const openCloudLogging = cloudLoggingOpener(startsLineOf('%m [%p]: [%l-1] db=%d,user=%u '));

  it('opens textPayload or jsonPayload.message into lines, and skips other logs of the project', () => {
    const entry = (o: object): string => JSON.stringify({ insertId: 'x', timestamp: '2026-11-30T07:20:21.476Z', resource: { labels: { database_id: 'p:i' } }, ...o });
    expect(openCloudLogging(entry({ textPayload: 'a\n\tb\n', logName: 'projects/p/logs/cloudsql.googleapis.com%2Fpostgres.log' }))).toEqual(['a', '\tb']);
    expect(openCloudLogging(entry({ jsonPayload: { message: 'c' } }))).toEqual(['c']);
    expect(openCloudLogging(entry({ textPayload: 'd', logName: 'projects/p/logs/cloudaudit.googleapis.com%2Factivity' }))).toBeNull();
    expect(openCloudLogging(entry({ protoPayload: {} }))).toBeNull();
  });

  it("gives back the TAB Cloud SQL drops from continuation lines, not to a prefixed line", () => {
    // The shape of a Cloud SQL autoanalyze report's textPayload (continuation lines without their TAB).
    const payload = '2025-06-05 15:57:58.017 UTC [110445]: [1-1] db=,user= LOG:  automatic analyze of table "d.public.t"\n' +
      'I/O timings: read: 0.000 ms, write: 0.000 ms\n2025-06-05 15:57:58.017 UTC [110445]: [2-1] db=,user= DETAIL:  x';
    expect(openCloudLogging(JSON.stringify({ textPayload: payload, insertId: 'x' }))).toEqual([
      '2025-06-05 15:57:58.017 UTC [110445]: [1-1] db=,user= LOG:  automatic analyze of table "d.public.t"',
      '\tI/O timings: read: 0.000 ms, write: 0.000 ms',
      '2025-06-05 15:57:58.017 UTC [110445]: [2-1] db=,user= DETAIL:  x',
    ]);
  });
});

describe('openLogplex', () => {
  it("rewrites a Heroku line (pgBadger's logplex shape) as the syslog line it was, and skips other dynos", () => {
    expect(openLogplex('2020-09-24T19:49:50.000000+00:00 app[postgres.135]: [PINK] [18751-1]  sql_error_code = 00000 LOG:  checkpoint complete'))
      .toEqual(['2020-09-24T19:49:50.000000+00:00 PINK postgres[135]: [18751-1]  sql_error_code = 00000 LOG:  checkpoint complete']);
    expect(openLogplex('2017-06-28T15:10:02+00:00 d.1f2e app[postgres.13761]: [DATABASE] [7-2] \tFROM table'))
      .toEqual(['2017-06-28T15:10:02+00:00 DATABASE postgres[13761]: [7-2] \tFROM table']);
    expect(openLogplex('2020-09-24T19:49:50+00:00 app[web.1]: Completed 200 OK in 12ms')).toBeNull();
  });
});
