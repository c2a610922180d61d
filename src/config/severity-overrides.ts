/**
 * A channel's min_severity and its min_severity_overrides, checked against what exists: an
 * override of a rule id or a target name that is not there would silently never apply, so each
 * is a config error naming the known ones.
 */
import type { SeverityRouting } from '../notify/severity-routing.js';
import { RULE_IDS } from '../rules/catalog.js';
import type { ConfigProblem } from './config-error.js';
import type { RawConfig } from './schema.js';

type RawChannel = Pick<NonNullable<RawConfig['notify']['pagerduty']>, 'min_severity' | 'min_severity_overrides'>;

/** `path`: the channel's key (notify.pagerduty, notify.webhooks.0...), for the problems. */
export function resolveSeverityRouting(path: string, channel: RawChannel, targetNames: readonly string[], problems: ConfigProblem[]): SeverityRouting {
  channel.min_severity_overrides.forEach((o, i) => {
    const at = `${path}.min_severity_overrides.${i}`;
    if (o.rule !== null && !(RULE_IDS as readonly string[]).includes(o.rule)) {
      problems.push({ path: `${at}.rule`, message: `unknown rule: one of ${RULE_IDS.join(', ')}`, value: o.rule });
    }
    if (o.target !== null && !targetNames.includes(o.target)) {
      problems.push({ path: `${at}.target`, message: `unknown target: one of ${targetNames.join(', ')}`, value: o.target });
    }
  });
  return {
    minSeverity: channel.min_severity,
    minSeverityOverrides: channel.min_severity_overrides.map((o) => ({ rule: o.rule, target: o.target, minSeverity: o.min_severity })),
  };
}
