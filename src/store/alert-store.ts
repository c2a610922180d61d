/**
 * Alert state in the store: the rules engine fires and resolves alerts here. Each transition is
 * written in ONE transaction together with its outbox rows (one per channel that takes it), so
 * a crash can lose neither the alert nor its notification, nor leave one without the other.
 *
 * Incidents: a new alert joins the open incident of its rule on its target, or opens one. A
 * channel that groups by incident (PagerDuty) is told about the incident as a whole, so an alert
 * storm on 40 tables is one page that says "40 tables", updated as members fire and resolve, and
 * resolved when the last member resolves.
 */
import { severityAtLeast, type Alert, type AlertTransition, type Evidence, type Severity } from '../domain/index.js';
import type { IncidentView, Notification, Notifier, Outbound } from '../notify/notifier.js';
import { highestSeverity } from '../notify/notifier.js';
import { OutboxTable } from '../notify/outbox-table.js';
import { channelMayHear } from '../notify/rejected-deliveries.js';
import { minSeverityFor } from '../notify/severity-routing.js';
import type { Db } from './open-store.js';
import { Silences } from './silences.js';

export interface FireInput {
  ruleId: string;
  dedupKey: string;
  severity: Severity;
  target: string;
  labels: Record<string, string>;
  summary: string;
  evidence: Evidence;
}

export interface TransitionResult {
  alert: Alert;
  /** Null when fire() only refreshed an alert that was already firing at the same severity. */
  transition: AlertTransition | null;
}

/** The notifier parts the store needs to file notifications (formatting is pure). */
export type NotificationFormatter = Pick<Notifier, 'channel' | 'groupBy' | 'groupWaitMs' | 'refreshIntervalMs' | 'minSeverity' | 'minSeverityOverrides' | 'format'>;

/** What a fire opened: a new alert, and with it perhaps a new incident. */
interface Opened {
  alert: boolean;
  incident: boolean;
}

const NOTHING_OPENED: Opened = { alert: false, incident: false };

export interface AlertRow {
  id: number;
  rule_id: string;
  dedup_key: string;
  severity: string;
  state: string;
  target: string;
  labels: string;
  summary: string;
  evidence: string;
  started_ms: number;
  updated_ms: number;
  resolved_ms: number | null;
  incident_id: number | null;
}

interface IncidentRow {
  id: number;
  rule_id: string;
  target: string;
  dedup_key: string;
  state: 'firing' | 'resolved';
  started_ms: number;
}

export class AlertStore {
  private readonly outbox: OutboxTable;
  private readonly silences: Silences;
  /** The silences in force at the last sweep for withheld alerts (afterEvaluation); undefined before the first. */
  private sweptWithSilences: string | undefined;
  private readonly listeners: Array<(result: TransitionResult) => void> = [];
  private readonly sql;

  constructor(
    private readonly db: Db,
    private readonly notifiers: readonly NotificationFormatter[],
  ) {
    this.outbox = new OutboxTable(db);
    this.silences = new Silences(db);
    this.sql = {
      openByKey: db.prepare(`SELECT * FROM alerts WHERE dedup_key = ? AND state = 'firing'`),
      byId: db.prepare('SELECT * FROM alerts WHERE id = ?'),
      open: db.prepare(`SELECT * FROM alerts WHERE state = 'firing' ORDER BY started_ms, id`),
      insertAlert: db.prepare(
        `INSERT INTO alerts (rule_id, dedup_key, severity, state, target, labels, summary, evidence, started_ms, updated_ms, incident_id)
         VALUES (?, ?, ?, 'firing', ?, ?, ?, ?, ?, ?, ?)`,
      ),
      updateAlert: db.prepare('UPDATE alerts SET severity = ?, labels = ?, summary = ?, evidence = ?, updated_ms = ? WHERE id = ?'),
      resolveAlert: db.prepare(`UPDATE alerts SET state = 'resolved', updated_ms = ?, resolved_ms = ? WHERE id = ?`),
      insertTransition: db.prepare('INSERT INTO alert_transitions (alert_id, ts_ms, to_state) VALUES (?, ?, ?)'),
      openIncident: db.prepare(`SELECT * FROM incidents WHERE rule_id = ? AND target = ? AND state = 'firing'`),
      incidentById: db.prepare('SELECT * FROM incidents WHERE id = ?'),
      nextIncidentId: db.prepare('SELECT coalesce(max(id), 0) + 1 FROM incidents').pluck(),
      insertIncident: db.prepare(
        `INSERT INTO incidents (id, rule_id, target, dedup_key, state, started_ms, updated_ms) VALUES (?, ?, ?, ?, 'firing', ?, ?)`,
      ),
      touchIncident: db.prepare('UPDATE incidents SET updated_ms = ? WHERE id = ?'),
      resolveIncident: db.prepare(`UPDATE incidents SET state = 'resolved', updated_ms = ?, resolved_ms = ? WHERE id = ?`),
      incidentMembers: db.prepare('SELECT * FROM alerts WHERE incident_id = ? AND (state = ? OR ? = 1) ORDER BY started_ms, id'),
    };
  }

