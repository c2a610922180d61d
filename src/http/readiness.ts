/**
 * /readyz: is pgvigil doing its job? Three aspects, each with a state and a hint an operator can
 * act on: the store is writable, PostgreSQL is reachable (per target), the log is being read (per
 * target). Fed by getters the lead wires; an aspect nobody wired is reported as 'unknown'.
 */
export type AspectState = 'ok' | 'failing' | 'unknown' | 'disabled';

export interface Aspect {
  aspect: 'store' | 'postgres' | 'log';
  target: string | null;
  state: AspectState;
  hint: string;
}

export interface ReadinessSources {
  store?: () => { writable: boolean; detail: string | null };
  /** reachable null: not polled yet. */
  postgres?: () => ReadonlyArray<{ target: string; reachable: boolean | null; detail: string | null }>;
  /** reading null: not started yet; a target without a configured log is 'disabled'. */
  logs?: () => ReadonlyArray<{ target: string; source: string | null; reading: boolean | null; detail: string | null }>;
}

export interface Readiness {
  ready: boolean;
  aspects: Aspect[];
}

export function readiness(sources: ReadinessSources): Readiness {
  const aspects: Aspect[] = [storeAspect(sources), ...postgresAspects(sources), ...logAspects(sources)];
  return { ready: aspects.every((a) => a.state === 'ok' || a.state === 'disabled'), aspects };
}

function storeAspect(sources: ReadinessSources): Aspect {
  if (!sources.store) return { aspect: 'store', target: null, state: 'unknown', hint: 'no store writer is wired' };
  const { writable, detail } = sources.store();
  return writable
    ? { aspect: 'store', target: null, state: 'ok', hint: 'store commits succeed' }
    : { aspect: 'store', target: null, state: 'failing', hint: `store commits fail${detail ? ` (${detail})` : ''}: check free disk space and that the db file is writable; rows are kept in memory and retried` };
}

function postgresAspects(sources: ReadinessSources): Aspect[] {
  if (!sources.postgres) return [{ aspect: 'postgres', target: null, state: 'unknown', hint: 'no poller is wired' }];
  return sources.postgres().map(({ target, reachable, detail }): Aspect => {
    if (reachable === null) return { aspect: 'postgres', target, state: 'unknown', hint: 'not polled yet' };
    return reachable
      ? { aspect: 'postgres', target, state: 'ok', hint: 'the latest poll connected' }
      : { aspect: 'postgres', target, state: 'failing', hint: `cannot reach the server${detail ? ` (${detail})` : ''}: check the dsn, the network, pg_hba.conf and that the role has pg_monitor` };
  });
}

function logAspects(sources: ReadinessSources): Aspect[] {
  if (!sources.logs) return [{ aspect: 'log', target: null, state: 'unknown', hint: 'no log tailer is wired' }];
  return sources.logs().map(({ target, source, reading, detail }): Aspect => {
    if (source === null) return { aspect: 'log', target, state: 'disabled', hint: 'no log configured for this target: log-derived rules and metrics are off' };
    if (reading === null) return { aspect: 'log', target, state: 'unknown', hint: `not started reading ${source} yet` };
    return reading
      ? { aspect: 'log', target, state: 'ok', hint: `reading ${source}` }
      : { aspect: 'log', target, state: 'failing', hint: `not reading ${source}${detail ? ` (${detail})` : ''}: check the path and that pgvigil may read the files (log_file_mode, group)` };
  });
}
