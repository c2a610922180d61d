/**
 * Running PostgreSQL 19 inside the Debian unstable chroot (scripts/setup-pg19-chroot.sh).
 *
 * Every command enters a private mount namespace (unshare --mount) that mounts /proc and a tmpfs
 * /dev/shm into the chroot, then chroots as the chroot's postgres user. The mounts live exactly as
 * long as the processes in that namespace: when the postmaster exits they vanish with it, so no
 * test, crashed or not, leaves a mount behind on the host and no reference count is needed.
 */
import path from 'node:path';
import { lookupUser, type Command } from '../../src/demo/pg-install.js';

// $1 = chroot root, $2 = uid:gid, the rest = program and arguments (passed positionally: no quoting).
const ENTER_SCRIPT = [
  'root=$1; user=$2; shift 2',
  'mkdir -p "$root/proc" "$root/dev/shm"',
  'mount -t proc proc "$root/proc"',
  'mount -t tmpfs -o mode=1777 shm "$root/dev/shm"',
  'exec chroot --userspec="$user" "$root" "$@"',
].join(' && ');

export function chrootCommand(
  root: string,
  owner: { uid: number; gid: number },
  program: string,
  args: string[],
): Command {
  return {
    file: 'unshare',
    args: ['--mount', '--propagation', 'private', '--', 'sh', '-c', ENTER_SCRIPT, 'sh', root, `${owner.uid}:${owner.gid}`, program, ...args],
  };
}

/** The uid and gid of a user of the chroot (its own /etc/passwd, not the host's). */
export function chrootUser(root: string, name: string): { uid: number; gid: number } {
  const user = lookupUser(name, path.join(root, 'etc/passwd'));
  if (!user) throw new Error(`the PG 19 chroot ${root} has no user ${name}: rerun scripts/setup-pg19-chroot.sh`);
  return user;
}
