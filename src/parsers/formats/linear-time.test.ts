/**
 * No quadratic work on hostile lines in the envelope stage: the joint splitter and the one-line
 * report unfolder run once per joint or section, each step bounded (see test/helpers/linear-time.ts).
 */
import { describe, it } from 'vitest';
import { expectLinear } from '../../../test/helpers/linear-time.js';
import { unfoldOneLineReport } from '../classify/one-line-report.js';
import { startsLineOf } from './detect-input.js';
import { hasJoint, splitJoinedLine } from './joined-lines.js';

const startsLine = startsLineOf('%m [%p] %q%u@%d ');
const HEAD = '2026-10-14 03:12:45.123 UTC [1] LOG:  ';

describe('joined lines take time linear in the line length', () => {
  for (const unit of ['\tx', '\t\t', '\\n', '\\nx', '#012', '#0', '\t2026-10-14 ']) {
    it(`${JSON.stringify(unit)} repeated`, () => {
      expectLinear(`joint ${JSON.stringify(unit)}`, (n) => HEAD + unit.repeat(n), (line) => [hasJoint(line, startsLine), splitJoinedLine(line, startsLine)], Math.ceil(16_000 / unit.length));
    });
  }
});

describe('one-line reports take time linear in the message length', () => {
  for (const unit of [', a: ', ', index "x": ', ', aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', ', oldest xmin: 1']) {
    it(`"${unit}" repeated`, () => {
      expectLinear(`sections ${JSON.stringify(unit)}`, (n) => `automatic vacuum of table "a.b.c": index scans: 0${unit.repeat(n)}`, unfoldOneLineReport, Math.ceil(16_000 / unit.length));
    });
  }
});
