/**
 * A per-target cache of database and relation names by OID, so lock events (`relation 16394 of
 * database 5`) can name what they lock (`appdb.public.orders`) in the daemon.
 *
 * Lookups are synchronous Map reads: the tailer hands events and its file offset to the writer in
 * one batch, and a query per log line would both slow it and load the server. A miss schedules a
 * background load instead (the database list from pg_database; one database's relations in one
 * bulk query), so later events resolve. Loads happen at most every minReloadMs per database, and
 * a database's relations are capped (maxRelationsPerDatabase), so a storm of unknown OIDs or a
 * server with millions of relations costs little. Names older than maxAgeMs are still served
 * while a reload is scheduled: a renamed table reads under its old name for a few minutes, and
 * the OIDs stay beside the name (lock-name.ts).
 */
import type { AnyLogEvent, Clock, LockObject } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';

/** Runs catalog SQL in a database by name (null: the target's own database). */
export type CatalogQuery = (database: string | null, sql: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>;

export interface RelationNamesOptions {
  query: CatalogQuery;
  clock: Clock;
  logger: Logger;
  /** Names older than this are reloaded in the background (default 10 min). */
  maxAgeMs?: number;
  /** A miss reloads a list no more often than this (default 1 min). */
  minReloadMs?: number;
  maxRelationsPerDatabase?: number;
  /** warm() stops loading databases once this many names are held (default 200,000). */
  maxWarmRelations?: number;
}

export interface ResolvedNames {
  database: string;
  /** `schema.table`; null when only the database is known. */
  relation: string | null;
}

const DATABASES_SQL = 'SELECT oid::int8 AS oid, datname FROM pg_database';
// Tables, partitioned tables, indexes, partitioned indexes, materialized views, TOAST tables and
// sequences: what a relation lock can be taken on.
const RELATIONS_SQL = `SELECT c.oid::int8 AS oid, n.nspname, c.relname
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'i', 'I', 'm', 't', 'S')
  ORDER BY c.oid LIMIT $1`;

interface NameList {
  names: Map<number, string>;
  loadedMs: number;
}

export class RelationNames {
  private readonly maxAgeMs: number;
  private readonly minReloadMs: number;
  private readonly maxRelations: number;
  private readonly maxWarmRelations: number;
  private databases: NameList = { names: new Map(), loadedMs: -Infinity };
  private readonly relations = new Map<number, NameList>();
  /** Loads started and not yet finished or failed, by key; also when each last started. */
  private readonly loading = new Map<string, Promise<void>>();
  private readonly lastAttemptMs = new Map<string, number>();
  private warming: Promise<void> | null = null;

  constructor(private readonly options: RelationNamesOptions) {
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.minReloadMs = options.minReloadMs ?? 60_000;
    this.maxRelations = options.maxRelationsPerDatabase ?? 100_000;
    this.maxWarmRelations = options.maxWarmRelations ?? 200_000;
  }

  /** The names of a database and (when given) one of its relations; null when the database is unknown yet. */
  nameOf(databaseOid: number, relationOid: number | null): ResolvedNames | null {
    const database = this.databases.names.get(databaseOid);
    this.refreshDatabasesIfStale(database === undefined);
    if (database === undefined) return null;
    if (relationOid === null) return { database, relation: null };
    const list = this.relations.get(databaseOid);
    const relation = list?.names.get(relationOid);
    this.refreshRelationsIfStale(databaseOid, database, list, relation === undefined);
    return { database, relation: relation ?? null };
  }

  /** Fills database_name and relation_name on every lock object of the events it knows, in place. */
  annotate(events: readonly AnyLogEvent[]): void {
    for (const event of events) {
      for (const lock of lockObjectsOf(event)) this.annotateLock(lock);
    }
  }

  /**
   * Loads the database list, then each database's relations one query at a time, until
   * maxWarmRelations names are held: run at start, so the first lock event of an incident (often
   * the DDL that causes it) is named too, not only those after its miss.
   */
  warm(): Promise<void> {
    this.warming ??= this.loadAll().finally(() => (this.warming = null));
    return this.warming;
  }

  /** Resolves when no load is in flight, a warm() included (tests). */
  async settled(): Promise<void> {
    await this.warming;
    await this.loadsDone();
  }

  private async loadAll(): Promise<void> {
    this.refreshDatabasesIfStale(true);
    await this.loadsDone();
    for (const [oid, database] of this.databases.names) {
      if (this.cachedRelations() >= this.maxWarmRelations) return;
      if (!this.relations.has(oid)) this.refreshRelationsIfStale(oid, database, undefined, true);
      await this.loadsDone();
    }
  }

  private async loadsDone(): Promise<void> {
    while (this.loading.size > 0) await Promise.all(this.loading.values());
  }

  private cachedRelations(): number {
    let total = 0;
    for (const list of this.relations.values()) total += list.names.size;
    return total;
  }

  private annotateLock(lock: LockObject): void {
    if (lock.database_oid === null) return;
    const names = this.nameOf(lock.database_oid, lock.relation_oid);
    if (!names) return;
    lock.database_name = names.database;
    if (names.relation !== null) lock.relation_name = names.relation;
  }

  private refreshDatabasesIfStale(missed: boolean): void {
    if (!this.due(this.databases, missed)) return;
    this.load('\u0000databases', async () => {
      const rows = await this.options.query(null, DATABASES_SQL, []);
      this.databases = { names: new Map(rows.map((r) => [Number(r.oid), String(r.datname)])), loadedMs: this.options.clock.nowMs() };
      for (const oid of this.relations.keys()) if (!this.databases.names.has(oid)) this.relations.delete(oid);
    });
  }

  private refreshRelationsIfStale(databaseOid: number, database: string, list: NameList | undefined, missed: boolean): void {
    if (list && !this.due(list, missed)) return;
    this.load(`relations:${databaseOid}`, async () => {
      const rows = await this.options.query(database, RELATIONS_SQL, [this.maxRelations]);
      const names = new Map(rows.map((r) => [Number(r.oid), `${String(r.nspname)}.${String(r.relname)}`]));
      this.relations.set(databaseOid, { names, loadedMs: this.options.clock.nowMs() });
    });
  }

  /** A list is reloaded when old, or on a miss; either way not more often than minReloadMs. */
  private due(list: NameList, missed: boolean): boolean {
    const ageMs = this.options.clock.nowMs() - list.loadedMs;
    return ageMs >= this.maxAgeMs || (missed && ageMs >= this.minReloadMs);
  }

  private load(key: string, run: () => Promise<void>): void {
    const nowMs = this.options.clock.nowMs();
    if (this.loading.has(key) || nowMs - (this.lastAttemptMs.get(key) ?? -Infinity) < this.minReloadMs) return;
    this.lastAttemptMs.set(key, nowMs);
    const done = run()
      .catch((err: unknown) => {
        // Names are a convenience: the OIDs are still there. Tried again after minReloadMs.
        this.options.logger.debug({ load: key, err: err instanceof Error ? err.message : String(err) }, 'could not load catalog names');
      })
      .finally(() => this.loading.delete(key));
    this.loading.set(key, done);
  }
}

function lockObjectsOf(event: AnyLogEvent): LockObject[] {
  switch (event.kind) {
    case 'lock_wait': return [event.details.lock_object];
    case 'lock_timeout': return event.details.lock_object ? [event.details.lock_object] : [];
    case 'deadlock': return event.details.processes.flatMap((p) => (p.lock_object ? [p.lock_object] : []));
    default: return [];
  }
}
