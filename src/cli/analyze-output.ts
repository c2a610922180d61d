/**
 * What `pgvigil analyze` writes its result as, and where. `--format` names both the logs' format
 * (stderr, csvlog, ...) and the output's (text, json, html): the two lists share no word, so one
 * flag, repeatable, takes both (`--format csvlog --format html`), and the flag users know from
 * `pgvigil report --format html -o FILE` works here too. `--json` stays as `--format json`.
 */
import { InvalidArgumentError } from 'commander';
import { promises as fsp } from 'node:fs';
import { INPUT_FORMATS, type InputFormat } from '../parsers/formats/input-format.js';
import { renderAnalyzeText, type AnalyzeReport } from '../report/analyze-text.js';

export const OUTPUT_FORMATS = ['text', 'json', 'html'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

const ALL_FORMATS: readonly string[] = [...INPUT_FORMATS, ...OUTPUT_FORMATS];

/** Commander's parser of a repeated --format: each value checked, all kept in order. */
export function collectFormat(value: string, previous: string[]): string[] {
  if (!ALL_FORMATS.includes(value)) {
    throw new InvalidArgumentError(`the logs' format (${INPUT_FORMATS.join(', ')}) or the output's (${OUTPUT_FORMATS.join(', ')})`);
  }
  return [...previous, value];
}

export interface FormatChoice {
  input: InputFormat;
  output: OutputFormat;
}

/**
 * The --format values (and --json, -o) split into the logs' and the output's format; a string
 * saying what is wrong when two of a kind were given, or html has no file to go to.
 */
export function chooseFormats(values: readonly string[], flags: { json?: boolean; outputFile?: string }): FormatChoice | string {
  const inputs = values.filter((v): v is InputFormat => (INPUT_FORMATS as readonly string[]).includes(v));
  const outputs = [...values.filter((v): v is OutputFormat => (OUTPUT_FORMATS as readonly string[]).includes(v)), ...(flags.json ? ['json' as const] : [])];
  if (new Set(inputs).size > 1) return `--format: one log format, not ${[...new Set(inputs)].join(' and ')} (analyze files of different formats in separate runs)`;
  if (new Set(outputs).size > 1) return `--format: one output format, not ${[...new Set(outputs)].join(' and ')}${flags.json ? ' (--json is --format json)' : ''}`;
  const output = outputs[0] ?? 'text';
  if (output === 'html' && flags.outputFile === undefined) return '--format html writes a file: give it with -o FILE (e.g. -o report.html)';
  return { input: inputs[0] ?? 'auto', output };
}

/** The result in the output format; html's renderer (and its chart library) loads only for html. */
export async function renderAnalyzeOutput(report: AnalyzeReport, format: OutputFormat): Promise<string> {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (format === 'text') return renderAnalyzeText(report);
  const { renderLogReportHtml } = await import('../report/log-report-html/index.js');
  return renderLogReportHtml(report);
}

/** Writes the result to `file`; the error names the file. */
export async function writeAnalyzeOutput(file: string, text: string): Promise<void> {
  try {
    await fsp.writeFile(file, text);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
  }
}
