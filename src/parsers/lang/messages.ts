/**
 * Every English message pgvigil's classifiers read (src/parsers/classify/*.ts, the autovacuum
 * and autoanalyze report lines), as PostgreSQL's catalogs key them: the msgid format strings of
 * 13-19, byte for byte (a trailing "\n" included where the source has one). Only these get an
 * inverse matcher; a translated line of any other message stays as the server wrote it.
 *
 * Add a message here when a classifier starts reading one; a msgid that no catalog holds is
 * harmless (the catalogs of a version list only their own).
 */

/**
 * An argument whose text is itself a translated message: the lock a lock line names, the
 * recovery-conflict reason, the process a crash names, the CPU usage of a report, the signal's
 * name (strsignal(), from the C library's catalog).
 */
export type Slot = 'lock_tag' | 'conflict_reason' | 'process_name' | 'rusage' | 'signal_name';

export interface MessageSpec {
  /** The English format (msgid). */
  id: string;
  /** ngettext's plural msgid. */
  plural?: string;
  /** English arguments (0-based) read through a slot's messages. */
  slots?: Readonly<Record<number, Slot>>;
  /**
   * The `n` ngettext chose the form by: the integer argument `arg` (default: the first integer
   * argument), or with `list` the number of comma-separated items of argument `arg`.
   */
  count?: { arg: number; list?: boolean };
  /**
   * The msgid this one renamed in a later major, printing the same values that the classifier
   * reads into the same fields. Translators often kept the old translation: a line two majors
   * translate alike then reads as either English text, which is no ambiguity for the events.
   */
  renames?: string;
}

/** A line printed by several `_()` pieces in a row (e.g. `index scan needed: ` + the sentence). */
export interface PieceLine {
  pieces: readonly MessageSpec[];
}

export type LineSpec = MessageSpec | PieceLine;

export const SEVERITY_WORDS = ['LOG', 'ERROR', 'WARNING', 'FATAL', 'PANIC', 'NOTICE', 'INFO', 'DEBUG'] as const;

/** elog.c's field labels: the text up to the first `%` is the label a stderr line carries. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  'DETAIL:  ': 'DETAIL',
  'HINT:  ': 'HINT',
  'QUERY:  ': 'QUERY',
  'CONTEXT:  ': 'CONTEXT',
  'STATEMENT:  ': 'STATEMENT',
  'BACKTRACE:  ': 'BACKTRACE',
  'LOCATION:  %s, %s:%d\n': 'LOCATION',
  'LOCATION:  %s:%d\n': 'LOCATION',
};

/** elog.c appends this to a stderr message raised at a known query position. */
export const CURSOR_SUFFIX = ' at character %d';

const LOCK = { 2: 'lock_tag' } as const;

