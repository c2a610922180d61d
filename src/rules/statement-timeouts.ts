/**
 * statement-timeouts: statements cancelled by statement_timeout, one alert per statement shape
 * (literals removed) per database while they recur. Info: the guard did its job; the users of
 * that statement saw an error, and the statement names what ran too long. Quiet on nothing else:
 * an application that relies on statement_timeout shows here every day, and error-storm judges
 * whether today's rate is unusual.
 */
import { EPISODE_DEFAULTS, episodeEventIds, episodePids, episodeSpan, liveEpisodes, statementCause, statementCauseKey, type EpisodeOptions } from './cancel-episodes.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { plural } from './summary-format.js';

export const ID = 'statement-timeouts';

export type StatementTimeoutsOptions = EpisodeOptions;

export const DEFAULTS: StatementTimeoutsOptions = EPISODE_DEFAULTS;

export function statementTimeouts(options: StatementTimeoutsOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'Statements cancelled by statement_timeout, one alert per statement shape and database while they recur.',
    evaluate(view, nowMs) {
      const episodes = liveEpisodes(view, 'statement_timeout', options, nowMs, (e) => statementCauseKey(e.database, e.details.statement));
      return episodes.map((episode): Finding => {
        const last = episode.events.at(-1)!;
        const statement = last.details.statement;
        const { where, what, labels } = statementCause(episode, statement);
        return {
          dedupKey: findingKey(ID, episode.target, episode.key),
          target: episode.target,
          labels,
          summary: `${plural(episode.events.length, 'statement')} cancelled by statement_timeout in ${where} ${episodeSpan(episode)}: ${what}`,
          evidence: evidenceOf({
            eventIds: episodeEventIds(episode),
            facts: {
              cancelled: episode.events.length,
              statement,
              database: last.database,
              pids: episodePids(episode),
            },
          }),
        };
      });
    },
  };
}
