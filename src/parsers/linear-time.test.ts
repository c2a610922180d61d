/**
 * No catastrophic backtracking in the framing stage: each compiled log_line_prefix regex, the
 * syslog header and the csvlog record start, attacked with lines that almost match (the
 * separators a lazy field stops at, repeated), cost time linear in the line length; in fact
 * bounded, since every free-text escape has a bounded pattern. Classifier regexes are attacked in
 * classify/linear-time.test.ts; the helper explains why the check does not flake.
 */
import { describe, it } from 'vitest';
import { expectLinear } from '../../test/helpers/linear-time.js';
import { CsvlogFramer } from './frame-csvlog.js';
import { StderrFramer } from './frame-stderr.js';
import { compilePrefix, execPrefix } from './prefix.js';

const TS = '2026-10-14 03:12:45.123 UTC';

/** A prefix, a line start that matches it up to where the attack goes, and what to repeat there. */
const PREFIX_ATTACKS: Array<[prefix: string, head: string, units: string[]]> = [
  ['%m [%p] %q%u@%d ', `${TS} [1] `, ['a@', '@ ', 'a@b ', ' LOG: ', 'LOG:']],
  ['%m [%p] %q%u@%d %a ', `${TS} [1] `, ['a@b c ', '@ ', ' LOG ', 'x@ LOG:']],
  ['%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ', '2026-10-14 03:12:45 UTC [1]: [1-1] user=', ['a,db=', ',db=x,app=', ',app=y,client= ', ' LOG:  x']],
  ['%m %r %h %L %i ', `${TS} `, ['x(1) ', '(', ' ', 'a(12345)', ' LOG: ']],
  ['%-20u|%20d|%b|%a:', '', [' ', '| ', ':', 'a|b|c:']],
  ['%c %v %x %e %Q %n %s %P ', '6529a1b2.a113 ', ['1/1 ', '-1/ ', '0 ', '00000 ']],
];

describe('prefix regexes take time linear in the line length', () => {
  for (const [prefix, head, units] of PREFIX_ATTACKS) {
    const compiled = compilePrefix(prefix);
    for (const unit of units) {
      it(`"${prefix}" with "${unit}" repeated`, () => {
        expectLinear(`prefix "${prefix}", unit "${unit}"`, (n) => head + unit.repeat(n), (line) => execPrefix(compiled, line), Math.ceil(16_000 / unit.length));
      });
    }
  }
});

describe('framers take time linear in the line length', () => {
  it('stderr behind syslog headers: near-miss headers', () => {
    const framer = new StderrFramer({ file: 'f', prefix: '[%l-1] ', syslog: true, nowMs: () => Date.UTC(2026, 9, 14) });
    let offset = 0;
    expectLinear('syslog header', (n) => `Oct 14 03:12:45 ${'host '.repeat(n)}postgres[1]: x`, (text) => framer.push({ text, offset: offset++, line: null }), 3000);
  });

  it('csvlog: record starts that almost match, quotes that never balance', () => {
    expectLinear('csvlog', (n) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? `${TS.slice(0, -1)}"` : `${TS},"${'"'.repeat(i % 7)}`)), (lines) => {
      const framer = new CsvlogFramer({ file: 'f' });
      lines.forEach((text, offset) => framer.push({ text, offset, line: null }));
      return framer.flush();
    }, 400);
  });
});
