import { describe, expect, it } from 'vitest';
import { fixtureEvents, foldResult, LOG_REPORT_FIXTURES_DIR } from '../../../test/helpers/report-section.js';
import { errorsSection } from './errors.js';
import { renderErrorsText } from './errors-text.js';
import { sessionsSection } from './sessions.js';
import { renderSessionsText } from './sessions-text.js';

describe("analyze's text: sessions and error messages", () => {
  it('prints the recorded workload of PG 18 in a few lines', async () => {
    const events = await fixtureEvents('pg18-csvlog-sessions-and-errors', LOG_REPORT_FIXTURES_DIR);
    expect(renderSessionsText(foldResult(sessionsSection, events))).toEqual([
      '',
      'Sessions',
      '  connections: 17 (by user postgres 14, se_app 2, se_report 1; by database postgres 15, se_shop 2; by application (none) 14, se-orders 2, se-reports 1; by host 127.0.0.1 17)',
      '  peak concurrent sessions: 3 in the minute of 2026-12-03T13:15:00.000Z',
      '  sessions ended: 17, mean 0.05 s, longest 0.55 s',
      '  refused logins: 3 (by user se_app 2, se_intruder 1; by host 127.0.0.1 3; by reason password 2, no_pg_hba_entry 1)',
    ]);
    const errors = renderErrorsText(foldResult(errorsSection, events));
    expect(errors.slice(0, 3)).toEqual(['', 'Error messages (6 ERROR, 3 FATAL, 0 PANIC; 1 WARNING apart)', expect.stringMatching(/^ {2}count +level +sqlstate +last seen +message$/)]);
    expect(errors).toContainEqual(expect.stringMatching(/^ {4,}2 +ERROR +23505 +2026-12-03T13:15:45\.\d{3}Z +duplicate key value violates unique constraint "se_orders_pkey"$/));
  });

  it('prints nothing for a log without session or error lines', () => {
    expect(renderSessionsText(foldResult(sessionsSection, []))).toEqual([]);
    expect(renderErrorsText(foldResult(errorsSection, []))).toEqual([]);
  });
});
