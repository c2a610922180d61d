#!/usr/bin/env bash
# Builds a Debian unstable chroot holding PostgreSQL 19 from Debian experimental, for the test harness.
#
# Why a chroot: experimental's postgresql-19 is built against unstable's libc, newer than the host's
# Debian 12. Only postgresql-19 and postgresql-client-19 are asked for from experimental ("pkg/experimental";
# apt then takes from experimental only the dependencies whose versions require it, e.g. libpq5 19).
# "-t experimental" must not be used: it raises all of experimental and pulls a perl that conflicts.
#
# Idempotent: a complete chroot (marker file present) makes this a no-op. A half-built one is
# discarded and rebuilt: the build happens in "$CHROOT.building" and is renamed only when complete.
#
# Env: PGVIGIL_PG19_CHROOT (default /var/lib/pgvigil/pg19-chroot), PGVIGIL_DEBIAN_MIRROR.
# Must run as root (debootstrap, chroot, mount).
set -euo pipefail

CHROOT="${PGVIGIL_PG19_CHROOT:-/var/lib/pgvigil/pg19-chroot}"
MIRROR="${PGVIGIL_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
MARKER=".pgvigil-pg19-complete"
BUILD="${CHROOT}.building"

log() { printf '[setup-pg19] %s\n' "$*"; }

if [[ -f "$CHROOT/$MARKER" && -x "$CHROOT/usr/lib/postgresql/19/bin/postgres" ]]; then
  log "chroot already complete at $CHROOT ($(cat "$CHROOT/$MARKER")); nothing to do"
  exit 0
fi

if [[ $EUID -ne 0 ]]; then
  echo "[setup-pg19] must run as root (debootstrap, chroot and mount need it)" >&2
  exit 1
fi

# Unmounts every mount point under a directory, deepest first, so rm -rf never walks into /proc.
unmount_under() {
  local dir
  dir="$(realpath -m "$1")"
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r mnt; do
    umount -l "$mnt" || true
  done
}

if [[ -e "$CHROOT" ]]; then
  log "$CHROOT exists but is incomplete; rebuilding it"
  unmount_under "$CHROOT"
  rm -rf --one-file-system "$CHROOT"
fi
if [[ -e "$BUILD" ]]; then
  log "discarding a half-built $BUILD from an earlier run"
  unmount_under "$BUILD"
  rm -rf --one-file-system "$BUILD"
fi

if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap
fi

mkdir -p "$(dirname "$CHROOT")"
trap 'unmount_under "$BUILD"' EXIT

started=$SECONDS
log "debootstrap --variant=minbase unstable $BUILD $MIRROR"
# A mirror hiccup should not fail CI: retry from a clean directory.
for attempt in 1 2 3; do
  if debootstrap --variant=minbase unstable "$BUILD" "$MIRROR"; then break; fi
  if [[ $attempt == 3 ]]; then
    echo "[setup-pg19] debootstrap failed 3 times" >&2
    exit 1
  fi
  log "debootstrap attempt $attempt failed; retrying"
  unmount_under "$BUILD"
  rm -rf --one-file-system "$BUILD"
done
log "debootstrap took $((SECONDS - started)) s"

# The archive's Valid-Until can lie in the past of this machine's clock; signatures are still checked.
cat > "$BUILD/etc/apt/apt.conf.d/99pgvigil" <<'EOF'
Acquire::Check-Valid-Until "false";
Acquire::Retries "3";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
echo "deb $MIRROR experimental main" > "$BUILD/etc/apt/sources.list.d/experimental.list"

# No service may start inside the chroot during install, and no "main" cluster is wanted: the
# harness runs initdb itself in temporary directories.
printf '#!/bin/sh\nexit 101\n' > "$BUILD/usr/sbin/policy-rc.d"
chmod 0755 "$BUILD/usr/sbin/policy-rc.d"
mkdir -p "$BUILD/etc/postgresql-common/createcluster.d"
echo "create_main_cluster = false" > "$BUILD/etc/postgresql-common/createcluster.d/pgvigil.conf"

mount -t proc proc "$BUILD/proc"
installed=$SECONDS
log "installing postgresql-19 and postgresql-client-19 from experimental"
chroot "$BUILD" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C \
  sh -c 'apt-get update && { apt-get install -y postgresql-19/experimental postgresql-client-19/experimental ||
    { echo "[setup-pg19] not installable from experimental; trying unstable (PostgreSQL 19 may have moved there)";
      apt-get install -y postgresql-19 postgresql-client-19; }; }'
umount "$BUILD/proc"
log "package install took $((SECONDS - installed)) s"

if [[ ! -x "$BUILD/usr/lib/postgresql/19/bin/postgres" ]]; then
  echo "[setup-pg19] postgresql-19 installed but $BUILD/usr/lib/postgresql/19/bin/postgres is missing" >&2
  exit 1
fi
if ! chroot "$BUILD" id postgres >/dev/null 2>&1; then
  echo "[setup-pg19] the chroot has no postgres user after install" >&2
  exit 1
fi
version="$(chroot "$BUILD" /usr/lib/postgresql/19/bin/postgres --version)"
chroot "$BUILD" apt-get clean

echo "$version" > "$BUILD/$MARKER"
mv "$BUILD" "$CHROOT"
trap - EXIT
log "ready: $CHROOT ($version) in $((SECONDS - started)) s"