/** Primary messages (the whole message of an entry). */
export const MESSAGES: readonly MessageSpec[] = [
  // lock-wait.ts (proc.c)
  { id: 'process %d still waiting for %s on %s after %ld.%03d ms', slots: LOCK },
  { id: 'process %d acquired %s on %s after %ld.%03d ms', slots: LOCK },
  { id: 'process %d avoided deadlock for %s on %s by rearranging queue order after %ld.%03d ms', slots: LOCK },
  { id: 'process %d detected deadlock while waiting for %s on %s after %ld.%03d ms', slots: LOCK },
  { id: 'process %d failed to acquire %s on %s after %ld.%03d ms', slots: LOCK },
  { id: 'process %d could not obtain %s on %s', slots: LOCK },
  // deadlock.ts, timeouts.ts, recovery-conflict.ts (postgres.c)
  { id: 'deadlock detected' },
  { id: 'canceling statement due to lock timeout' },
  { id: 'canceling statement due to statement timeout' },
  { id: 'terminating connection due to idle-in-transaction timeout' },
  { id: 'terminating connection due to transaction timeout' },
  { id: 'canceling statement due to conflict with recovery' },
  { id: 'terminating connection due to conflict with recovery' },
  { id: 'recovery still waiting after %ld.%03d ms: %s', slots: { 2: 'conflict_reason' } },
  { id: 'recovery finished waiting after %ld.%03d ms: %s', slots: { 2: 'conflict_reason' } },
  // checkpoint.ts (xlog.c, checkpointer.c)
  { id: 'checkpoint starting:%s%s%s%s%s%s%s%s' },
  { id: 'restartpoint starting:%s%s%s%s%s%s%s%s' },
  { id: 'checkpoint starting:%s' },
  { id: 'restartpoint starting:%s' },
  { id: 'checkpoint complete: wrote %d buffers (%.1f%%); %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB' },
  { id: 'restartpoint complete: wrote %d buffers (%.1f%%); %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB' },
  { id: 'checkpoint complete: wrote %d buffers (%.1f%%); %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB; lsn=%X/%X, redo lsn=%X/%X' },
  { id: 'restartpoint complete: wrote %d buffers (%.1f%%); %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB; lsn=%X/%X, redo lsn=%X/%X' },
  { id: 'checkpoint complete: wrote %d buffers (%.1f%%), wrote %d SLRU buffers; %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB; lsn=%X/%X, redo lsn=%X/%X' },
  { id: 'restartpoint complete: wrote %d buffers (%.1f%%), wrote %d SLRU buffers; %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB; lsn=%X/%X, redo lsn=%X/%X' },
  { id: 'checkpoint complete:%s: wrote %d buffers (%.1f%%), wrote %d SLRU buffers; %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB; lsn=%X/%08X, redo lsn=%X/%08X' },
  { id: 'restartpoint complete:%s: wrote %d buffers (%.1f%%), wrote %d SLRU buffers; %d WAL file(s) added, %d removed, %d recycled; write=%ld.%03d s, sync=%ld.%03d s, total=%ld.%03d s; sync files=%d, longest=%ld.%03d s, average=%ld.%03d s; distance=%d kB, estimate=%d kB; lsn=%X/%08X, redo lsn=%X/%08X' },
  { id: 'checkpoints are occurring too frequently (%d second apart)', plural: 'checkpoints are occurring too frequently (%d seconds apart)' },
  // server-crash.ts (postmaster.c LogChildExit)
  { id: '%s (PID %d) was terminated by signal %d: %s', slots: { 0: 'process_name', 3: 'signal_name' } },
  { id: '%s (PID %d) exited with exit code %d', slots: { 0: 'process_name' } },
  { id: '%s (PID %d) was terminated by exception 0x%X', slots: { 0: 'process_name' } },
  { id: '%s (PID %d) exited with unrecognized status %d', slots: { 0: 'process_name' } },
  // server-restart.ts (postmaster.c, xlog.c, xlogrecovery.c)
  { id: 'terminating any other active server processes' },
  { id: 'all server processes terminated; reinitializing' },
  { id: 'shutting down because restart_after_crash is off' },
  { id: 'shutting down because "restart_after_crash" is off' },
  { id: 'shutting down due to startup process failure' },
  { id: 'aborting startup due to startup process failure' },
  { id: 'database system was interrupted; last known up at %s' },
  { id: 'database system shutdown was interrupted; last known up at %s' },
  { id: 'database system was interrupted while in recovery at %s' },
  { id: 'database system was interrupted while in recovery at log time %s' },
  { id: 'database system was not properly shut down; automatic recovery in progress' },
  { id: 'redo starts at %X/%X' },
  { id: 'redo starts at %X/%08X' },
  { id: 'redo done at %X/%X' },
  { id: 'redo done at %X/%X system usage: %s', slots: { 2: 'rusage' } },
  { id: 'redo done at %X/%08X system usage: %s', slots: { 2: 'rusage' } },
  { id: 'redo is not required' },
  { id: 'database system is ready to accept connections' },
  { id: 'database system is ready to accept read only connections' },
  { id: 'database system is ready to accept read-only connections' },
  { id: 'received smart shutdown request' },
  { id: 'received fast shutdown request' },
  { id: 'received immediate shutdown request' },
  { id: 'database system is shut down' },
  // temp-file.ts (fd.c)
  { id: 'temporary file: path "%s", size %lu' },
  // slot-invalidated.ts (slot.c)
  { id: 'invalidating slot "%s" because its restart_lsn %X/%X exceeds max_slot_wal_keep_size' },
  { id: 'invalidating obsolete replication slot "%s"' },
  { id: 'terminating process %d to release replication slot "%s"' },
  // wraparound.ts (varsup.c, multixact.c)
  { id: 'database "%s" must be vacuumed within %u transactions' },
  { id: 'database with OID %u must be vacuumed within %u transactions' },
  { id: 'database "%s" must be vacuumed before %u more MultiXactId is used', plural: 'database "%s" must be vacuumed before %u more MultiXactIds are used' },
  { id: 'database with OID %u must be vacuumed before %u more MultiXactId is used', plural: 'database with OID %u must be vacuumed before %u more MultiXactIds are used' },
  { id: 'database with OID %u must be vacuumed before %d more multixact member is used', plural: 'database with OID %u must be vacuumed before %d more multixact members are used' },
  { id: 'database is not accepting commands to avoid wraparound data loss in database "%s"' },
  { id: 'database is not accepting commands to avoid wraparound data loss in database with OID %u' },
  { id: 'database is not accepting commands that assign new transaction IDs to avoid wraparound data loss in database "%s"' },
  { id: 'database is not accepting commands that assign new transaction IDs to avoid wraparound data loss in database with OID %u' },
  { id: 'database is not accepting commands that generate new MultiXactIds to avoid wraparound data loss in database "%s"' },
  { id: 'database is not accepting commands that generate new MultiXactIds to avoid wraparound data loss in database with OID %u' },
  // ddl.ts (postgres.c, log_statement; `execute <name>: ` is built from pieces and not read)
  { id: 'statement: %s' },
  // autoanalyze.ts, PG 13: one line.
  { id: 'automatic analyze of table "%s.%s.%s" system usage: %s', slots: { 3: 'rusage' } },
];

