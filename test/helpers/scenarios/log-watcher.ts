/**
 * Waits on the text of one scenario's stderr log file. Unlike PgServer.waitForLog (the first
 * matching line of any file) it matches the whole file, so a pattern can span the TAB-led
 * continuation lines of a multi-line report, and it only sees what this scenario logged.
 */
import fs from 'node:fs';
import type { Translator } from '../../../src/parsers/lang/translator.js';
import { waitUntil } from '../pg-server.js';
import { englishLogText } from './english-log-text.js';

const DEFAULT_WAIT_MS = 30_000;

export class LogWatcher {
  /** `translator`: the server writes another language; patterns match the English reading of the file. */
  constructor(readonly file: string, private readonly translator: Translator | null = null) {}

  /** Resolves with the first match of `pattern` in the file; rejects after the deadline with the file's tail. */
  async waitFor(pattern: RegExp, timeoutMs = DEFAULT_WAIT_MS): Promise<RegExpExecArray> {
    const matcher = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    // A holder object: TypeScript does not see assignments made inside the callback.
    const result: { match: RegExpExecArray | null } = { match: null };
    try {
      await waitUntil(() => (result.match = matcher.exec(this.text())) !== null, timeoutMs, `${pattern} in ${this.file}`);
    } catch (error) {
      const tail = this.text().split('\n').slice(-40).join('\n');
      throw new Error(`${(error as Error).message}\n--- tail of ${this.file}\n${tail}`, { cause: error });
    }
    if (!result.match) throw new Error(`${pattern} in ${this.file}: matched, then lost`);
    return result.match;
  }

  text(): string {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return '';
    }
    return this.translator === null ? text : englishLogText(text, this.translator);
  }
}

/**
 * A pattern matching a whole multi-line report (autovacuum, autoanalyze) whose first line matches
 * `header`, through its last line `system usage: ...`: a report is matched only once it is
 * completely written. `body` (optional) must match somewhere inside the report. PG 13's
 * autoanalyze report is one line, `... of table "x" system usage: ...`, and has no body.
 */
/** `times` matches of `report` in a row (other text between them): a report written run after run. */
export function repeatedReport(report: RegExp, times: number): RegExp {
  return new RegExp(`(?:${report.source}[^]*?){${times - 1}}${report.source}`);
}

export function completeReport(header: string, body = ''): RegExp {
  const line = '\\n\\t[^\\n]*';
  const inner = body === '' ? '' : `(?:${line})*?\\n\\t${body}[^\\n]*`; // the line may go on (13: `, oldest xmin: N`)
  const oneLine = body === '' ? `${header} system usage: [^\\n]*\\n|` : '';
  return new RegExp(`${oneLine}${header}[^\\n]*${inner}(?:${line})*?\\n\\tsystem usage: [^\\n]*\\n`);
}
