/**
 * Hostile messages for the classifiers (fast-check): each family's leading words followed by
 * random text, random DETAIL/CONTEXT/STATEMENT, numbers that overflow. classifyEntry turns a
 * classifier's exception into a generic event with `classify_error`, so the property is that no
 * input ever takes that path, and every number it reports is finite.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

// The words dispatch looks at, so that random tails reach every family's parser.
const HEADS = [
  'automatic vacuum of table "', 'automatic aggressive vacuum to prevent wraparound of table "a.b.c": index scans: ', 'automatic analyze of table "',
  'checkpoint starting: ', 'checkpoint complete: wrote ', 'restartpoint complete: ', 'checkpoints are occurring too frequently (',
  'statement: ', 'statement: DROP TABLE ', 'statement: VACUUM (FULL) ', 'statement: REPACK ', 'execute s1: TRUNCATE ',
  'deadlock detected', 'process 1 still waiting for ', 'process 99999999999999999999 acquired ShareLock on relation ',
  'recovery still waiting after ', 'recovery finished waiting after 1.0 ms: ', 'canceling statement due to ', 'terminating connection due to ',
  'terminating process ', 'invalidating slot "', 'invalidating obsolete replication slot "', 'temporary file: path "',
  'database system ', 'redo done at ', 'redo starts at 0/', 'received fast shutdown request', 'shutting down ',
  'server process (PID ', 'background worker "', 'client backend (PID 1) was terminated by signal ', '00000: ', '',
];

const text = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom('99999999999999999999', '1e400', '-0', 'NaN', '0/FFFFFFFFFFFFFFFFF', '"', '""', '\n\t', '\u2028', '\0', ', ', ': ', ' (PID 1) '),
  fc.array(fc.constantFrom('1', '.', ' ', ',', '"', 'ms', 's', '%', ': ', '\n', 'of total', 'removed', 'remain', 'ShareLock', ' on ', 'relation ', ' of database '), { maxLength: 30 })
    .map((parts) => parts.join('')),
);
const optionalText = fc.option(text, { nil: null });

describe('classifiers never throw', () => {
  it('on any message behind any family\'s leading words, with any DETAIL and CONTEXT', () => {
    fc.assert(fc.property(
      fc.constantFrom(...HEADS), fc.array(text, { maxLength: 4 }), fc.constantFrom('LOG', 'ERROR', 'FATAL', 'WARNING') as fc.Arbitrary<'LOG' | 'ERROR' | 'FATAL' | 'WARNING'>,
      optionalText, optionalText, optionalText,
      (head, tail, level, detail, context, statement) => {
        const event = classifyEntry(logEntry(head + tail.join(''), { level, detail, context, statement }), 'db1');
        expect(event.details).not.toHaveProperty('classify_error');
        for (const value of Object.values(event.details as object)) {
          if (typeof value === 'number') expect(Number.isFinite(value), `${event.kind}: ${JSON.stringify(event.details)}`).toBe(true);
        }
      },
    ), { numRuns: 3000 });
  });
});