const RUSAGE = { 0: 'rusage' } as const;
const BUFFER_MISSES = 'buffer usage: %lld hits, %lld misses, %lld dirtied\n';

/** The header and every later line of autovacuum and autoanalyze reports (vacuumlazy.c, analyze.c). */
export const REPORT_LINES: readonly LineSpec[] = [
  { id: 'automatic vacuum of table "%s.%s.%s": index scans: %d\n' },
  { id: 'automatic aggressive vacuum of table "%s.%s.%s": index scans: %d\n' },
  { id: 'automatic vacuum to prevent wraparound of table "%s.%s.%s": index scans: %d\n' },
  { id: 'automatic aggressive vacuum to prevent wraparound of table "%s.%s.%s": index scans: %d\n' },
  { id: 'automatic analyze of table "%s.%s.%s"\n' },
  { id: 'automatic analyze of table "%s.%s.%s"' },
  { id: 'pages: %u removed, %u remain, %u skipped due to pins, %u skipped frozen\n' },
  { id: 'pages: %u removed, %u remain, %u scanned (%.2f%% of total)\n' },
  { id: 'pages: %u removed, %u remain, %u scanned (%.2f%% of total), %u eagerly scanned\n' },
  { id: 'tuples: %.0f removed, %.0f remain, %.0f are dead but not yet removable, oldest xmin: %u\n' },
  { id: 'tuples: %lld removed, %lld remain, %lld are dead but not yet removable, oldest xmin: %u\n' },
  { id: 'tuples: %lld removed, %lld remain, %lld are dead but not yet removable\n' },
  { id: 'tuples: %ld removed, %ld remain, %ld are dead but not yet removable\n' },
  { id: 'tuples missed: %lld dead from %u pages not removed due to cleanup lock contention\n' },
  { id: 'tuples missed: %ld dead from %u pages not removed due to cleanup lock contention\n' },
  { id: 'removable cutoff: %u, which was %d XIDs old when operation ended\n' },
  { id: 'new relfrozenxid: %u, which is %d XIDs ahead of previous value\n' },
  { id: 'new relminmxid: %u, which is %d MXIDs ahead of previous value\n' },
  { id: 'frozen: %u pages from table (%.2f%% of total) had %lld tuples frozen\n' },
  { id: 'frozen: %u pages from table (%.2f%% of total) had %ld tuples frozen\n' },
  { id: 'visibility map: %u pages set all-visible, %u pages set all-frozen (%u were all-visible)\n' },
  ...['index scan needed: ', 'index scan not needed: '].flatMap((state) => [
    { pieces: [{ id: state }, { id: '%u pages from table (%.2f%% of total) had %lld dead item identifiers removed\n' }] },
    { pieces: [{ id: state }, { id: '%u pages from table (%.2f%% of total) had %ld dead item identifiers removed\n' }] },
  ]),
  ...['index scan bypassed: ', 'index scan bypassed by failsafe: '].flatMap((state) => [
    { pieces: [{ id: state }, { id: '%u pages from table (%.2f%% of total) have %lld dead item identifiers\n' }] },
    { pieces: [{ id: state }, { id: '%u pages from table (%.2f%% of total) have %ld dead item identifiers\n' }] },
  ]),
  { id: 'parallel workers: index vacuum: %d planned, %d launched in total\n' },
  { id: 'parallel workers: index cleanup: %d planned, %d launched\n' },
  { id: 'index "%s": pages: %u in total, %u newly deleted, %u currently deleted, %u reusable\n' },
  { id: 'delay time: %.3f ms\n' },
  { id: 'I/O timings: read: %.3f ms, write: %.3f ms\n' },
  { id: 'avg read rate: %.3f MB/s, avg write rate: %.3f MB/s\n' },
  { id: BUFFER_MISSES },
  // usage-lines.ts reads "misses" and "reads" alike (buffer_reads).
  { id: 'buffer usage: %lld hits, %lld reads, %lld dirtied\n', renames: BUFFER_MISSES },
  { id: 'buffer usage: %ld hits, %ld reads, %ld dirtied\n', renames: BUFFER_MISSES },
  { id: 'WAL usage: %ld records, %ld full page images, %llu bytes\n' },
  { id: 'WAL usage: %lld records, %lld full page images, %llu bytes\n' },
  { id: 'WAL usage: %lld records, %lld full page images, %llu bytes, %lld buffers full\n' },
  { id: 'WAL usage: %ld records, %ld full page images, %lu bytes, %ld buffers full\n' },
  { id: 'WAL usage: %lld records, %lld full page images, %llu bytes, %llu full page image bytes, %lld buffers full\n' },
  { id: 'WAL usage: %ld records, %ld full page images, %lu bytes, %lu full page image bytes, %ld buffers full\n' },
  {
    id: 'memory usage: dead item storage %.2f MB accumulated across %d reset (limit %.2f MB each)\n',
    plural: 'memory usage: dead item storage %.2f MB accumulated across %d resets (limit %.2f MB each)\n',
    count: { arg: 1 },
  },
  { id: 'system usage: %s', slots: RUSAGE },
];

