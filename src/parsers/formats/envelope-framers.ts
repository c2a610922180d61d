/**
 * The framer of each envelope, around the framer of the PostgreSQL format inside it.
 */
import type { Framer } from '../framer.js';
import { SyslogHeaderParser } from '../syslog-header.js';
import { TimestampParser } from '../timestamp.js';
import { cloudLoggingOpener } from './cloud-logging.js';
import { openCnpg } from './cnpg.js';
import { startsLineOf } from './detect-input.js';
import { EnvelopeFramer, type OpenEnvelope } from './envelope-framer.js';
import type { Envelope } from './input-format.js';
import { splitJoinedLine } from './joined-lines.js';
import { openLogplex } from './logplex.js';

export interface EnvelopeFramerOptions {
  /** log_line_prefix of the stderr lines inside. */
  prefix: string;
  syslog: boolean;
}

/** @param inner makes the framer of the lines inside (for CloudNativePG: jsonlog, into which its records are turned). */
export function createEnvelopeFramer(envelope: Envelope, inner: () => Framer, o: EnvelopeFramerOptions): Framer {
  switch (envelope) {
    case 'cnpg':
      return new EnvelopeFramer(inner(), openCnpg);
    case 'cloud_logging':
      return new EnvelopeFramer(inner(), cloudLoggingOpener(startsLineOf(o.prefix)));
    case 'logplex':
      return new EnvelopeFramer(inner(), openLogplex);
    case 'joined':
      return new EnvelopeFramer(inner(), openJoined(o.prefix, o.syslog));
  }
}

/** Splits a joined line into the lines it was; each piece keeps the line's syslog header, if any. */
function openJoined(prefix: string, syslog: boolean): OpenEnvelope {
  const startsLine = startsLineOf(prefix);
  const header = syslog ? new SyslogHeaderParser(new TimestampParser(), Date.now) : null;
  return (text) => {
    const start = header === null ? 0 : (header.parse(text)?.bodyStart ?? 0);
    const pieces = splitJoinedLine(text.slice(start), startsLine);
    if (start === 0) return pieces;
    const head = text.slice(0, start);
    return pieces.map((piece) => head + piece);
  };
}
