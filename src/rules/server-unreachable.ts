/**
 * server-unreachable: pgvigil has not reached the server for `sustainMs` (2 min): every probe
 * since has failed (`pg_up` 0), whatever pgvigil had seen before. The server may be down (a
 * killed postmaster, a host reset, a standby that died quietly), not listening, or out of
 * connection slots; or pgvigil's own access is broken (a changed password or pg_hba line), which
 * the summary says apart because then the server may be fine. A planned restart takes less than
 * the sustain time and stays quiet.
 *
 * Severity: critical when the server itself is not answering (refused, timed out, full, not
 * accepting connections); error when it answers but refuses pgvigil (authentication, no such
 * database): users may be unaffected, but nothing watches the server until someone fixes it.
 *
 * From the poll scheduler's own series: `pg_up` and, beside each failed attempt,
 * `pgvigil_poll_unreachable_reason{reason}`. Resolves at the first successful probe.
 */
import type { UnreachableReason } from '../lib/pg-errors.js';
import type { LatestSample, RuleView } from './rule-view.js';
import { downSpell } from './down-spell.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample } from './sample-evidence.js';
import { formatDuration, formatTime } from './summary-format.js';

export const ID = 'server-unreachable';

export interface ServerUnreachableOptions {
  /** Every probe failing for this long. */
  sustainMs: number;
  /** How far back pg_up is read to find when it went down. */
  lookbackMs: number;
}

export const DEFAULTS: ServerUnreachableOptions = { sustainMs: 120_000, lookbackMs: 6 * 3_600_000 };

const UP = 'pg_up';
const REASON = 'pgvigil_poll_unreachable_reason';

const WHY: Record<UnreachableReason, string> = {
  refused: 'connection refused: the server is down or not listening',
  timeout: 'connection attempts time out: the host is down or unreachable',
  dns: 'its host name does not resolve',
  auth: "it refuses pgvigil's login (authentication failed or no pg_hba.conf entry): the server may be fine, but nothing watches it",
  no_database: "pgvigil's database does not exist: the server may be fine, but nothing watches it",
  too_many_clients: 'too many clients already: every connection slot is taken',
  starting_up: 'the database system is starting up (crash recovery or a standby not yet consistent)',
  shutting_down: 'the database system is shutting down',
  other: 'its connection attempts fail',
};

/** Reasons where the server answers: pgvigil's access is what is broken. */
const PGVIGIL_SIDE = new Set<UnreachableReason>(['auth', 'no_database']);

export function serverUnreachable(options: ServerUnreachableOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'critical',
    description: 'pgvigil has not reached the server for minutes: it is down, not listening, full, or refuses pgvigil.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const up of view.latest(UP)) {
        if (up.value !== 0) continue;
        const finding = unreachable(view, up, nowMs, options);
        if (finding) findings.push(finding);
      }
      return findings;
    },
  };
}

function unreachable(view: RuleView, up: LatestSample, nowMs: number, o: ServerUnreachableOptions): Finding | null {
  const { target } = up;
  const history = view.series(UP, { sinceMs: nowMs - o.lookbackMs, target })[0]?.points ?? [];
  const { lastUpMs, downSinceMs: downSince } = downSpell(history);
  if (downSince === undefined || nowMs - downSince < o.sustainMs) return null;
  const reasonSample = view.latest(REASON, { target }).sort((a, b) => b.tsMs - a.tsMs)[0];
  const reason = (reasonSample?.labels.reason ?? 'other') as UnreachableReason;
  const since = `since ${formatTime(downSince)}, ${lastUpMs !== undefined ? `last reached at ${formatTime(lastUpMs)}` : 'not reached once'}`;
  return {
    dedupKey: findingKey(ID, target),
    target,
    labels: { reason },
    severity: PGVIGIL_SIDE.has(reason) ? 'error' : 'critical',
    summary: `pgvigil cannot reach ${target} for ${formatDuration(nowMs - downSince)} (${since}): ${WHY[reason] ?? WHY.other}`,
    evidence: evidenceOf({
      series: [citeSample(up), ...(reasonSample ? [citeSample(reasonSample)] : [])],
      facts: { reason, down_since_ms: downSince, last_up_ms: lastUpMs ?? null },
    }),
  };
}