/** Lines of a DETAIL (deadlock.c, proc.c, postgres.c, standby.c, postmaster.c, slot.c). */
export const DETAIL_LINES: readonly MessageSpec[] = [
  { id: 'Process %d waits for %s on %s; blocked by process %d.', slots: LOCK },
  { id: 'Process %d: %s' },
  { id: 'Process holding the lock: %s. Wait queue: %s.', plural: 'Processes holding the lock: %s. Wait queue: %s.', count: { arg: 0, list: true } },
  { id: 'Process holding the lock: %s, Wait queue: %s.', plural: 'Processes holding the lock: %s, Wait queue: %s.', count: { arg: 0, list: true } },
  { id: 'Conflicting process: %s.', plural: 'Conflicting processes: %s.', count: { arg: 0, list: true } },
  { id: 'User was holding shared buffer pin for too long.' },
  { id: 'User was holding a relation lock for too long.' },
  { id: 'User was or might have been using tablespace that must be dropped.' },
  { id: 'User query might have needed to see row versions that must be removed.' },
  { id: 'User was using a logical replication slot that must be invalidated.' },
  { id: 'User transaction caused buffer deadlock with recovery.' },
  { id: 'User transaction caused deadlock with recovery.' },
  { id: 'User was connected to a database that must be dropped.' },
  { id: 'Failed process was running: %s' },
  { id: "The slot's restart_lsn %X/%X exceeds the limit by %llu byte.", plural: "The slot's restart_lsn %X/%X exceeds the limit by %llu bytes.", count: { arg: 2 } },
  { id: "The slot's restart_lsn %X/%X exceeds the limit by %lu byte.", plural: "The slot's restart_lsn %X/%X exceeds the limit by %lu bytes.", count: { arg: 2 } },
  { id: "The slot's restart_lsn %X/%08X exceeds the limit by %llu byte.", plural: "The slot's restart_lsn %X/%08X exceeds the limit by %llu bytes.", count: { arg: 2 } },
  { id: "The slot's restart_lsn %X/%08X exceeds the limit by %lu byte.", plural: "The slot's restart_lsn %X/%08X exceeds the limit by %lu bytes.", count: { arg: 2 } },
  { id: 'The slot conflicted with xid horizon %u.' },
  { id: 'Logical decoding on standby requires wal_level >= logical on the primary server.' },
  { id: 'Logical decoding on standby requires "wal_level" >= "logical" on the primary server.' },
  { id: 'Logical decoding on standby requires the primary server to either set "wal_level" >= "logical" or have at least one logical slot when "wal_level" = "replica".' },
  { id: 'The slot\'s idle time of %lds exceeds the configured "%s" duration of %ds.' },
];

