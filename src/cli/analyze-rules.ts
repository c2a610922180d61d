/**
 * `pgvigil analyze --rules`: the daemon's rules engine and rules, replayed over the log being
 * analyzed on the log's own time (src/rules/replay.ts decides when the engine evaluates).
 *
 * The rules read a store, as in the daemon: the --db store, which then gets every event and the
 * alerts (so `pgvigil report --db` shows them), or a temporary file holding only the notable
 * events (classified ones and errors), removed at the end. Memory stays bounded: events go to
 * the store in batches, the rules read it by time window.
 *
 * At the end of the log an alert whose condition is already gone, but whose hold-down has not
 * run out, ends there: the hold-down keeps a flapping condition from paging twice, and nothing
 * pages offline, while "still open" would claim what the log does not show.
 *
 * Evidence is cited by position (`{file, line}`): a connection-local TEMP table maps the ids of
 * the notable events to their line, without changing the store's schema.
 *
 * Several servers' logs (a primary's and its standby's: one target per server, src/analyze/
 * file-targets.ts) are read one after the other but judged together, as they happened: their
 * events are stored first, then the engine steps through the notable events' times in order (the
 * rules read a window ending at the instant evaluated, so what a later file holds is not seen
 * early). Each server's role is told by its lines (a standby's recovery conflicts, its `ready to
 * accept read-only connections`): with standbys and at most one primary, the servers are one
 * cluster, as `cluster` in the daemon's targets config makes them, so a DROP on the primary and a
 * wait on the standby are read together (clusterOf in rule-view.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { basisOf, type Alert, type AnyLogEvent } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import type { OfflineAlert } from '../report/alerts-text.js';
import { isNotable } from '../report/incident-report.js';
import { RULES_DEFAULTS, buildRules, type RulesOptions } from '../rules/catalog.js';
import { RuleEngine } from '../rules/engine.js';
import type { Rule } from '../rules/rule.js';
import type { TargetInfo } from '../rules/rule-view.js';
import { EventTimeClock, REPLAY_DEFAULTS, ReplayStepper } from '../rules/replay.js';
import { StoreRuleViewSource } from '../rules/store-rule-view.js';
import { AlertStore } from '../store/alert-store.js';
import { openStore, type Db } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';

/**
 * What a config file (-c) sets of an offline replay: which rules run and their thresholds. Its
 * pacing (interval, hold-down) stays the replay's own, on the log's time.
 */
export type RulesConfig = Pick<RulesOptions, 'disabled' | 'thresholds'>;
const NO_RULES_CONFIG: RulesConfig = { disabled: [], thresholds: {} };

/** Events handed to the store writer at once; it commits them in one transaction. */
const BATCH_EVENTS = 5_000;

/**
 * How far a file may start before the end of the files read before it and still be their sequel:
 * at a rotation, lines timed just before it can land in the new file (a backend takes the time
 * before it writes), by milliseconds. A standby's log beside its primary's overlaps by the whole
 * incident: 2.4 s in the shortest test of two live servers.
 */
const SEQUEL_TOLERANCE_MS = 1_000;

/** A file's events' time span, in the order the files were read. */
export interface FileSpan {
  file: string;
  target: string;
  firstMs: number;
  lastMs: number;
}

/**
 * Files of one target that start well before the end of those read before them: logs of several
 * servers given one name (--target), or of overlapping hours, which the replay reads one after
 * the other as one server, so their events are judged late (docs/rules.md). One sentence per file.
 */
export function overlapWarnings(spans: readonly FileSpan[]): string[] {
  const warnings: string[] = [];
  const latest = new Map<string, FileSpan>();
  for (const span of spans) {
    const before = latest.get(span.target);
    if (before !== undefined && span.firstMs < before.lastMs - SEQUEL_TOLERANCE_MS) {
      warnings.push(`${span.file} starts at ${iso(span.firstMs)}, before ${before.file} ends (${iso(before.lastMs)}), and both are read as server ${span.target}: ` +
        'logs of several servers? give each its own with --target name=FILE; for one server\'s logs that overlap by hours, ' +
        `an incident in this one is judged only where it meets the end of ${before.file} (docs/rules.md)`);
    }
    if (before === undefined || span.lastMs > before.lastMs) latest.set(span.target, span);
  }
  return warnings;
}

export interface OfflineRulesStore {
  db: Db;
  writer: StoreWriter;
}

