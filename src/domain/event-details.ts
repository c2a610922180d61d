/**
 * Per-kind fields of LogEvent.details, in snake_case. Owned by the classifiers
 * (src/parsers/classify/); each classifier file exports its kind's interface and this map
 * gathers them, so the LogEvent envelope stays generic.
 */
export interface GenericDetails {
  /** Always present for generic events so "what did we not understand" can be counted. */
  classified: false;
}

// Filled in per kind by the classifiers; until a kind has a classifier its details are open.
export interface EventDetailsByKind {
  autovacuum: Record<string, unknown>;
  autoanalyze: Record<string, unknown>;
  recovery_conflict: Record<string, unknown>;
  recovery_conflict_wait: Record<string, unknown>;
  lock_wait: Record<string, unknown>;
  lock_timeout: Record<string, unknown>;
  statement_timeout: Record<string, unknown>;
  idle_in_transaction_timeout: Record<string, unknown>;
  transaction_timeout: Record<string, unknown>;
  deadlock: Record<string, unknown>;
  checkpoint: Record<string, unknown>;
  server_crash: Record<string, unknown>;
  server_restart: Record<string, unknown>;
  temp_file: Record<string, unknown>;
  slot_invalidated: Record<string, unknown>;
  ddl: Record<string, unknown>;
  generic: GenericDetails;
}
