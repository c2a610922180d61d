/**
 * Numbered, append-only schema migrations. Never edit a migration that has shipped: add one.
 * `PRAGMA user_version` records how many have run.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: events, series/samples, alerts, outbox, tailer offsets.
  `
  CREATE TABLE events (
    id            INTEGER PRIMARY KEY,
    target        TEXT    NOT NULL,
    ts_ms         INTEGER NOT NULL,
    kind          TEXT    NOT NULL,
    level         TEXT    NOT NULL,
    sqlstate      TEXT,
    pid           INTEGER,
    database      TEXT,
    user_name     TEXT,
    message       TEXT    NOT NULL,
    details       TEXT    NOT NULL,  -- JSON, snake_case fields of the kind
    source_file   TEXT    NOT NULL,
    source_offset INTEGER NOT NULL
  );
  CREATE INDEX events_by_time ON events (ts_ms);
  CREATE INDEX events_by_kind_time ON events (kind, ts_ms);

  CREATE TABLE series (
    id         INTEGER PRIMARY KEY,
    target     TEXT NOT NULL,
    name       TEXT NOT NULL,
    labels     TEXT NOT NULL,       -- canonical JSON (labelsKey)
    UNIQUE (target, name, labels)
  );
  -- WITHOUT ROWID keyed (series_id, ts_ms): range scans 2-10x faster than heap + index and
  -- half the file size (measured, see shared/reference/benchmarks.md).
  CREATE TABLE samples (
    series_id INTEGER NOT NULL REFERENCES series (id),
    ts_ms     INTEGER NOT NULL,
    value     REAL,                 -- NULL when the server reported NULL
    PRIMARY KEY (series_id, ts_ms)
  ) WITHOUT ROWID;

  CREATE TABLE alerts (
    id          INTEGER PRIMARY KEY,
    rule_id     TEXT    NOT NULL,
    dedup_key   TEXT    NOT NULL,
    severity    TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('firing', 'resolved')),
    target      TEXT    NOT NULL,
    labels      TEXT    NOT NULL,
    summary     TEXT    NOT NULL,
    evidence    TEXT    NOT NULL,
    started_ms  INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    resolved_ms INTEGER
  );
  CREATE UNIQUE INDEX alerts_one_open_per_key ON alerts (dedup_key) WHERE state = 'firing';
  CREATE INDEX alerts_by_time ON alerts (started_ms);

  CREATE TABLE alert_transitions (
    id       INTEGER PRIMARY KEY,
    alert_id INTEGER NOT NULL REFERENCES alerts (id),
    ts_ms    INTEGER NOT NULL,
    to_state TEXT    NOT NULL
  );

  CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY,
    channel         TEXT    NOT NULL,  -- notifier name, e.g. pagerduty
    dedup_key       TEXT    NOT NULL,
    payload         TEXT    NOT NULL,  -- JSON body to send
    created_ms      INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'rejected')),
    last_error      TEXT
  );
  CREATE INDEX outbox_due ON outbox (state, next_attempt_ms);

  CREATE TABLE tailer_offsets (
    target      TEXT    NOT NULL,
    source      TEXT    NOT NULL,  -- the configured log path or directory
    file_path   TEXT    NOT NULL,
    file_id     TEXT    NOT NULL,  -- dev:ino of the file, to recognise rotation
    offset      INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    PRIMARY KEY (target, source)
  );
  `,
  // 2: incidents (an alert storm of one rule on one target pages once, "N tables"), and what the
  // outbox needs to deliver in order and to coalesce updates that were not sent yet.
  `
  CREATE TABLE incidents (
    id          INTEGER PRIMARY KEY,
    rule_id     TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    dedup_key   TEXT    NOT NULL UNIQUE,  -- PagerDuty dedup_key of the incident
    state       TEXT    NOT NULL CHECK (state IN ('firing', 'resolved')),
    started_ms  INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    resolved_ms INTEGER
  );
  CREATE UNIQUE INDEX incidents_one_open_per_rule_target ON incidents (rule_id, target) WHERE state = 'firing';

  ALTER TABLE alerts ADD COLUMN incident_id INTEGER REFERENCES incidents (id);
  CREATE INDEX alerts_by_incident ON alerts (incident_id);

  -- trigger | resolve | change: only a pending row of the same action is coalesced.
  ALTER TABLE outbox ADD COLUMN action TEXT NOT NULL DEFAULT 'trigger';
  -- Bumped when a pending row's payload is replaced, so a send that raced the replacement does
  -- not delete the newer payload.
  ALTER TABLE outbox ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE outbox ADD COLUMN alert_id INTEGER;
  CREATE INDEX outbox_by_key ON outbox (channel, dedup_key, id);
  CREATE INDEX outbox_by_alert ON outbox (alert_id);
  `,
  // 3: what the rules' series queries need (issue #9 item 9). Rules ask for series of one name
  // with a sample in a recent window; series of sessions (a pid each) accumulate by the thousand,
  // so the lookup goes by (name, seen_ms) and never touches series that went quiet.
  `
  -- The newest sample's time, kept coarse: the writer moves it only once a sample is
  -- SEEN_STEP_MS past it (series-identity.ts), so every sample is < seen_ms + SEEN_STEP_MS.
  ALTER TABLE series ADD COLUMN seen_ms INTEGER;
  -- Descriptive labels (a session's query text, state, ...; series-identity.ts) as their latest
  -- values, canonical JSON like labels; NULL when the series has none. Not part of the identity.
  ALTER TABLE series ADD COLUMN info TEXT;
  UPDATE series SET seen_ms = (SELECT max(ts_ms) FROM samples WHERE series_id = series.id);
  CREATE INDEX series_by_name_seen ON series (name, seen_ms);

  -- Bumped by retention in the transaction that deletes series rows: the writer caches series
  -- ids, and a cached id of a deleted series would break the samples foreign key.
  CREATE TABLE series_retirement (generation INTEGER NOT NULL);
  INSERT INTO series_retirement (generation) VALUES (0);
  `,
  // 4: the language a log entry was read in (issue #16): NULL for English, else the catalog's
  // (`de`, `ja`); the message column keeps the server's own text.
  `
  ALTER TABLE events ADD COLUMN language TEXT;
  `,
  // 5: forwarding to a central PostgreSQL (src/forward/). The store's identity tells its rows
  // apart from another store's that reuse the same ids; the cursors say how far each stream was
  // forwarded (moved only after the central commit); alert changes queue the ids of alerts whose
  // row changed, since an alert is updated in place and has no monotonic id of its own.
  `
  CREATE TABLE store_identity (store_id TEXT NOT NULL);
  -- 128 random bits as 32 hex digits: PostgreSQL's uuid type reads them as they are.
  INSERT INTO store_identity (store_id) VALUES (lower(hex(randomblob(16))));

  CREATE TABLE forward_cursors (
    stream     TEXT    PRIMARY KEY,  -- events | alert_transitions | samples
    position   INTEGER NOT NULL,     -- last forwarded id; for samples, the end of the last forwarded step
    updated_ms INTEGER NOT NULL
  );

  CREATE TABLE forward_alert_changes (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    alert_id INTEGER NOT NULL
  );
  -- Queued only once forwarding has started (it sets the alerts cursor and queues the alerts that
  -- existed before): a store that never forwards does not grow this table.
  CREATE TRIGGER forward_alert_inserted AFTER INSERT ON alerts
    WHEN EXISTS (SELECT 1 FROM forward_cursors WHERE stream = 'alerts')
    BEGIN INSERT INTO forward_alert_changes (alert_id) VALUES (NEW.id); END;
  CREATE TRIGGER forward_alert_updated AFTER UPDATE ON alerts
    WHEN EXISTS (SELECT 1 FROM forward_cursors WHERE stream = 'alerts')
    BEGIN INSERT INTO forward_alert_changes (alert_id) VALUES (NEW.id); END;
  `,
  // 6: how far each target's log has been judged by its log-only rules (issue #11): events of the
  // target up to event_id were evaluated, and its rules ran up to at_ms. Moved in the transaction
  // that commits what the judging fired or resolved, so a kill never skips an event nor judges an
  // instant twice; a start catches up the events stored after it (src/rules/backlog-catch-up.ts).
  `
  CREATE TABLE log_judged (
    target     TEXT    PRIMARY KEY,
    event_id   INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
  );
  `,
  // 7: the alerts (or incidents) a channel was not sent because they were below its min_severity
  // (issue #23): their later changes stay unsent until one reaches it, and their resolve is never
  // sent. A key absent was sent, so alerts open in a store from before keep their resolves.
  `
  CREATE TABLE notify_withheld (
    channel   TEXT NOT NULL,
    dedup_key TEXT NOT NULL,
    PRIMARY KEY (channel, dedup_key)
  ) WITHOUT ROWID;
  `,
  // 8: an index for every filter /api/events offers (issue #24): by database and by target, each
  // with the time, so a filter on a quiet database reads its own events, not the window's all.
  `
  CREATE INDEX events_by_database_time ON events (database, ts_ms);
  CREATE INDEX events_by_target_time ON events (target, ts_ms);
  `,
  // 9: silences (issue #25): maintenance windows in which a target's alerts (or one rule's) are
  // recorded and shown but not delivered. Written by `pgvigil silence` and the API, read at every
  // notification by the alert store.
  `
  CREATE TABLE silences (
    id         INTEGER PRIMARY KEY,
    target     TEXT    NOT NULL,
    rule_id    TEXT,
    starts_ms  INTEGER NOT NULL,
    ends_ms    INTEGER NOT NULL,
    comment    TEXT    NOT NULL,
    created_by TEXT    NOT NULL
  );
  CREATE INDEX silences_by_end ON silences (ends_ms);
  `,
  // 10: the log report per minute (issue #26): each target's events folded into one state per
  // report section (src/report/log-report/). Every commit of the log's events carries the states
  // of what it read, one row per target and minute, in its own transaction (the statement lines
  // the events table does not keep included); once a minute is closed its rows are merged into
  // one, and once an hour is, its minutes are merged into an hour row beside them, so a report
  // over a week merges 168 hours, not 10,080 minutes. `pgvigil report` reads rows, not logs.
  `
  CREATE TABLE report_minutes (
    -- Never reused: the merging reads the rows added since the last id it read, and an hour row
    -- is current while its id is above every id of its minutes.
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    target      TEXT    NOT NULL,
    minute_ms   INTEGER NOT NULL,  -- the start of the minute (or hour), epoch ms
    span_ms     INTEGER NOT NULL,  -- 60000: a minute; 3600000: an hour, the merge of its minutes
    states      BLOB    NOT NULL   -- JSON, deflated: section key to the section's state
  );
  CREATE INDEX report_minutes_by_time ON report_minutes (span_ms, minute_ms, target);
  CREATE INDEX report_minutes_by_target_time ON report_minutes (target, minute_ms);
  `,
];
