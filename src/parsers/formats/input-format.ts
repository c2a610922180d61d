/**
 * The formats `pgvigil analyze --format` names: PostgreSQL's own three, and the envelopes in
 * which logs arrive after a relay, a Kubernetes operator or a hosted service handled them. An
 * envelope wraps lines of one of the three (for CloudNativePG, csvlog's columns as JSON keys);
 * its framer (envelope-framer.ts, cnpg.ts) opens it and hands the PostgreSQL text on.
 */
import type { LogFormat } from '../framer.js';

export type Envelope =
  /** stderr entries whose lines a relay joined into one: tabs, rsyslog's #011/#012, a literal "\n". */
  | 'joined'
  /** CloudNativePG's instance manager on stdout: `{"logger":"postgres","msg":"record","record":{...}}`. */
  | 'cnpg'
  /** Google Cloud Logging exports (Cloud SQL, AlloyDB): `textPayload` or `jsonPayload.message`. */
  | 'cloud_logging'
  /** Heroku logplex drains: `<RFC 3339 time> app[postgres.<pid>]: [<attachment>] [<seq>-<line>] <text>`. */
  | 'logplex';

/** What --format accepts (operator-facing, so the CLI spelling). */
export const INPUT_FORMATS = ['auto', 'stderr', 'csvlog', 'jsonlog', 'joined', 'cnpg', 'cloud-logging', 'logplex'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

/** The envelope a --format names, with the PostgreSQL format inside it. */
const ENVELOPES: Readonly<Record<Exclude<InputFormat, 'auto' | LogFormat>, { envelope: Envelope; inner: LogFormat }>> = {
  joined: { envelope: 'joined', inner: 'stderr' },
  cnpg: { envelope: 'cnpg', inner: 'jsonlog' }, // its records are read as the jsonlog lines they would have been
  'cloud-logging': { envelope: 'cloud_logging', inner: 'stderr' },
  logplex: { envelope: 'logplex', inner: 'stderr' },
};

/** null for `auto`; the envelope (if any) and inner format otherwise. */
export function parseInputFormat(format: InputFormat): { format: LogFormat; envelope?: Envelope } | null {
  if (format === 'auto') return null;
  if (format === 'stderr' || format === 'csvlog' || format === 'jsonlog') return { format };
  const { envelope, inner } = ENVELOPES[format];
  return { format: inner, envelope };
}

/** The --format name of a detected format. */
export function inputFormatName(format: LogFormat, envelope: Envelope | undefined): InputFormat {
  if (envelope === undefined) return format;
  return envelope === 'cloud_logging' ? 'cloud-logging' : envelope;
}
