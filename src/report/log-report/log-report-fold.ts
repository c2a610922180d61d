/**
 * Every registered section's state (index.ts) at once, as `pgvigil analyze` folds them: a range
 * worker folds the events it posts and sends `states` with its result; the merge joins the ranges'
 * states in file order; the single-threaded run folds every event itself. Same results either way.
 *
 * Owns: the states of all sections together. Never: a section's own logic.
 */
import type { AnyLogEvent } from '../../domain/index.js';
import { LOG_REPORT_SECTIONS } from './index.js';
import { DEFAULT_REPORT_LIMITS, type ReportLimits } from './section.js';

/** Section key to its state: JSON, posted between threads as it is. */
export type LogReportStates = Record<string, unknown>;

export class LogReportFold {
  private readonly sections = LOG_REPORT_SECTIONS;
  /** The same states in the sections' order: the per-event loop reads no keys. */
  private readonly ordered: unknown[];
  readonly states: LogReportStates;

  constructor(private readonly limits: ReportLimits = DEFAULT_REPORT_LIMITS) {
    this.states = Object.fromEntries(this.sections.map((s) => [s.key, s.empty()]));
    this.ordered = this.sections.map((s) => this.states[s.key]);
  }

  add(event: AnyLogEvent): void {
    for (let i = 0; i < this.sections.length; i++) this.sections[i]!.add(this.ordered[i], event, this.limits);
  }

  /** `later` (the states of what follows in the log) merged into this fold's. */
  merge(later: LogReportStates): void {
    this.sections.forEach((section, i) => {
      const merged = section.merge(this.ordered[i], later[section.key], this.limits);
      this.ordered[i] = merged;
      this.states[section.key] = merged;
    });
  }

  /** Section key to its result, in the sections' order. */
  results(): Record<string, unknown> {
    return Object.fromEntries(this.sections.map((section, i) => [section.key, section.result(this.ordered[i], this.limits)]));
  }
}