export class OfflineRules {
  private readonly clock = new EventTimeClock();
  private readonly stepper: ReplayStepper;
  private readonly engine: RuleEngine;
  private readonly rules: Rule[];
  private readonly views: StoreRuleViewSource;
  private readonly alerts: AlertStore;
  private readonly alertIds = new Set<number>();
  private readonly lineOf;
  private pending: AnyLogEvent[] = [];
  /** Each file's span, in reading order; the last one is the file being read. */
  private readonly spans: FileSpan[] = [];
  /** The servers read, with the cluster they are found to form (at the end, for several). */
  private readonly targets: TargetInfo[];
  /** Several servers: the notable events' times, stepped through in order at the end. */
  private readonly deferred: { notableMs: number[]; lastMs: number } | null;
  /** Servers whose lines show them in recovery. */
  private readonly standbys = new Set<string>();

  /**
   * `store`: the --db store, which takes every event; without it a temporary store that takes the
   * notable events only.
   */
  static open(store: OfflineRulesStore | null, targets: readonly string[], log: Logger, rulesConfig: RulesConfig = NO_RULES_CONFIG): OfflineRules {
    const options: RulesOptions = { ...RULES_DEFAULTS, disabled: rulesConfig.disabled, thresholds: rulesConfig.thresholds };
    if (store) return new OfflineRules(store.db, store.writer, 'every event', targets, log, null, options);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-replay-'));
    try {
      const db = openStore(path.join(dir, 'replay.sqlite'));
      return new OfflineRules(db, new StoreWriter(db, new EventTimeClock(), log), 'notable events', targets, log, dir, options);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  private constructor(
    private readonly db: Db,
    private readonly writer: StoreWriter,
    private readonly ingest: 'every event' | 'notable events',
    targets: readonly string[],
    log: Logger,
    private readonly tempDir: string | null,
    options: RulesOptions,
  ) {
    db.exec('CREATE TEMP TABLE IF NOT EXISTS replay_event_lines (event_id INTEGER PRIMARY KEY, line INTEGER)');
    const insertLine = db.prepare('INSERT OR REPLACE INTO temp.replay_event_lines (event_id, line) VALUES (?, ?)');
    this.lineOf = db.prepare<[number], { source_file: string; line: number | null }>(
      'SELECT e.source_file, l.line FROM events e LEFT JOIN temp.replay_event_lines l ON l.event_id = e.id WHERE e.id = ?',
    );
    let storeVersion = 0;
    writer.onFlush(({ events }) => {
      storeVersion++;
      for (const { id, event } of events) if (isNotable(event)) insertLine.run(id, event.source.line);
    });
    this.alerts = new AlertStore(db, []);
    this.alerts.onTransition(({ alert }) => this.alertIds.add(alert.id));
    this.rules = buildRules(options);
    this.targets = [...new Set(targets)].map((name) => ({ name, cluster: null }));
    this.deferred = this.targets.length > 1 ? { notableMs: [], lastMs: -Infinity } : null;
    // Only this writer changes the store during the replay: its flushes are the store's versions.
    this.views = new StoreRuleViewSource(db, {
      targets: this.targets, staleAfterMs: options.staleAfterMs, dataVersion: () => storeVersion,
    });
    this.engine = new RuleEngine({
      rules: this.rules,
      views: this.views,
      alerts: this.alerts,
      clock: this.clock,
      log,
      options,
    });
    this.stepper = new ReplayStepper({
      commit: () => this.commit(),
      evaluate: (nowMs) => this.engine.evaluate(nowMs),
      openAlerts: () => this.engine.stats.openAlerts,
    }, this.clock, { intervalMs: options.intervalMs, ...REPLAY_DEFAULTS });
  }

  /** Each event of the log, in reading order. */
  add(event: AnyLogEvent): void {
    this.spanOf(event);
    const notable = isNotable(event);
    if (showsStandby(event)) this.standbys.add(event.target);
    if (this.deferred) {
      if (notable) this.deferred.notableMs.push(event.tsMs);
      this.deferred.lastMs = Math.max(this.deferred.lastMs, event.tsMs);
    } else {
      this.stepper.beforeEvent(event.tsMs, notable);
    }
    if (this.ingest === 'notable events' && !notable) return;
    this.pending.push(event);
    if (this.pending.length >= BATCH_EVENTS) this.handOver();
  }

  /** After the last event: the final evaluation, then every alert the replay raised, oldest first. */
  finish(): OfflineAlert[] {
    if (this.deferred) this.stepThroughStored(this.deferred);
    this.stepper.finish();
    const endMs = this.stepper.lastEvaluatedMs;
    if (endMs !== null) this.endGoneConditions(endMs);
    return [...this.alertIds].sort((a, b) => a - b).map((id) => this.offlineAlert(this.alerts.get(id)!));
  }

  /** What the reading order of the files may have hidden from the rules (overlapWarnings). */
  overlaps(): string[] {
    return overlapWarnings(this.spans);
  }

  /**
   * Several servers: the events are stored; the engine steps through the notable events' times in
   * order, then to the last event of any server. Servers one cluster first (see the file's head).
   */
  private stepThroughStored(deferred: { notableMs: number[]; lastMs: number }): void {
    this.commit();
    const primaries = this.targets.filter((t) => !this.standbys.has(t.name));
    if (this.standbys.size > 0 && primaries.length <= 1) {
      const cluster = primaries[0]?.name ?? this.targets[0]!.name;
      for (const t of this.targets) t.cluster = cluster;
    }
    const times = Float64Array.from(deferred.notableMs).sort();
    for (const tsMs of times) this.stepper.beforeEvent(tsMs, true);
    if (deferred.lastMs > (times.at(-1) ?? -Infinity)) this.stepper.beforeEvent(deferred.lastMs, false);
  }

  private spanOf({ source: { file }, target, tsMs }: AnyLogEvent): void {
    let span = this.spans.at(-1);
    if (span?.file !== file) this.spans.push((span = { file, target, firstMs: tsMs, lastMs: tsMs }));
    if (tsMs < span.firstMs) span.firstMs = tsMs;
    if (tsMs > span.lastMs) span.lastMs = tsMs;
  }

  /** Closes and removes the temporary store (the --db one is the caller's). */
  close(): void {
    if (this.tempDir === null) return;
    this.db.close();
    rmSync(this.tempDir, { recursive: true, force: true });
  }

  /** Resolves, at the end of the log, the open alerts whose rule evaluated and no longer finds them. */
  private endGoneConditions(endMs: number): void {
    const view = this.views.at(endMs);
    const present = new Set<string>();
    const evaluated = new Set<string>();
    for (const rule of this.rules) {
      try {
        for (const finding of rule.evaluate(view, endMs)) present.add(finding.dedupKey);
        evaluated.add(rule.id);
      } catch {
        // The engine counted and logged it in the final evaluation; its alerts stay as they are.
      }
    }
    for (const alert of this.alerts.openAlerts()) {
      if (this.alertIds.has(alert.id) && evaluated.has(alert.ruleId) && !present.has(alert.dedupKey)) this.alerts.resolve(alert.dedupKey, endMs);
    }
  }

  private handOver(): void {
    if (this.pending.length === 0) return;
    this.writer.enqueue({ events: this.pending });
    this.pending = [];
    // Nothing evaluates (and commits) until every server's log is read: memory stays bounded.
    if (this.deferred) this.writer.flush();
  }

  private commit(): void {
    this.handOver();
    // A failed commit keeps the events in the writer and retries on the next one; the rules
    // meanwhile see what is stored, and the caller reports what could not be.
    this.writer.flush();
  }

  private offlineAlert(a: Alert): OfflineAlert {
    const { evidence } = a;
    return {
      rule: a.ruleId,
      severity: a.severity,
      target: a.target,
      summary: a.summary,
      started_at: iso(a.startedMs),
      ended_at: a.resolvedMs === null ? null : iso(a.resolvedMs),
      basis: basisOf(evidence),
      evidence: {
        events: evidence.eventIds.flatMap((id) => {
          const row = this.lineOf.get(id);
          return row ? [{ file: row.source_file, line: row.line }] : [];
        }),
        series: evidence.series.map((s) => ({ name: s.name, labels: s.labels, value: s.value, ts: iso(s.tsMs) })),
        facts: evidence.facts,
      },
    };
  }
}

/** Lines only a server in recovery logs: its startup process's and its queries' recovery conflicts, read-only readiness. */
function showsStandby(event: AnyLogEvent): boolean {
  return event.kind === 'recovery_conflict' || event.kind === 'recovery_conflict_wait' ||
    (event.kind === 'server_restart' && event.details.phase === 'ready' && event.details.read_only === true);
}

function iso(ms: number): string {
  return DateTime.fromMillis(ms, { zone: 'utc' }).toISO()!;
}
