#!/bin/sh
# Fetches the Debian packages whose message catalogs (postgres-<major>.mo) the shipped catalogs
# of PostgreSQL majors not installed here are built from, and extracts them to
# $OUT/pg<major> (default /tmp/lang): the layout scripts/build-catalogs.ts reads by default.
# Only needed to rebuild catalogs/pg13 and catalogs/pg17 (the built JSON is committed).
#
#   sh scripts/fetch-catalog-debs.sh            # every package below
#   sh scripts/fetch-catalog-debs.sh 17         # one major
#   npx tsx scripts/build-catalogs.ts --source 13=/tmp/lang/pg13/usr/share/locale --source 17=/tmp/lang/pg17/usr/share/locale
#
# The package is found in the suite's Packages index (its Filename and SHA256), downloaded from
# the mirror, checked against that SHA256, and unpacked with dpkg-deb -x: nothing is installed
# and the machine's apt sources are left alone. Catalog sources are listed in NOTICE.
set -eu

MIRROR=${MIRROR:-http://deb.debian.org/debian}
OUT=${OUT:-/tmp/lang}

# major suite: the Debian release that carries postgresql-<major>.
PACKAGES='13 bullseye
17 trixie'

fetch() {
  major=$1
  suite=$2
  package=postgresql-$major
  work=$OUT/pg$major
  mkdir -p "$work"
  index=$work/Packages-$suite.gz
  curl -sSfL -o "$index" "$MIRROR/dists/$suite/main/binary-amd64/Packages.gz"
  # The stanza of the package itself (not of postgresql-<major>-dbgsym or the like).
  stanza=$(gzip -dc "$index" | awk -v want="Package: $package" '$0 == want { found = 1 } found && /^$/ { exit } found { print }')
  filename=$(printf '%s\n' "$stanza" | sed -n 's/^Filename: //p')
  sha256=$(printf '%s\n' "$stanza" | sed -n 's/^SHA256: //p')
  version=$(printf '%s\n' "$stanza" | sed -n 's/^Version: //p')
  if [ -z "$filename" ] || [ -z "$sha256" ]; then
    echo "$package: not in $MIRROR/dists/$suite/main/binary-amd64/Packages.gz" >&2
    exit 1
  fi
  deb=$work/$(basename "$filename")
  curl -sSfL -o "$deb" "$MIRROR/$filename"
  echo "$sha256  $deb" | sha256sum -c --quiet - || { echo "$deb: SHA256 differs from the $suite index" >&2; exit 1; }
  dpkg-deb -x "$deb" "$work"
  count=$(find "$work/usr/share/locale" -name "postgres-$major.mo" | wc -l)
  echo "PG $major: $package $version ($suite), $count catalogs in $work/usr/share/locale"
}

printf '%s\n' "$PACKAGES" | while read -r major suite; do
  if [ $# -eq 0 ] || [ "$1" = "$major" ]; then fetch "$major" "$suite"; fi
done
