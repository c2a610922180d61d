/**
 * The event as the log report folds it, at the `redact` level of what is printed and stored
 * (src/lib/redact.ts): every caller that folds the report (the daemon's per-minute rows, `pgvigil
 * analyze` in one thread or in range workers, and its --db rows) goes through here, so no report
 * holds more than the level allows.
 *
 * At `statements` the report keeps no statement text, yet still groups executions: each statement
 * becomes `(statement text redacted) #<fingerprint>` (fingerprint.ts), computed from the text
 * before it is dropped. At `literals` and `off` it is the event as stored.
 */
import type { AnyLogEvent } from '../../domain/index.js';
import { redactEvent, type RedactLevel } from '../../lib/redact.js';
import { redactedStatementMarker } from './fingerprint.js';

/** `event` (as read, unredacted) as the report folds it; `stored`: the same event already redacted at `level`, to reuse. */
export function reportableEvent(event: AnyLogEvent, level: RedactLevel, stored?: AnyLogEvent): AnyLogEvent {
  if (level === 'statements') return redactEvent(event, level, redactedStatementMarker);
  return stored ?? redactEvent(event, level);
}
