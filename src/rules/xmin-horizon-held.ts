/**
 * xmin-horizon-held: the oldest xmin horizon is older than a threshold, so vacuum keeps every row
 * version deleted after it; named by what holds it: a session (pid, user@database, state, how long
 * its transaction has been open), a prepared transaction, a replication slot by its owner (REPACK,
 * pg_squeeze, a subscription, a standby's physical slot, 19's pg_conflict_detection), or a
 * standby's hot_standby_feedback.
 *
 * From pg_xmin_horizon_holder_age_xids (src/collectors/pg-xmin-horizon.ts), on primaries only: a
 * standby's own queries hold nothing on the primary's tables (with hot_standby_feedback they show
 * on the primary as standby feedback). Left out or adjusted:
 * - lazy VACUUM, manual or autovacuum, and its parallel workers: it sets PROC_IN_VACUUM, and other
 *   backends' horizons ignore its xmin (VACUUM FULL does not, and holds like any transaction); the
 *   collector leaves them out before it keeps the oldest few holders;
 * - a REPACK slot holds every database from the run's start though its xmin is NULL and its
 *   catalog_xmin moves on (measured on 19rc1, pg-messages.md §13.2): its hold is the age of the
 *   REPACK session's transaction, which spans the whole run;
 * - a catalog-only hold (a logical slot's catalog_xmin) keeps only system catalogs from being
 *   vacuumed: it counts once it is old enough to stop their freezing (error_age_xids).
 */
import { sampledAsStandby, type LatestSample } from './rule-view.js';
import { describeHolder, HOLDER_AGE, openForMs } from './horizon-holder.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { formatCount } from './summary-format.js';

export const ID = 'xmin-horizon-held';


export interface XminHorizonHeldOptions {
  warnAgeXids: number;
  /**
   * A session's or prepared transaction's hold counts once its transaction has been open this
   * long: a burst of XIDs on a busy server ages a two-minute report past warnAgeXids, and that
   * report ends by itself. Slots and standby feedback have no start time: their age alone counts.
   */
  minHeldMs: number;
  /** autovacuum_freeze_max_age's default: past it, anti-wraparound vacuums cannot freeze either. */
  errorAgeXids: number;
}

export const DEFAULTS: XminHorizonHeldOptions = { warnAgeXids: 5_000_000, minHeldMs: 5 * 60_000, errorAgeXids: 200_000_000 };

export function xminHorizonHeld(options: XminHorizonHeldOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'The xmin horizon is old: vacuum cannot remove dead rows; names the session, prepared transaction, slot or standby holding it.',
    evaluate(view) {
      const byTarget = new Map<string, LatestSample[]>();
      const held = withRepackRunAge(newestPerHolder(view.latest(HOLDER_AGE)));
      for (const s of held) {
        const minAge = s.labels.scope === 'catalog' ? options.errorAgeXids : options.warnAgeXids;
        if (s.value === null || s.value < minAge || sampledAsStandby(view, s.target)) continue;
        const openMs = openForMs(view, s);
        if (openMs !== null && openMs < options.minHeldMs) continue;
        byTarget.set(s.target, [...(byTarget.get(s.target) ?? []), s]);
      }
      const findings: Finding[] = [];
      for (const [target, holders] of byTarget) {
        holders.sort((a, b) => (b.value ?? 0) - (a.value ?? 0));
        const oldest = holders[0]!;
        const age = oldest.value!;
        const others = holders.length - 1;
        const where = oldest.labels.scope === 'database' && oldest.labels.datname ? `in database ${oldest.labels.datname}` : 'in every database';
        const consequence = oldest.labels.scope === 'catalog'
          ? 'vacuum cannot freeze the system catalogs in any database past it: wraparound approaches'
          : `vacuum cannot remove rows deleted since, ${where}`;
        const more = others > 0 ? ` (and ${others} more holder${others === 1 ? '' : 's'} past ${formatCount(options.warnAgeXids)} XIDs)` : '';
        findings.push({
          dedupKey: findingKey(ID, target),
          target,
          labels: { kind: oldest.labels.kind ?? '', scope: oldest.labels.scope ?? '' },
          severity: age >= options.errorAgeXids ? 'error' : 'warning',
          summary: `xmin horizon is ${formatCount(age)} XIDs old, held by ${describeHolder(view, oldest)}; ${consequence}${more}`,
          evidence: evidenceOf({
            series: holders.slice(0, 5).map((h) => ({ name: HOLDER_AGE, labels: { ...h.labels }, value: h.value, tsMs: h.tsMs })),
            facts: { age_xids: age, holder_kind: oldest.labels.kind ?? null, holder_pid: oldest.labels.pid || null, holders_over_threshold: holders.length },
          }),
        });
      }
      return findings;
    },
  };
}

/**
 * One sample per holder, its newest: a session's labels (state, query) change with every query it
 * runs, and the series it leaves behind stay fresh for a while; counted as they are, one session
 * in a long transaction became "and N more holders" (seen live on PG 18). A slot or a prepared
 * transaction is its name, a session or a walsender its pid.
 */
function newestPerHolder(samples: LatestSample[]): LatestSample[] {
  const byHolder = new Map<string, LatestSample>();
  for (const s of samples) {
    const key = [s.target, s.labels.kind, s.labels.name || s.labels.pid || JSON.stringify(s.labels)].join('\u0000');
    const seen = byHolder.get(key);
    if (!seen || s.tsMs > seen.tsMs) byHolder.set(key, s);
  }
  return [...byHolder.values()];
}

/**
 * REPACK's slot with its hold from the run's start: the REPACK session's transaction age, when
 * that session is among the holders (it is then folded into the slot, not counted twice).
 */
function withRepackRunAge(holders: LatestSample[]): LatestSample[] {
  const runs = new Map<string, LatestSample>();
  for (const h of holders) {
    if (h.labels.owner === 'repack' && h.labels.kind?.startsWith('slot_') && h.labels.pid) runs.set(`${h.target}\u0000${h.labels.pid}`, h);
  }
  const sessionAge = new Map<LatestSample, number>();
  const rest = holders.filter((h) => {
    const slot = h.labels.kind === 'backend' ? runs.get(`${h.target}\u0000${h.labels.pid ?? ''}`) : undefined;
    if (slot && h.value !== null) sessionAge.set(slot, Math.max(sessionAge.get(slot) ?? 0, h.value));
    return !slot;
  });
  return rest.map((h) => {
    const age = sessionAge.get(h);
    return age === undefined ? h : { ...h, value: Math.max(h.value ?? 0, age), labels: { ...h.labels, scope: 'cluster' } };
  });
}

/** Sessions the collector recognised as table maintenance (src/collectors/maintenance-kind.ts). */
