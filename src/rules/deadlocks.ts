/**
 * deadlocks: `deadlock detected`, with the cycle PostgreSQL printed in the DETAIL: who waited for
 * which lock, blocked by whom, running what; and whose statement was cancelled to break it. One
 * alert per cycle shape (the same statements waiting for the same kinds of locks) per database
 * while it recurs: an application that updates the same rows in opposite orders deadlocks the
 * same way every time.
 *
 * Info: PostgreSQL broke the cycle itself and one transaction got an error; the fix is in the
 * application's lock order, not at 3 am. error-storm judges whether the rate is unusual.
 */
import { lockObjectName } from '../domain/lock-name.js';
import type { DeadlockProcess } from '../domain/index.js';
import { causeDigest, EPISODE_DEFAULTS, episodeEventIds, episodeSpan, liveEpisodes, type EpisodeOptions } from './cancel-episodes.js';
import type { RuleEvent } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { plural, quoteStatement } from './summary-format.js';

export const ID = 'deadlocks';

export type DeadlocksOptions = EpisodeOptions;

export const DEFAULTS: DeadlocksOptions = EPISODE_DEFAULTS;

type Deadlock = RuleEvent<'deadlock'>;

/** Statements in the cycle are quoted this short: a cycle has two or more. */
const QUOTE_CHARS = 80;

export function deadlocks(options: DeadlocksOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'Deadlocks, each with its cycle (who waited for what, blocked by whom, running what); one alert per cycle shape while it recurs.',
    evaluate(view, nowMs) {
      return liveEpisodes(view, 'deadlock', options, nowMs, (e) => `${e.database ?? ''}/${causeDigest(shapeOf(e))}`).map((episode): Finding => {
        const last = episode.events.at(-1)!;
        const cycle = describeCycle(last);
        const where = last.database === null ? episode.target : `${last.database} on ${episode.target}`;
        return {
          dedupKey: findingKey(ID, episode.target, episode.key),
          target: episode.target,
          labels: last.database === null ? {} : { database: last.database },
          summary: `${plural(episode.events.length, 'deadlock')} in ${where} ${episodeSpan(episode)}: ${cycle}` +
            `${last.pid === null ? '' : `; PostgreSQL cancelled pid ${last.pid}'s statement to break it`}`,
          evidence: evidenceOf({
            eventIds: episodeEventIds(episode),
            facts: { deadlocks: episode.events.length, cycle, cancelled_pid: last.pid, statement: last.details.statement },
          }),
        };
      });
    },
  };
}

/** What stays the same when the same code deadlocks again: per process, its lock's mode and kind and its statement's shape. */
function shapeOf(e: Deadlock): string {
  const parts = e.details.processes.map((p) => [p.lock_mode, p.lock_object?.type ?? null, p.lock_object?.relation_oid ?? null, p.query === null ? null : quoteStatement(p.query, 2_000)]);
  return JSON.stringify(parts.map((p) => JSON.stringify(p)).sort());
}

/** `pid 1 (UPDATE ...) waited for ShareLock on transaction 785, blocked by pid 2; pid 2 (...) waited ...`. */
function describeCycle(e: Deadlock): string {
  if (e.details.processes.length === 0) return 'the cycle was not logged';
  return e.details.processes.map(describeProcess).join('; ');
}

function describeProcess(p: DeadlockProcess): string {
  const running = p.query === null ? '' : ` (${quoteStatement(p.query, QUOTE_CHARS)})`;
  const waited = p.lock_mode === null ? '' : ` waited for ${p.lock_mode}${p.lock_object === null ? '' : ` on ${lockObjectName(p.lock_object)}`}`;
  const blocked = p.blocked_by_pid === null ? '' : `, blocked by pid ${p.blocked_by_pid}`;
  return `pid ${p.pid}${running}${waited}${blocked}`;
}
