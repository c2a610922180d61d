/**
 * Opens (creating if needed) the SQLite store and brings its schema up to date.
 * Owns: the connection settings (WAL, synchronous) and migrations. Never: business queries.
 */
import Database from 'better-sqlite3';
import { closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

export class StoreError extends Error {
  constructor(
    readonly code: 'STORE_MISSING' | 'STORE_OPEN' | 'STORE_CORRUPT' | 'STORE_WRITE' | 'STORE_NEWER',
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${message}`, options);
    this.name = 'StoreError';
  }
}

export interface OpenStoreOptions {
  readonly?: boolean;
}

export function openStore(file: string, options: OpenStoreOptions = {}): Db {
  const path = file === ':memory:' ? file : resolve(file);
  // A reader (report, /api) that finds no file has the wrong path, not a permission problem, and
  // must not leave an empty store behind that would hide the mistake next time.
  if (options.readonly && path !== ':memory:' && !existsSync(path)) {
    throw new StoreError('STORE_MISSING', path, 'no pgvigil store here. Point at the store that `pgvigil run` or `npm start` printed when it started, ' +
      'with --db <file> or PGVIGIL_DB.');
  }
  let db: Db;
  try {
    if (path !== ':memory:' && !options.readonly) {
      mkdirSync(dirname(path), { recursive: true });
      createPrivately(path);
    }
    db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  } catch (err) {
    throw new StoreError('STORE_OPEN', path, `cannot open the store: ${(err as Error).message}. ` +
      'Check that the directory exists and is writable by the pgvigil user, or choose another file with --db.', { cause: err });
  }
  try {
    if (!options.readonly) {
      db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode: a committed batch survives a process crash (SIGKILL); only an OS
      // crash can lose the last batches, never corrupt the file.
      db.pragma('synchronous = NORMAL');
    }
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    if (!options.readonly) migrate(db, path);
  } catch (err) {
    db.close();
    if (err instanceof StoreError) throw err;
    const message = (err as Error).message;
    const corrupt = /not a database|malformed|corrupt/i.test(message);
    throw new StoreError(corrupt ? 'STORE_CORRUPT' : 'STORE_OPEN', path,
      corrupt
        ? `the file is not a valid pgvigil store (${message}). Move it aside and pgvigil will create a new one.`
        : `cannot prepare the store: ${message}`, { cause: err });
  }
  return db;
}

function migrate(db: Db, path: string): void {
  const applied = db.pragma('user_version', { simple: true }) as number;
  if (applied > MIGRATIONS.length) {
    throw new StoreError('STORE_NEWER', path,
      `schema version ${applied} is newer than this pgvigil knows (${MIGRATIONS.length}); upgrade pgvigil.`);
  }
  for (let version = applied; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}

/**
 * The store holds statement text, parameters and user names from the server's log: only its
 * owner may read it. SQLite gives the -wal and -shm files the main file's mode, so creating the
 * main file 0600 before SQLite does covers all three. An existing file keeps the mode its owner chose.
 */
function createPrivately(path: string): void {
  try {
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}
