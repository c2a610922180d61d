/**
 * statement-timeouts: statements cancelled by statement_timeout, one alert per statement shape
 * (literals removed) per database while they recur. Info: the guard did its job; the users of
 * that statement saw an error, and the statement names what ran too long. Quiet on nothing else:
 * an application that relies on statement_timeout shows here every day, and error-storm judges
 * whether today's rate is unusual.
 */
import { causeDigest, EPISODE_DEFAULTS, episodeEventIds, episodeSpan, liveEpisodes, type EpisodeOptions } from './cancel-episodes.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { plural, quoteStatement } from './summary-format.js';

export const ID = 'statement-timeouts';

export type StatementTimeoutsOptions = EpisodeOptions;

export const DEFAULTS: StatementTimeoutsOptions = EPISODE_DEFAULTS;

/** Long enough to tell two statements apart in the key; the summary quotes less. */
const SHAPE_CHARS = 2_000;

export function statementTimeouts(options: StatementTimeoutsOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'Statements cancelled by statement_timeout, one alert per statement shape and database while they recur.',
    evaluate(view, nowMs) {
      const shapeOf = (statement: string | null) => (statement === null ? null : quoteStatement(statement, SHAPE_CHARS));
      const episodes = liveEpisodes(view, 'statement_timeout', options, nowMs, (e) =>
        `${e.database ?? ''}/${causeDigest(shapeOf(e.details.statement) ?? '')}`);
      return episodes.map((episode): Finding => {
        const last = episode.events.at(-1)!;
        const statement = last.details.statement;
        const where = last.database === null ? episode.target : `${last.database} on ${episode.target}`;
        const what = statement === null ? 'a statement that was not logged' : quoteStatement(statement);
        return {
          dedupKey: findingKey(ID, episode.target, episode.key),
          target: episode.target,
          labels: last.database === null ? {} : { database: last.database },
          summary: `${plural(episode.events.length, 'statement')} cancelled by statement_timeout in ${where} ${episodeSpan(episode)}: ${what}`,
          evidence: evidenceOf({
            eventIds: episodeEventIds(episode),
            facts: {
              cancelled: episode.events.length,
              statement,
              database: last.database,
              pids: [...new Set(episode.events.map((e) => e.pid).filter((p) => p !== null))].join(', '),
            },
          }),
        };
      });
    },
  };
}
