/**
 * transaction-open-too-long: a client session whose transaction has been open for `minOpenMs`
 * (1 h) or more, whatever it is doing now (running a statement, between statements, idle in the
 * transaction), one alert per session, named by pid, user, application, database, how long, the
 * relation locks it holds and the strongest of them, and its current or last statement.
 *
 * Warning: a transaction keeps every lock it took until it ends. A batch that reads a table at
 * its start keeps an AccessShareLock on it for hours, with no xmin between statements (READ
 * COMMITTED) and few XIDs on a quiet server, so xmin-horizon-held says nothing; the next ALTER
 * TABLE, DROP, REPACK or CREATE INDEX on that table waits for it, and every query queues behind
 * that DDL (drop-blocks-lock-queue). When it is idle in its transaction, idle-in-transaction-too-
 * long names its client too (from 10 min); this rule names the session itself.
 *
 * Quiet on a normal day: OLTP transactions last milliseconds, a report minutes. The long runs of
 * a normal day are left out by the pg_long_transactions collector before it keeps the oldest few:
 * pg_dump, walsenders (pg_basebackup, pg_receivewal, standbys), autovacuum, logical replication
 * workers, lazy VACUUM / ANALYZE, CREATE INDEX and REINDEX CONCURRENTLY. On a standby, sessions
 * block no DDL (replay cancels them past max_standby_streaming_delay): not judged.
 */
import { sampledAsStandby, type LatestSample, type RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample } from './sample-evidence.js';
import { formatDuration, plural, quoteStatement } from './summary-format.js';

export const ID = 'transaction-open-too-long';

const XACT_AGE = 'pg_long_transactions_xact_age_seconds';
const RELATION_LOCKS = 'pg_long_transactions_relation_locks';
const QUOTE_CHARS = 80;

export interface TransactionOpenTooLongOptions {
  /** How long a session's transaction has been open. */
  minOpenMs: number;
}

export const DEFAULTS: TransactionOpenTooLongOptions = { minOpenMs: 3_600_000 };

export function transactionOpenTooLong(options: TransactionOpenTooLongOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'A session\'s transaction open for long: it keeps every lock it took and blocks DDL; named by pid, user, application, database and the locks it holds.',
    evaluate(view) {
      const open = view.latest(XACT_AGE, { unlessValue: { below: options.minOpenMs / 1000 } })
        .filter((s) => s.value !== null && s.value * 1000 >= options.minOpenMs && !sampledAsStandby(view, s.target));
      return newestPerSession(open).map((s) => finding(view, s));
    },
  };
}

/** One sample per session: a session's state, query or strongest lock changing starts no new series, but a stale one may linger. */
function newestPerSession(samples: LatestSample[]): LatestSample[] {
  const bySession = new Map<string, LatestSample>();
  for (const s of samples) {
    const key = `${s.target}\u0000${s.labels.pid ?? ''}`;
    const seen = bySession.get(key);
    if (!seen || s.tsMs > seen.tsMs) bySession.set(key, s);
  }
  return [...bySession.values()];
}

function finding(view: RuleView, open: LatestSample): Finding {
  const { target, labels } = open;
  const pid = labels.pid ?? '';
  const datname = labels.datname ?? '';
  const usename = labels.usename ?? '';
  const application = labels.application_name ?? '';
  const state = labels.state ?? '';
  const locks = view.latest(RELATION_LOCKS, { target, labels: { pid, datname, usename, application_name: application } })[0];
  const lockCount = locks?.value ?? null;
  const strongest = labels.strongest_lock || null;
  const who = `user ${usename || '?'} (${application ? `application ${application}` : 'no application_name'}) in database ${datname || '?'} on ${target}`;
  const statement = labels.query ? `, ${state === 'active' ? 'running' : 'last statement'}: ${quoteStatement(labels.query, QUOTE_CHARS)}` : '';
  const held = lockCount === null ? 'keeps every lock it took'
    : lockCount === 0 ? 'holds no relation lock now but keeps any it takes'
      : `keeps ${plural(lockCount, 'relation lock')}${strongest ? ` (the strongest ${strongest})` : ''}`;
  return {
    dedupKey: findingKey(ID, target, pid),
    target,
    labels: { datname, usename, application_name: application },
    summary: `session pid ${pid} of ${who} has had a transaction open for ${formatDuration(open.value! * 1000)} ` +
      `(${state || 'state unknown'}${statement}): it ${held} until it ends, so DDL on those tables waits and queues everyone behind it`,
    evidence: evidenceOf({
      series: [open, ...(locks ? [locks] : [])].map(citeSample),
      facts: {
        pid: Number(pid), datname, usename, application_name: application, state, open_seconds: Math.round(open.value!),
        relation_locks: lockCount, strongest_lock: strongest, query: labels.query || null,
      },
    }),
  };
}
