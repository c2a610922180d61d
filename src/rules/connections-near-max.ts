/**
 * connections-near-max: client backends have filled `warnFraction` (90%) of the slots ordinary
 * roles may take (max_connections less superuser_reserved_connections and, from 16,
 * reserved_connections) in every probe for `sustainMs` (5 min). Names who holds them: the largest
 * users and applications by count from pg_stat_activity.
 *
 * Warning: at 100% the next ordinary connection is refused (`sorry, too many clients already`);
 * error once no slot is left, when it happens to users now.
 *
 * Quiet on a normal day: a pool sized well leaves room, and a burst (a deploy reconnecting every
 * worker, a batch opening its connections) passes within minutes. The count is the server's own
 * (the poll scheduler's probe every 10 s: client backends only, walsenders and background workers
 * have slots of their own).
 */
import type { LatestSample, RuleView, SeriesPoint } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, SLOW_COLLECTOR_MAX_AGE_MS } from './sample-evidence.js';
import { formatCount, formatDuration } from './summary-format.js';
import { trailingRun } from './trailing-run.js';

export const ID = 'connections-near-max';

const AVAILABLE = 'pg_connections_available';
const MAX_CONNECTIONS = 'pg_settings_max_connections';
const SUPERUSER_RESERVED = 'pg_settings_superuser_reserved_connections';
// PG 16+: slots for roles with pg_use_reserved_connections.
const RESERVED = 'pg_settings_reserved_connections';
const CONNECTIONS = 'pg_stat_activity_connections';
/** Holders named in the summary; the evidence cites them all. */
const TOP_HOLDERS = 3;

export interface ConnectionsNearMaxOptions {
  /** Share of the ordinary slots in use. */
  warnFraction: number;
  /** Over it in every probe for this long. */
  sustainMs: number;
}

export const DEFAULTS: ConnectionsNearMaxOptions = { warnFraction: 0.9, sustainMs: 300_000 };

export function connectionsNearMax(options: ConnectionsNearMaxOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Client connections near the slots ordinary roles may take, sustained; names the users and applications holding them.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const available of view.latest(AVAILABLE)) {
        const f = nearMax(view, available, nowMs, options);
        if (f) findings.push(f);
      }
      return findings;
    },
  };
}

function nearMax(view: RuleView, available: LatestSample, nowMs: number, o: ConnectionsNearMaxOptions): Finding | null {
  const { target } = available;
  const setting = (name: string) => view.latest(name, { target, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0];
  const max = setting(MAX_CONNECTIONS);
  const superuser = setting(SUPERUSER_RESERVED);
  const reserved = setting(RESERVED);
  if (max?.value == null || superuser?.value == null) return null;
  const reservedSlots = superuser.value + (reserved?.value ?? 0);
  const usable = max.value - reservedSlots;
  if (usable <= 0 || available.value === null) return null;
  const full = (p: SeriesPoint) => p.value !== null && (usable - p.value) / usable >= o.warnFraction;
  const points = view.series(AVAILABLE, { target, sinceMs: nowMs - o.sustainMs - 60_000 })[0]?.points ?? [];
  const run = trailingRun(points, full);
  const since = run[0]?.tsMs;
  if (since === undefined || nowMs - since < o.sustainMs) return null;

  const used = usable - available.value;
  const holders = holdersOf(view, target);
  const named = holders.slice(0, TOP_HOLDERS).map((h) => `${formatCount(h.connections)} ${h.usename || '?'} (${h.application_name || 'no application_name'})`);
  const refused = available.value <= 0;
  return {
    dedupKey: findingKey(ID, target),
    target,
    labels: {},
    severity: refused ? 'error' : 'warning',
    summary: `${formatCount(used)} of ${formatCount(usable)} connection slots for ordinary roles on ${target} in use ` +
      `(${Math.round((100 * used) / usable)}%) for ${formatDuration(nowMs - since)} ` +
      `(max_connections ${formatCount(max.value)}, ${formatCount(reservedSlots)} reserved)` +
      `${named.length > 0 ? `; most by user (application): ${named.join(', ')}` : ''}` +
      `${refused ? ': new connections are refused now ("sorry, too many clients already")' : ': once full, new connections are refused ("sorry, too many clients already")'}`,
    evidence: evidenceOf({
      series: [available, max, superuser, ...(reserved ? [reserved] : [])].map(citeSample),
      facts: {
        used_slots: used, usable_slots: usable, max_connections: max.value, reserved_slots: reservedSlots, full_since_ms: since,
        holders: holders.map((h) => `${h.usename} (${h.application_name}): ${h.connections}`).join('; '),
      },
    }),
  };
}

interface Holder {
  usename: string;
  application_name: string;
  connections: number;
}

/** Client backends per user and application (every database together), most first. */
function holdersOf(view: RuleView, target: string): Holder[] {
  const byHolder = new Map<string, Holder>();
  for (const s of view.latest(CONNECTIONS, { target })) {
    const usename = s.labels.usename ?? '';
    const application = s.labels.application_name ?? '';
    const key = JSON.stringify([usename, application]);
    const holder = byHolder.get(key) ?? { usename, application_name: application, connections: 0 };
    holder.connections += s.value ?? 0;
    byHolder.set(key, holder);
  }
  return [...byHolder.values()].sort((a, b) => b.connections - a.connections);
}
