/**
 * idle-in-transaction-too-long: sessions idle inside a transaction for `minIdleMs` (10 min) or
 * more, one alert per database, user and application (never per pid: a pool's connections are
 * one cause). Such a session keeps every lock it took until its client commits or rolls back: a
 * row it updated blocks the next writer of that row, and any lock at all on a table makes an
 * ALTER TABLE, a DROP, a REPACK or a CREATE INDEX wait for it, and everyone queues behind that DDL
 * (drop-blocks-lock-queue). It holds them with or without an xmin (READ COMMITTED between
 * statements has none), so xmin-horizon-held cannot see it; that rule speaks when it also holds
 * vacuum back.
 *
 * Warning: nothing is broken until someone needs those locks, then everything is.
 *
 * Quiet on a normal day: applications keep transactions short; a session idle in a transaction
 * for seconds between statements (an ORM, a human at psql) is far under 10 minutes. From the
 * pg_stat_activity collector (every 15 s): `state_change` by the server's clock.
 */
import type { LatestSample, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, SLOW_COLLECTOR_MAX_AGE_MS } from './sample-evidence.js';
import { formatDuration, plural } from './summary-format.js';

export const ID = 'idle-in-transaction-too-long';

const IDLE_MAX = 'pg_stat_activity_idle_in_transaction_max_seconds';
const IDLE_SESSIONS = 'pg_stat_activity_idle_in_transaction';
const SESSION_TIMEOUT = 'pg_settings_idle_in_transaction_session_timeout_seconds';

export interface IdleInTransactionTooLongOptions {
  /** The longest idle wait of one identity's sessions. */
  minIdleMs: number;
}

export const DEFAULTS: IdleInTransactionTooLongOptions = { minIdleMs: 600_000 };

export function idleInTransactionTooLong(options: IdleInTransactionTooLongOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Sessions idle in a transaction for long: they keep their locks and block DDL; named by database, user and application.',
    evaluate(view) {
      return view.latest(IDLE_MAX, { unlessValue: { below: options.minIdleMs / 1000 } })
        .filter((s) => s.value !== null && s.value * 1000 >= options.minIdleMs)
        .map((s) => finding(view, s));
    },
  };
}

function finding(view: RuleView, longest: LatestSample): Finding {
  const { target, labels } = longest;
  const datname = labels.datname ?? '';
  const usename = labels.usename ?? '';
  const application = labels.application_name ?? '';
  const sessions = view.latest(IDLE_SESSIONS, { target, labels: { datname, usename, application_name: application } })[0];
  const count = sessions?.value ?? null;
  const timeout = view.latest(SESSION_TIMEOUT, { target, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0];
  const who = `user ${usename || '?'} (${application ? `application ${application}` : 'no application_name'}) in database ${datname || '?'} on ${target}`;
  const many = count !== null && count > 1;
  return {
    dedupKey: findingKey(ID, target, datname, usename, application),
    target,
    labels: { datname, usename, application_name: application },
    summary: `${count === null ? 'a session' : plural(count, 'session')} of ${who} ${many ? 'are' : 'is'} idle in a transaction, ` +
      `${many ? 'the longest ' : ''}for ${formatDuration(longest.value! * 1000)}: ${many ? 'they keep' : 'it keeps'} every lock taken, ` +
      `so DDL on those tables waits and queues everyone behind it${timeout?.value === 0 ? '; idle_in_transaction_session_timeout is off' : ''}`,
    evidence: evidenceOf({
      series: [longest, ...(sessions ? [sessions] : []), ...(timeout ? [timeout] : [])].map(citeSample),
      facts: { datname, usename, application_name: application, idle_seconds: Math.round(longest.value!), sessions: count, session_timeout_seconds: timeout?.value ?? null },
    }),
  };
}
