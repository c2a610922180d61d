/**
 * Which server (target) each file of `pgvigil analyze` is the log of, so the logs of a primary and
 * its standby given together are judged as two servers, not one.
 *
 * - `--target name=FILE` names that file's server; `--target name` (no `=`) every file not named
 *   otherwise (one server's rotated files, a store filled offline for `central forward`).
 * - Otherwise a file's server is its name without extensions and without a rotation suffix
 *   (`postgresql-2026-11-30_120000.log.gz` -> `postgresql`, `standby.log.1` -> `standby`), so
 *   one server's rotated files are one target. Files of different directories whose names give
 *   the same server are different servers: their names take as many parent directories as tell
 *   them apart (`a/log/postgresql`, `b/log/postgresql`).
 * - Standard input (`-`) is `stdin`.
 *
 * Owns: naming. Never: reading the files (their role in the cluster is told by their lines:
 * src/cli/analyze-rules.ts).
 */
import path from 'node:path';
import { STDIN } from '../sources/log-inputs.js';

/** Extensions a log file's name may end with, besides a rotation number (`.1`). */
const LOG_EXTENSIONS = /\.(?:gz|bz2|xz|zst|log|csv|json|txt)$/i;
const ROTATION_NUMBER = /\.\d+$/;
/** What log_filename's strftime escapes and logrotate's dateext append: dates, times, weekdays, counters. */
const ROTATION_SUFFIX = /(?:[-_.](?:\d+|mon|tue|wed|thu|fri|sat|sun|monday|tuesday|wednesday|thursday|friday|saturday|sunday))+$/i;

/** A `--target` flag: `name` or `name=FILE`. */
export interface TargetSpec {
  name: string;
  file: string | null;
}

export function parseTargetSpec(text: string): TargetSpec {
  const eq = text.indexOf('=');
  const name = (eq < 0 ? text : text.slice(0, eq)).trim();
  const file = eq < 0 ? null : text.slice(eq + 1);
  if (name === '') throw new Error(`--target ${JSON.stringify(text)}: the target name is empty (give name or name=FILE)`);
  if (file === '') throw new Error(`--target ${JSON.stringify(text)}: no file after "=" (give name or name=FILE)`);
  return { name, file };
}

/** The server a file name gives, before telling apart files of different directories. */
export function serverOfFileName(file: string): string {
  if (file === STDIN) return 'stdin';
  let name = path.basename(file);
  for (let previous = ''; previous !== name;) {
    previous = name;
    name = name.replace(LOG_EXTENSIONS, '').replace(ROTATION_NUMBER, '');
  }
  const server = name.replace(ROTATION_SUFFIX, '');
  // A name that is all rotation suffix (`2026-11-30.log`) is its own server name.
  return /^\d*$/.test(server) ? name : server;
}

/**
 * The target of each file (in `files`, as expanded). Throws, with what to give instead, on a
 * `--target name=FILE` naming no input, a file named twice, or two bare names.
 */
export function targetsOfFiles(files: readonly string[], specs: readonly TargetSpec[]): Map<string, string> {
  const byPath = new Map(files.map((f) => [f === STDIN ? STDIN : path.resolve(f), f]));
  const named = new Map<string, string>();
  const bare = specs.filter((s) => s.file === null);
  if (bare.length > 1) throw new Error(`--target is given without a file ${bare.length} times (${bare.map((s) => s.name).join(', ')}): name the others' files with --target name=FILE`);
  for (const spec of specs) {
    if (spec.file === null) continue;
    const file = byPath.get(spec.file === STDIN ? STDIN : path.resolve(spec.file));
    if (file === undefined) throw new Error(`--target ${spec.name}=${spec.file}: ${spec.file} is not among the files analyzed (${files.join(', ')})`);
    if (named.has(file)) throw new Error(`--target: ${spec.file} is named twice (${named.get(file)}, ${spec.name})`);
    named.set(file, spec.name);
  }
  const fallback = bare[0]?.name ?? null;
  const unnamed = files.filter((f) => !named.has(f));
  const derived = fallback === null ? distinctServerNames(unnamed) : new Map(unnamed.map((f) => [f, fallback]));
  return new Map(files.map((f) => [f, named.get(f) ?? derived.get(f)!]));
}

/** Server names from file names; files of different directories that give one name take parent directories until they differ. */
function distinctServerNames(files: readonly string[]): Map<string, string> {
  const dirOf = (f: string) => (f === STDIN ? '' : path.dirname(path.resolve(f)));
  const out = new Map<string, string>();
  const byServer = new Map<string, string[]>();
  for (const f of files) byServer.set(serverOfFileName(f), [...(byServer.get(serverOfFileName(f)) ?? []), f]);
  for (const [server, group] of byServer) {
    const dirs = [...new Set(group.map(dirOf))];
    if (dirs.length === 1) {
      for (const f of group) out.set(f, server);
      continue;
    }
    const parts = dirs.map((d) => d.split(path.sep).filter((p) => p !== ''));
    let depth = 1;
    const named = (p: string[]) => [...p.slice(-depth), server].join('/');
    while (new Set(parts.map(named)).size < dirs.length && parts.some((p) => p.length > depth)) depth++;
    for (const f of group) out.set(f, named(parts[dirs.indexOf(dirOf(f))]!));
  }
  return out;
}
