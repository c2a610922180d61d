/**
 * Which file a path names right now: device + inode, size and mtime from one stat.
 * Identity (`dev:ino`) is what tailer_offsets.file_id stores: a renamed file keeps it, a file
 * deleted and created again under the same name gets a new one.
 */
import { promises as fsp, statSync } from 'node:fs';

export interface FileState {
  /** `dev:ino`, exact (bigint stat: 64-bit inode numbers do not fit a double). */
  id: string;
  sizeBytes: number;
  mtimeMs: number;
}

export function identityOf(stats: { dev: bigint; ino: bigint }): string {
  return `${stats.dev}:${stats.ino}`;
}

/** The file's state, or null when nothing is there (ENOENT, ENOTDIR). Other errors throw. */
export async function statFile(path: string): Promise<FileState | null> {
  try {
    const stats = await fsp.stat(path, { bigint: true });
    if (!stats.isFile()) return null;
    return { id: identityOf(stats), sizeBytes: Number(stats.size), mtimeMs: Number(stats.mtimeMs) };
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/**
 * The file a configured path names: the path itself, or the target of a symlink there (a
 * `postgresql.log` link re-pointed at each rotation). Offsets are offsets in the target, so they
 * are saved under its path. Null when nothing is there.
 */
export async function resolveLink(path: string): Promise<string | null> {
  try {
    const stats = await fsp.lstat(path);
    return stats.isSymbolicLink() ? await fsp.realpath(path) : path;
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The names in a directory, or null when it is not there. Other errors throw. */
export async function listDirectory(directory: string): Promise<string[] | null> {
  try {
    return await fsp.readdir(directory);
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
}

/** True when a configured log source is a directory: it ends in `/`, or is one now. */
export function namesDirectory(source: string): boolean {
  if (source.endsWith('/')) return true;
  try {
    return statSync(source).isDirectory();
  } catch {
    return false;
  }
}