  /** Called after each committed change (firing, re-severity, resolve). */
  onTransition(listener: (result: TransitionResult) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Opens an alert, or updates the one already firing under this dedup key. An update notifies
   * only when the severity changed; summary and evidence are kept current either way, and so is
   * a notification of it still waiting in the outbox (a page held for its group wait, or retried
   * while PagerDuty is down, then says what is true when it goes out).
   */
  fire(input: FireInput, nowMs: number): TransitionResult {
    const result = this.db.transaction(() => {
      const open = this.sql.openByKey.get(input.dedupKey) as AlertRow | undefined;
      if (open) return this.update(open, input, nowMs);
      const incident = this.incidentFor(input.ruleId, input.target, nowMs);
      const info = this.sql.insertAlert.run(
        input.ruleId, input.dedupKey, input.severity, input.target, JSON.stringify(input.labels), input.summary,
        JSON.stringify(input.evidence), nowMs, nowMs, incident.row.id,
      );
      const alert = this.alertById(Number(info.lastInsertRowid));
      const transition = this.record(alert, 'firing', nowMs);
      this.notify(alert, transition, incident.row, { alert: true, incident: incident.created }, nowMs);
      return { alert, transition };
    })();
    this.emit(result);
    return result;
  }

  /**
   * Keeps an open alert's summary and evidence current without a transition (what the rules
   * engine held back while only quantities moved, written before it resolves); a notification
   * still waiting says it too. Nothing when no alert is open under the key at that severity.
   */
  refresh(input: FireInput, nowMs: number): void {
    this.db.transaction(() => {
      const open = this.sql.openByKey.get(input.dedupKey) as AlertRow | undefined;
      if (open && open.severity === input.severity) this.update(open, input, nowMs);
    })();
  }

  /** Resolves the alert firing under dedupKey; null when none is. */
  resolve(dedupKey: string, nowMs: number): TransitionResult | null {
    const result = this.db.transaction((): TransitionResult | null => {
      const open = this.sql.openByKey.get(dedupKey) as AlertRow | undefined;
      if (!open) return null;
      this.sql.resolveAlert.run(nowMs, nowMs, open.id);
      const alert = this.alertById(open.id);
      const transition = this.record(alert, 'resolved', nowMs);
      const incident = open.incident_id === null ? null : (this.sql.incidentById.get(open.incident_id) as IncidentRow);
      this.notify(alert, transition, incident, NOTHING_OPENED, nowMs);
      return { alert, transition };
    })();
    if (result) this.emit(result);
    return result;
  }

  openAlerts(): Alert[] {
    return (this.sql.open.all() as AlertRow[]).map(alertFromRow);
  }

  get(id: number): Alert | null {
    const row = this.sql.byId.get(id) as AlertRow | undefined;
    return row ? alertFromRow(row) : null;
  }

  /**
   * Re-files firing alerts for channels that expire them unless refreshed (Alertmanager),
   * skipping alerts that already have a row waiting. Returns the rows filed.
   */
  enqueueRefresh(nowMs: number): number {
    const channels = this.notifiers.filter((n) => n.refreshIntervalMs !== null);
    if (channels.length === 0) return 0;
    return this.db.transaction(() => {
      let rows = 0;
      for (const alert of this.openAlerts()) {
        const transition = transitionOf(alert, 'firing', nowMs);
        for (const notifier of channels) {
          if (!channelMayHear(notifier.channel, alert)) continue;
          if (this.outbox.hasPendingFor(notifier.channel, alert.dedupKey)) continue;
          const outbound = notifier.format({ kind: 'alert', alert, transition });
          if (outbound === null || this.outbox.isWithheld(notifier.channel, outbound.dedupKey)) continue;
          this.outbox.enqueue(notifier.channel, outbound, nowMs, nowMs, alert.id);
          rows++;
        }
      }
      return rows;
    })();
  }

  private update(open: AlertRow, input: FireInput, nowMs: number): TransitionResult {
    this.sql.updateAlert.run(input.severity, JSON.stringify(input.labels), input.summary, JSON.stringify(input.evidence), nowMs, open.id);
    const alert = this.alertById(open.id);
    const incident = open.incident_id === null ? null : (this.sql.incidentById.get(open.incident_id) as IncidentRow);
    if (open.severity === input.severity) {
      if (open.summary !== input.summary) this.notify(alert, transitionOf(alert, 'firing', alert.startedMs), incident, NOTHING_OPENED, nowMs, 'pending only');
      return { alert, transition: null };
    }
    const transition = this.record(alert, 'firing', nowMs);
    this.notify(alert, transition, incident, NOTHING_OPENED, nowMs);
    return { alert, transition };
  }

  private incidentFor(ruleId: string, target: string, nowMs: number): { row: IncidentRow; created: boolean } {
    const open = this.sql.openIncident.get(ruleId, target) as IncidentRow | undefined;
    if (open) return { row: open, created: false };
    const id = this.sql.nextIncidentId.get() as number;
    this.sql.insertIncident.run(id, ruleId, target, incidentDedupKey(target, ruleId, nowMs, id), nowMs, nowMs);
    return { row: this.sql.incidentById.get(id) as IncidentRow, created: true };
  }

  private record(alert: Alert, to: 'firing' | 'resolved', nowMs: number): AlertTransition {
    this.sql.insertTransition.run(alert.id, nowMs, to);
    return transitionOf(alert, to, nowMs);
  }

  /**
   * Files the outbox rows of one transition, per channel: the alert itself or its incident, if
   * the channel takes its severity (routed). 'pending only': rewrites the notifications still
   * waiting and files no new one.
   */
  private notify(alert: Alert, transition: AlertTransition, incident: IncidentRow | null, opened: Opened, nowMs: number,
    only?: 'pending only' | 'withheld only'): void {
    // In a maintenance window a new alert is withheld from every channel, as one below its min_severity.
    const silenced = this.notifiers.length > 0 && this.silences.covering(alert.target, alert.ruleId, nowMs) !== null;
    // The incident view also resolves the incident with its last member: built on every transition
    // (notifiers or none); 'withheld only' builds it only for a channel that may be sent something.
    let view: IncidentView | null | undefined = only === 'withheld only' ? undefined : incident && this.incidentView(incident, transition, nowMs);
    for (const notifier of this.notifiers) {
      if (!channelMayHear(notifier.channel, alert)) continue;
      // An incident's rule and target are its members', so one lookup serves both kinds.
      const minSeverity = minSeverityFor(notifier, alert.ruleId, alert.target);
      if (only === 'withheld only' && (silenced || !severityAtLeast(alert.severity, minSeverity))) continue;
      view ??= incident ? this.incidentView(incident, transition, nowMs) : null;
      const notification: Notification = notifier.groupBy === 'incident' && view
        ? { kind: 'incident', incident: view }
        : { kind: 'alert', alert, transition };
      const outbound = notifier.format(notification);
      if (outbound === null) continue;
      if (only === 'pending only' && !this.outbox.hasPendingFor(notifier.channel, outbound.dedupKey)) continue;
      if (only === 'withheld only' && !this.outbox.isWithheld(notifier.channel, outbound.dedupKey)) continue;
      const created = notification.kind === 'incident' ? opened.incident : opened.alert;
      const severity = notification.kind === 'incident' ? notification.incident.severity : alert.severity;
      if (!this.routed(notifier.channel, minSeverity, outbound, silenced ? null : severity, created)) continue;
      const dueMs = opened.incident && notification.kind === 'incident' ? nowMs + notifier.groupWaitMs : nowMs;
      this.outbox.enqueue(notifier.channel, outbound, nowMs, dueMs, alert.id);
    }
  }

  /**
   * Sends what silences held back once they are over: an open alert that started in a silence was
   * withheld from every channel; when the silence ends (its time, or `silence expire`) and the
   * alert still fires, each channel whose min_severity it meets is sent its trigger now, as
   * Alertmanager does, rather than at the alert's next change. Run after each rules evaluation.
   */
  afterEvaluation(nowMs: number): void {
    if (this.notifiers.length === 0 || !this.outbox.hasWithheld()) return;
    // Only a change in the silences in force can release what is withheld without the alert
    // changing (min_severity is fixed): sweep the open alerts then, not at every evaluation.
    // Silences may be added or expired by another process (`pgvigil silence`): read each time.
    const silencesInForce = this.silences.inForceKey(nowMs);
    if (silencesInForce === this.sweptWithSilences) return;
    this.sweptWithSilences = silencesInForce;
    this.db.transaction(() => {
      for (const row of this.sql.open.all() as AlertRow[]) {
        const alert = alertFromRow(row);
        const incident = row.incident_id === null ? null : (this.sql.incidentById.get(row.incident_id) as IncidentRow);
        this.notify(alert, transitionOf(alert, 'firing', alert.startedMs), incident, NOTHING_OPENED, nowMs, 'withheld only');
      }
    })();
  }

  /**
   * Whether the channel is sent `outbound`, by its min_severity for the alert (`minSeverity`: the
   * channel's own, or an override's for the alert's rule or target). A new alert (or incident)
   * below it is withheld, and so are its changes until one reaches it; then the trigger goes out
   * and the channel hears the rest, a de-escalation and the resolve included. A withheld one's resolve is
   * not sent: the channel never heard of it. A silenced alert (severity null) is withheld the same
   * way: one that started in a silence is sent once it changes after the silence ends.
   */
  private routed(channel: string, minSeverity: Severity, outbound: Outbound, severity: Severity | null, created: boolean): boolean {
    if (outbound.action === 'resolve') return !this.outbox.release(channel, outbound.dedupKey);
    if (outbound.action !== 'trigger') return true;
    if (severity !== null && severityAtLeast(severity, minSeverity)) {
      this.outbox.release(channel, outbound.dedupKey);
      return true;
    }
    if (created) this.outbox.withhold(channel, outbound.dedupKey);
    return !created && !this.outbox.isWithheld(channel, outbound.dedupKey);
  }

  /** The incident after `transition`; resolves it when its last firing member resolved. */
  private incidentView(incident: IncidentRow, transition: AlertTransition, nowMs: number): IncidentView {
    let members = (this.sql.incidentMembers.all(incident.id, 'firing', 0) as AlertRow[]).map(alertFromRow);
    let state: 'firing' | 'resolved' = 'firing';
    if (members.length === 0) {
      this.sql.resolveIncident.run(nowMs, nowMs, incident.id);
      members = (this.sql.incidentMembers.all(incident.id, 'firing', 1) as AlertRow[]).map(alertFromRow);
      state = 'resolved';
    } else {
      this.sql.touchIncident.run(nowMs, incident.id);
    }
    return {
      dedupKey: incident.dedup_key,
      ruleId: incident.rule_id,
      target: incident.target,
      state,
      startedMs: incident.started_ms,
      severity: highestSeverity(members.map((m) => m.severity)),
      members,
      cause: transition,
    };
  }

  private alertById(id: number): Alert {
    return alertFromRow(this.sql.byId.get(id) as AlertRow);
  }

  private emit(result: TransitionResult): void {
    for (const listener of this.listeners) listener(result);
  }
}

/**
 * An incident's key: it opens with its first alert, so its start is that alert's. The start
 * keeps keys unique beyond this store: a new store file must not reuse the key of an incident
 * PagerDuty still has open from an old one. The central store, which holds no incidents, derives
 * them from their members with it.
 */
export function incidentDedupKey(target: string, ruleId: string, startedMs: number, incidentId: number): string {
  return `pgvigil/${target}/${ruleId}/${startedMs}-${incidentId}`;
}

export function alertFromRow(row: AlertRow): Alert {
  return {
    id: row.id,
    ruleId: row.rule_id,
    dedupKey: row.dedup_key,
    severity: row.severity as Severity,
    state: row.state as Alert['state'],
    target: row.target,
    labels: JSON.parse(row.labels) as Record<string, string>,
    summary: row.summary,
    evidence: JSON.parse(row.evidence) as Evidence,
    startedMs: row.started_ms,
    updatedMs: row.updated_ms,
    resolvedMs: row.resolved_ms,
  };
}

function transitionOf(alert: Alert, to: 'firing' | 'resolved', tsMs: number): AlertTransition {
  return {
    alertId: alert.id,
    dedupKey: alert.dedupKey,
    ruleId: alert.ruleId,
    severity: alert.severity,
    target: alert.target,
    labels: alert.labels,
    summary: alert.summary,
    evidence: alert.evidence,
    to,
    tsMs,
  };
}
