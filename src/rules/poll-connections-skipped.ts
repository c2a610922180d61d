/**
 * poll-connections-skipped (info): pgvigil opens no connection to the server because fewer than
 * collectors.min_free_connections slots would stay free for ordinary roles (max_connections less
 * the reserved slots and the client backends): its visits to databases it holds no connection to
 * are skipped, so their per-table series go stale. Info, not warning: pgvigil stepping aside is
 * by design; what fills the server is for the DBA to see, and the finding says how full it is.
 *
 * From the poll scheduler's own series (on every probe, 10 s): it resolves at the first probe
 * after a connection could be opened again. Nothing in the log says it (the server refuses no
 * one: pgvigil never tries).
 */
import type { LatestSample } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample } from './sample-evidence.js';

export const ID = 'poll-connections-skipped';

const SKIPPING = 'pgvigil_poll_connects_skipping';
const SKIPPED = 'pgvigil_poll_connects_skipped_total';
const AVAILABLE = 'pg_connections_available';

/** No thresholds: collectors.min_free_connections decides when pgvigil steps aside. */
export type PollConnectionsSkippedOptions = Record<string, never>;

export const DEFAULTS: PollConnectionsSkippedOptions = {};

export function pollConnectionsSkipped(): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'pgvigil skips database visits: the server is too near max_connections to open a connection.',
    evaluate(view) {
      const findings: Finding[] = [];
      for (const skipping of view.latest(SKIPPING)) {
        if (skipping.value !== 1) continue;
        const { target } = skipping;
        const available = view.latest(AVAILABLE, { target })[0];
        const skipped = view.latest(SKIPPED, { target })[0];
        findings.push({
          dedupKey: findingKey(ID, target),
          target,
          labels: {},
          summary: `pgvigil opens no connection to ${target}: ` +
            `${available?.value != null ? `only ${available.value} connection slots are free for ordinary roles` : 'the server is near max_connections'}, ` +
            `so database visits are skipped${skipped?.value != null ? ` (${skipped.value} so far)` : ''} and their table series go stale`,
          evidence: evidenceOf({
            series: [skipping, available, skipped].filter((s): s is LatestSample => s !== undefined).map(citeSample),
            facts: { available_slots: available?.value ?? null, skipped_connects: skipped?.value ?? null },
          }),
        });
      }
      return findings;
    },
  };
}
