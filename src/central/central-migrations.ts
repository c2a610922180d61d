/**
 * The central store's schema (issue #13): numbered, append-only migrations for plain PostgreSQL
 * 15-19, all in the schema `pgvigil`. Never edit a migration that has shipped: add one.
 * `pgvigil.schema_migrations` records which have run.
 *
 * Keys: every forwarded row is keyed by (target, store_id, local id) plus its partition time, so
 * a batch that is sent again after a crash on either side inserts nothing. store_id is the
 * sidecar store's random identity (SQLite store_identity): two stores reuse the same local ids.
 *
 * Partitions: one per UTC day per table, named <table>_YYYYMMDD, created ahead by
 * pgvigil.ensure_day_partitions (SECURITY DEFINER, so a forwarder needs no DDL rights) and dropped
 * whole by pgvigil.drop_partitions_before: retention never runs a DELETE.
 */
export const CENTRAL_MIGRATIONS: readonly string[] = [
  // 1: events, alerts with their evidence, alert transitions, downsampled series, targets.
  `
  CREATE TABLE pgvigil.targets (
    target     text        NOT NULL,
    store_id   uuid        NOT NULL,
    cluster    text,
    first_seen timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (target, store_id)
  );

  CREATE TABLE pgvigil.events (
    target        text        NOT NULL,
    store_id      uuid        NOT NULL,
    local_id      bigint      NOT NULL,
    ts            timestamptz NOT NULL,
    kind          text        NOT NULL,
    level         text        NOT NULL,
    sqlstate      text,
    pid           integer,
    database      text,
    user_name     text,
    message       text        NOT NULL,
    details       jsonb       NOT NULL,
    source_file   text        NOT NULL,
    source_offset bigint      NOT NULL,
    PRIMARY KEY (target, store_id, local_id, ts)
  ) PARTITION BY RANGE (ts);
  -- The report reads one window of one target (or all), and the fleet summary by kind.
  CREATE INDEX events_by_target_time ON pgvigil.events (target, ts);
  CREATE INDEX events_by_kind_time ON pgvigil.events (kind, ts);

  -- Partitioned by the start: it never changes, so an alert's row stays in one partition while
  -- its state, evidence and updated_at change.
  CREATE TABLE pgvigil.alerts (
    target            text        NOT NULL,
    store_id          uuid        NOT NULL,
    local_id          bigint      NOT NULL,
    rule_id           text        NOT NULL,
    dedup_key         text        NOT NULL,
    severity          text        NOT NULL,
    state             text        NOT NULL CHECK (state IN ('firing', 'resolved')),
    labels            jsonb       NOT NULL,
    summary           text        NOT NULL,
    -- Evidence event ids are local ids of the same (target, store_id).
    evidence          jsonb       NOT NULL,
    started_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    resolved_at       timestamptz,
    incident_local_id bigint,
    PRIMARY KEY (target, store_id, local_id, started_at)
  ) PARTITION BY RANGE (started_at);
  CREATE INDEX alerts_by_target_time ON pgvigil.alerts (target, started_at);
  CREATE INDEX alerts_by_rule_time ON pgvigil.alerts (rule_id, started_at);

  CREATE TABLE pgvigil.alert_transitions (
    target         text        NOT NULL,
    store_id       uuid        NOT NULL,
    local_id       bigint      NOT NULL,
    alert_local_id bigint      NOT NULL,
    ts             timestamptz NOT NULL,
    to_state       text        NOT NULL CHECK (to_state IN ('firing', 'resolved')),
    PRIMARY KEY (target, store_id, local_id, ts)
  ) PARTITION BY RANGE (ts);
  CREATE INDEX alert_transitions_by_alert ON pgvigil.alert_transitions (target, store_id, alert_local_id);

  -- Identity labels only (what the sidecar's series row holds); not partitioned: small.
  CREATE TABLE pgvigil.series (
    target   text   NOT NULL,
    store_id uuid   NOT NULL,
    local_id bigint NOT NULL,
    name     text   NOT NULL,
    labels   jsonb  NOT NULL,
    PRIMARY KEY (target, store_id, local_id)
  );
  CREATE INDEX series_by_name ON pgvigil.series (name, target);

  -- Downsampled: the latest value of each step (forward.postgres.step_ms) at the step's start.
  CREATE TABLE pgvigil.samples (
    target          text        NOT NULL,
    store_id        uuid        NOT NULL,
    series_local_id bigint      NOT NULL,
    ts              timestamptz NOT NULL,
    value           double precision,
    PRIMARY KEY (target, store_id, series_local_id, ts)
  ) PARTITION BY RANGE (ts);

  -- Creates the missing daily partitions of every partitioned table for the given UTC days.
  -- SECURITY DEFINER: forwarders call it without the right to create tables. The advisory lock
  -- serialises forwarders that find the same day missing at once.
  CREATE FUNCTION pgvigil.ensure_day_partitions(days date[]) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
  DECLARE
    day date;
    parent text;
    partition text;
    created integer := 0;
  BEGIN
    FOREACH day IN ARRAY days LOOP
      FOREACH parent IN ARRAY ARRAY['events', 'alerts', 'alert_transitions', 'samples'] LOOP
        partition := parent || '_' || to_char(day, 'YYYYMMDD');
        CONTINUE WHEN to_regclass(format('pgvigil.%I', partition)) IS NOT NULL;
        PERFORM pg_advisory_xact_lock(hashtext('pgvigil.ensure_day_partitions'));
        CONTINUE WHEN to_regclass(format('pgvigil.%I', partition)) IS NOT NULL;
        EXECUTE format('CREATE TABLE pgvigil.%I PARTITION OF pgvigil.%I FOR VALUES FROM (%L) TO (%L)',
          partition, parent, day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
        created := created + 1;
      END LOOP;
    END LOOP;
    RETURN created;
  END
  $fn$;
  REVOKE ALL ON FUNCTION pgvigil.ensure_day_partitions(date[]) FROM PUBLIC;

  -- Retention: drops the daily partitions that end at or before cutoff; returns their names.
  CREATE FUNCTION pgvigil.drop_partitions_before(cutoff timestamptz) RETURNS SETOF text
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
  DECLARE
    partition record;
  BEGIN
    FOR partition IN
      SELECT c.relname, p.relname AS parent
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_class p ON p.oid = i.inhparent
      JOIN pg_namespace n ON n.oid = p.relnamespace
      WHERE n.nspname = 'pgvigil' AND p.relname IN ('events', 'alerts', 'alert_transitions', 'samples')
        AND c.relname ~ '_[0-9]{8}$'
        AND (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC' <= cutoff
      ORDER BY c.relname
    LOOP
      EXECUTE format('DROP TABLE pgvigil.%I', partition.relname);
      RETURN NEXT partition.relname;
    END LOOP;
  END
  $fn$;
  REVOKE ALL ON FUNCTION pgvigil.drop_partitions_before(timestamptz) FROM PUBLIC;
  `,
  // 2: the language a log entry was read in (store migration 4, issue #16): NULL for English,
  // else the message catalog's (`de`, `ja`, `zh_CN`). Forwarded rows from before it stay NULL.
  `
  ALTER TABLE pgvigil.events ADD COLUMN language text;
  `,
  // 3: event details as json, not jsonb: the text as the sidecar sent it, checked but not
  // converted. Converting was about half of the central server's CPU per forwarded batch (the
  // forward bench); the fleet report reads details of autovacuum events only, a window at a time.
  `
  ALTER TABLE pgvigil.events ALTER COLUMN details TYPE json USING details::json;
  `,
  // 4: each forwarding role writes only its own targets' rows (issue #24 §5), so a compromised
  // sidecar cannot rewrite another's events, alerts or series. forward_roles names what a login
  // role may write ('*': every target); keyed by session_user, so SET ROLE to a shared group role
  // gains nothing. A trigger, not row-level security: COPY FROM, the forwarder's fast path, is
  // refused on a table with row-level security, while it fires row triggers. Reads are not
  // restricted. Superusers and the schema's owner (migrations, retention, repairs) are not
  // checked. Roles that could already write keep writing every target, so an upgrade does not
  // stop a fleet; docs/fleet.md says how to narrow them.
  `
  CREATE TABLE pgvigil.forward_roles (
    role_name name NOT NULL,
    target    text NOT NULL,
    PRIMARY KEY (role_name, target)
  );
  GRANT SELECT ON pgvigil.forward_roles TO PUBLIC;
  INSERT INTO pgvigil.forward_roles (role_name, target)
    SELECT DISTINCT pg_get_userbyid(a.grantee), '*'
    FROM pg_class c, aclexplode(c.relacl) a
    WHERE c.oid = 'pgvigil.events'::regclass AND a.privilege_type = 'INSERT' AND a.grantee NOT IN (0, c.relowner);

  CREATE FUNCTION pgvigil.check_forward_target() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
  DECLARE
    written text;
  BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = session_user AND r.rolsuper)
       OR session_user = (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = TG_RELID) THEN
      RETURN NEW;
    END IF;
    -- An update must own the row as it was and as it will be.
    FOREACH written IN ARRAY CASE WHEN TG_OP = 'UPDATE' THEN ARRAY[OLD.target, NEW.target] ELSE ARRAY[NEW.target] END LOOP
      IF NOT EXISTS (SELECT 1 FROM pgvigil.forward_roles f WHERE f.role_name = session_user AND f.target IN (written, '*')) THEN
        RAISE EXCEPTION 'role % may not write rows of target % in pgvigil.%', session_user, written, TG_TABLE_NAME
          USING ERRCODE = 'insufficient_privilege', HINT = 'pgvigil.forward_roles lists the targets each forwarding role writes (docs/fleet.md).';
      END IF;
    END LOOP;
    RETURN NEW;
  END
  $fn$;
  REVOKE ALL ON FUNCTION pgvigil.check_forward_target() FROM PUBLIC;

  DO $do$
  DECLARE
    t text;
  BEGIN
    FOREACH t IN ARRAY ARRAY['events', 'alerts', 'alert_transitions', 'series', 'samples', 'targets'] LOOP
      EXECUTE format('CREATE TRIGGER check_forward_target BEFORE INSERT OR UPDATE ON pgvigil.%I FOR EACH ROW EXECUTE FUNCTION pgvigil.check_forward_target()', t);
    END LOOP;
  END
  $do$;
  `,
  // 5: ensure_day_partitions bounded (issue #24 §5). A sidecar with a wrong clock (or a caller
  // with the forward role's credentials) could otherwise have it create partitions for any day,
  // four tables each: years ahead or back, thousands of tables. It refuses a day more than 7 days
  // after the central server's UTC date (PARTITION_DAYS_AHEAD, which migrate creates ahead anyway)
  // or more than 400 days before it (a year's old logs can still be drained), with SQLSTATE 22008
  // and the day in the message, before creating any: the batch fails, is counted in
  // pgvigil_forward_failures_total and retried. The unbounded function of migration 1 is kept,
  // renamed, as what the checked one calls; whoever could execute it now executes the checked one.
  `
  ALTER FUNCTION pgvigil.ensure_day_partitions(date[]) RENAME TO create_day_partitions;
  CREATE FUNCTION pgvigil.ensure_day_partitions(days date[]) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
  DECLARE
    day date;
    earliest constant date := (now() AT TIME ZONE 'UTC')::date - 400;
    latest constant date := (now() AT TIME ZONE 'UTC')::date + 7;
  BEGIN
    FOREACH day IN ARRAY days LOOP
      IF day < earliest OR day > latest THEN
        RAISE EXCEPTION 'pgvigil.ensure_day_partitions: day % is outside % to % (the central server''s UTC date -400/+7 days); is the sidecar''s clock wrong?', day, earliest, latest
          USING ERRCODE = 'datetime_field_overflow';
      END IF;
    END LOOP;
    RETURN pgvigil.create_day_partitions(days);
  END
  $fn$;
  REVOKE ALL ON FUNCTION pgvigil.ensure_day_partitions(date[]) FROM PUBLIC;
  DO $do$
  DECLARE
    grantee oid;
  BEGIN
    FOR grantee IN
      SELECT a.grantee FROM pg_proc p, aclexplode(p.proacl) a
      WHERE p.oid = 'pgvigil.create_day_partitions(date[])'::regprocedure AND a.grantee NOT IN (0, p.proowner)
    LOOP
      EXECUTE format('GRANT EXECUTE ON FUNCTION pgvigil.ensure_day_partitions(date[]) TO %I', pg_get_userbyid(grantee));
      EXECUTE format('REVOKE ALL ON FUNCTION pgvigil.create_day_partitions(date[]) FROM %I', pg_get_userbyid(grantee));
    END LOOP;
  END
  $do$;
  `,
  // 6: the log report per minute (issue #26), so that a fleet report has its log report. One row
  // per target, store and minute with every row the sidecar stores for that minute (JSON, section
  // key to state, as written): the sidecar later merges a minute's rows into one and adds rows for
  // late events, so the forwarder sends the minute whole again, and that replaces this row when it
  // is newer (through_local_id, the highest id of the minute's rows in the sidecar store, only
  // grows). The two partition functions of migration 1 gain the table by rewriting their own
  // definitions (one list each), not by a copy of their bodies. Roles that could write or read
  // alerts get the same on this table, so an upgrade does not stop a fleet.
  `
  CREATE TABLE pgvigil.report_minutes (
    target           text        NOT NULL,
    store_id         uuid        NOT NULL,
    -- The minute's start.
    ts               timestamptz NOT NULL,
    through_local_id bigint      NOT NULL,
    states           text[]      NOT NULL,
    PRIMARY KEY (target, store_id, ts)
  ) PARTITION BY RANGE (ts);
  CREATE TRIGGER check_forward_target BEFORE INSERT OR UPDATE ON pgvigil.report_minutes
    FOR EACH ROW EXECUTE FUNCTION pgvigil.check_forward_target();

  DO $do$
  DECLARE
    fn regprocedure;
    old_list constant text[] := ARRAY[
      $$ARRAY['events', 'alerts', 'alert_transitions', 'samples']$$,
      $$IN ('events', 'alerts', 'alert_transitions', 'samples')$$];
    new_list constant text[] := ARRAY[
      $$ARRAY['events', 'alerts', 'alert_transitions', 'samples', 'report_minutes']$$,
      $$IN ('events', 'alerts', 'alert_transitions', 'samples', 'report_minutes')$$];
    definition text;
    granted record;
  BEGIN
    FOREACH fn IN ARRAY ARRAY['pgvigil.create_day_partitions(date[])', 'pgvigil.drop_partitions_before(timestamptz)']::regprocedure[] LOOP
      definition := pg_get_functiondef(fn);
      FOR i IN 1 .. 2 LOOP
        definition := replace(definition, old_list[i], new_list[i]);
      END LOOP;
      IF definition = pg_get_functiondef(fn) THEN
        RAISE EXCEPTION '% does not list the partitioned tables as migration 1 wrote it', fn;
      END IF;
      EXECUTE definition;
    END LOOP;

    FOR granted IN
      SELECT DISTINCT pg_get_userbyid(a.grantee) AS role_name, a.privilege_type
      FROM pg_class c, aclexplode(c.relacl) a
      WHERE c.oid = 'pgvigil.alerts'::regclass AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE') AND a.grantee NOT IN (0, c.relowner)
    LOOP
      EXECUTE format('GRANT %s ON pgvigil.report_minutes TO %I', granted.privilege_type, granted.role_name);
    END LOOP;
  END
  $do$;
  `,
];
