/**
 * A dedicated connection for one actor of a scenario (the lock holder, the waiter, the standby
 * reader...). Scenarios need to keep a transaction open while another connection acts, and to send
 * a statement that will block without awaiting it, which PgServer.query's short-lived connections
 * cannot do.
 *
 * Never: swallow an unexpected error. A statement expected to fail is sent with `expectError`,
 * which resolves only when the server answers with that SQLSTATE.
 */
import pg from 'pg';
import type { PgServer } from '../pg-harness.js';

/** application_name of every scenario connection: shows in csvlog/jsonlog and in pg_stat_activity. */
export const SCENARIO_APPLICATION = 'pgvigil-scenario';

export class Session {
  private constructor(
    private readonly client: pg.Client,
    readonly pid: number,
    readonly label: string,
  ) {}

  static async open(server: PgServer, label: string, database = 'postgres'): Promise<Session> {
    const client = new pg.Client({ connectionString: server.dsn(database), application_name: SCENARIO_APPLICATION });
    // A session the server terminates on purpose (timeouts, recovery conflicts, crash) emits
    // 'error' while idle; the statement that meets it already rejects, so the event is not fatal.
    client.on('error', () => undefined);
    await client.connect();
    const result = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pid = result.rows[0]?.pid;
    if (pid === undefined) throw new Error(`session ${label}: pg_backend_pid() returned no row`);
    return new Session(client, pid, label);
  }

  async query<T extends pg.QueryResultRow = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    try {
      return (await this.client.query<T>(sql, params)).rows;
    } catch (error) {
      throw new Error(`session ${this.label} (pid ${this.pid}): ${sql}: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * Sends a statement that must fail with `sqlstate` and resolves with the error message;
   * rejects when it succeeds or fails otherwise.
   */
  async expectError(sql: string, sqlstate: string): Promise<string> {
    try {
      await this.client.query(sql);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === sqlstate) return (error as Error).message;
      throw new Error(`session ${this.label} (pid ${this.pid}): ${sql}: expected SQLSTATE ${sqlstate}, got ${code ?? 'none'}: ${(error as Error).message}`, { cause: error });
    }
    throw new Error(`session ${this.label} (pid ${this.pid}): ${sql}: expected SQLSTATE ${sqlstate}, but it succeeded`);
  }

  /** Closes the connection; a connection the server already ended closes quietly. */
  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

/** Closes every session, whatever happened to each. */
async function closeAll(sessions: readonly Session[]): Promise<void> {
  await Promise.all(sessions.map((session) => session.close()));
}

/**
 * Opens one session per key (the value names its database), runs `body` and closes them all,
 * however `body` ends.
 */
export async function withSessions<K extends string, T>(
  server: PgServer,
  databases: Record<K, string>,
  body: (sessions: Record<K, Session>) => Promise<T>,
): Promise<T> {
  const opened: Session[] = [];
  try {
    const sessions = {} as Record<K, Session>;
    for (const label of Object.keys(databases) as K[]) {
      const session = await Session.open(server, label, databases[label]);
      opened.push(session);
      sessions[label] = session;
    }
    return await body(sessions);
  } finally {
    await closeAll(opened);
  }
}

/** Escapes a regular-expression metacharacter-laden literal (table names, statements) for waitForLog. */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
