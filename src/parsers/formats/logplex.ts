/**
 * Heroku Postgres logs from a logplex drain or `heroku logs -p postgres`, in the shape pgBadger's
 * `-f logplex` reads (pgbadger 12, its logplex $compiled_prefix):
 *
 *   2020-09-24T19:49:50.000000+00:00 app[postgres.135]: [PINK] [18751-1]  sql_error_code = 00000 LOG:  checkpoint complete: ...
 *   2017-06-28T15:10:02+00:00 app[postgres.13761]: [DATABASE] [7-2] \tFROM table
 *
 * an RFC 3339 time, an optional drain token, `app[postgres.<pid>]:`, the database attachment in
 * brackets, then syslog's `[<message>-<line>]` numbering (write_syslog() sends each line of a
 * message as its own numbered piece) and the server's log_line_prefix (` sql_error_code = %e `).
 * A line becomes the syslog line it was (`<time> <attachment> postgres[<pid>]: [<n>-<m>] <text>`),
 * which the stderr framer reads with its syslog header; lines of other dynos are skipped.
 */
import type { OpenEnvelope } from './envelope-framer.js';

const LOGPLEX_LINE =
  /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)) +(?:\S+ +)?app\[postgres\.(\d{1,10})\]:? +\[([^\]\s]{1,255})\] +\[(\d{1,20}-\d{1,10})\] ?/;

/** Heroku Postgres' log_line_prefix. */
export const HEROKU_PREFIX = ' sql_error_code = %e ';

export const openLogplex: OpenEnvelope = (text) => {
  const m = LOGPLEX_LINE.exec(text);
  if (m === null) return null;
  return [`${m[1]} ${m[3]} postgres[${m[2]}]: [${m[4]}] ${text.slice(m[0].length)}`];
};

export function isLogplexLine(text: string): boolean {
  return LOGPLEX_LINE.test(text);
}
