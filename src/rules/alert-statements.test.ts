/**
 * An alert never carries a statement's literals, whatever `redact` says: the alert is what leaves
 * the machine (PagerDuty, Alertmanager, webhooks), and the values in a WHERE clause are the
 * personal data. The cited events keep the text `redact` allows.
 */
import { describe, expect, it } from 'vitest';
import { evidenceOf } from './rule.js';
import { quoteStatement } from './summary-format.js';

describe('statements in alerts', () => {
  it('are quoted in a summary without their literals', () => {
    expect(quoteStatement("UPDATE users SET email = 'ann@example.com' WHERE id = 42;")).toBe('UPDATE users SET email = ? WHERE id = ?');
  });

  it('lose their literals in statement facts and in a cited sample\'s query label; other facts stay', () => {
    const evidence = evidenceOf({
      facts: { statement: "DELETE FROM t WHERE ssn = '123-45-6789'", holder_query: 'SELECT 7', table: "it's.a.name", statement_timeout: '5s' },
      series: [{ name: 'pg_xmin_horizon_age_xids', labels: { pid: '4242', query: "SELECT * FROM t WHERE name = 'Ann'" }, value: 10, tsMs: 1 }],
    });
    expect(evidence.facts).toEqual({ statement: 'DELETE FROM t WHERE ssn = ?', holder_query: 'SELECT ?', table: "it's.a.name", statement_timeout: '5s' });
    expect(evidence.series[0]!.labels).toEqual({ pid: '4242', query: 'SELECT * FROM t WHERE name = ?' });
  });
});
