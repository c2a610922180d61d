import { describe, expect, it } from 'vitest';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 06:00:01.222 UTC [60321] app@shop ';

describe('temp_file (§6.1)', () => {
  it('reads the §6.1 example with its statement', () => {
    const text = [
      `${AT}LOG:  temporary file: path "base/pgsql_tmp/pgsql_tmp60321.0", size 1073741824`,
      `${AT}STATEMENT:  SELECT customer_id, sum(total) FROM orders GROUP BY 1 ORDER BY 2 DESC;`,
    ].join('\n');
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'temp_file')).toEqual({
      path: 'base/pgsql_tmp/pgsql_tmp60321.0',
      size_bytes: 1073741824,
      statement: 'SELECT customer_id, sum(total) FROM orders GROUP BY 1 ORDER BY 2 DESC;',
    });
  });

  it('reads a tablespace fileset path without a statement', () => {
    const text = `${AT}LOG:  temporary file: path "pg_tblspc/16500/PG_17_202406281/pgsql_tmp/pgsql_tmp41235.0.fileset/i3of4.p0.0", size 8192`;
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'temp_file')).toMatchObject({ size_bytes: 8192, statement: null });
  });

  it('leaves a malformed line generic', () => {
    expect(classifyEntry(stderrEntry(`${AT}LOG:  temporary file: path "x", size big`), 't1').kind).toBe('generic');
  });
});