/** Lines of a CONTEXT (xlogrecovery.c redo context, 19's lock-wait context). */
export const CONTEXT_LINES: readonly MessageSpec[] = [
  { id: 'WAL redo at %X/%X for %s' },
  { id: 'WAL redo at %X/%08X for %s' },
  { id: 'waiting for %s on %s', slots: { 1: 'lock_tag' } },
];

/** Texts that stand inside other messages. */
export const SLOT_MESSAGES: Readonly<Record<Slot, readonly MessageSpec[]>> = {
  // lmgr.c DescribeLockTag()
  lock_tag: [
    { id: 'relation %u of database %u' },
    { id: 'extension of relation %u of database %u' },
    { id: 'pg_database.datfrozenxid of database %u' },
    { id: 'page %u of relation %u of database %u' },
    { id: 'tuple (%u,%u) of relation %u of database %u' },
    { id: 'transaction %u' },
    { id: 'virtual transaction %d/%u' },
    { id: 'speculative token %u of transaction %u' },
    { id: 'object %u of class %u of database %u' },
    { id: 'user lock [%u,%u,%u]' },
    { id: 'advisory lock [%u,%u,%u,%u]' },
    { id: 'remote transaction %u of subscription %u of database %u' },
  ],
  // standby.c get_recovery_conflict_desc()
  conflict_reason: [
    'buffer pin', 'lock', 'tablespace', 'snapshot', 'replication slot', 'buffer deadlock', 'deadlock', 'database',
  ].map((what) => ({ id: `recovery conflict on ${what}` })),
  // postmaster.c (13-17) and GetBackendTypeDesc() (18+)
  process_name: [
    'server process', 'checkpointer process', 'background writer process', 'WAL writer process', 'WAL receiver process',
    'autovacuum launcher process', 'archiver process', 'system logger process', 'startup process', 'WAL summarizer process',
    'client backend', 'autovacuum worker', 'autovacuum launcher', 'background writer', 'checkpointer', 'io worker', 'logger',
    'slotsync worker', 'standalone backend', 'startup', 'walreceiver', 'walsender', 'walwriter', 'archiver', 'WAL summarizer',
    'dead-end client backend', 'background worker \"%s\"',
  ].map((id) => ({ id })),
  // pg_rusage.c pg_rusage_show()
  rusage: [{ id: 'CPU: user: %d.%02d s, system: %d.%02d s, elapsed: %d.%02d s' }],
  // glibc strsignal(): the signals a crashed backend dies of.
  signal_name: [
    'Hangup', 'Interrupt', 'Quit', 'Illegal instruction', 'Trace/breakpoint trap', 'Aborted', 'Bus error',
    'Floating point exception', 'Killed', 'User defined signal 1', 'Segmentation fault', 'User defined signal 2',
    'Broken pipe', 'Alarm clock', 'Terminated', 'CPU time limit exceeded', 'File size limit exceeded',
  ].map((id) => ({ id })),
};

/** Every msgid of the PostgreSQL catalog pgvigil reads (what a generated catalog keeps). */
export function postgresMsgids(): Set<string> {
  const ids = new Set<string>([...SEVERITY_WORDS, ...Object.keys(FIELD_LABELS), CURSOR_SUFFIX]);
  const add = (spec: MessageSpec): void => {
    ids.add(spec.id);
  };
  for (const spec of [...MESSAGES, ...DETAIL_LINES, ...CONTEXT_LINES]) add(spec);
  for (const line of REPORT_LINES) for (const spec of 'pieces' in line ? line.pieces : [line]) add(spec);
  for (const [slot, specs] of Object.entries(SLOT_MESSAGES)) if (slot !== 'signal_name') specs.forEach(add);
  return ids;
}

/** The msgids read from the C library's catalog (libc.mo). */
export function libcMsgids(): Set<string> {
  return new Set(SLOT_MESSAGES.signal_name.map((spec) => spec.id));
}
