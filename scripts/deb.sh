#!/bin/bash
# Builds the Debian packages postgresql-N-snowflake for the PostgreSQL that
# $PG_CONFIG belongs to (N), and snowflake-inspect (the command, on its own:
# /usr/bin/snowflake-inspect, its man page and bash completion, shared by
# every version's package), with Debian's tooling for extensions:
# debian/pgversions, pg_buildext (postgresql-server-dev-all) and
# dpkg-buildpackage. The build happens in a copy of the source under
# build/deb/; nothing is installed into any PostgreSQL. The packages end up in
# build/deb/*.deb (their paths are printed last).
#
# Installs the packaging tools (scripts/deps.sh deb) if they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

PG_CONFIG=${PG_CONFIG:-pg_config}
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
[ -n "$major" ] || { echo "deb: cannot tell the PostgreSQL version from $PG_CONFIG" >&2; exit 1; }
PG_MAJOR=$major scripts/deps.sh deb

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
upstream=${version%-*}
OUT=$SRC/build/deb
WORK=$OUT/src
rm -rf "$WORK"
mkdir -p "$WORK/snowflake-$upstream"
# The source without build products or version control.
tar -C "$SRC" --exclude=./build --exclude=./.git --exclude='*.o' --exclude='*.so' \
    --exclude='*.bc' --exclude='*.d' --exclude=./results --exclude='./tmp_check*' -cf - . \
    | tar -C "$WORK/snowflake-$upstream" -xf -

cd "$WORK/snowflake-$upstream"
export PG_SUPPORTED_VERSIONS=$major
# debian/control from debian/control.in, for the versions of pgversions that
# are chosen here.
pg_buildext updatecontrol
grep -q "^Package: postgresql-$major-snowflake" debian/control \
    || { echo "deb: PostgreSQL $major is not in debian/pgversions" >&2; exit 1; }
echo "deb: building postgresql-$major-snowflake $version"
if ! dpkg-buildpackage -us -uc -b >"$WORK/build.log" 2>&1; then
    tail -40 "$WORK/build.log" >&2
    echo "deb: dpkg-buildpackage failed (log: $WORK/build.log)" >&2
    exit 1
fi
cd "$OUT"
rm -f ./postgresql-"$major"-snowflake*_*.deb ./snowflake-inspect*_*.deb
mv "$WORK"/postgresql-"$major"-snowflake*_*.deb "$WORK"/snowflake-inspect_*.deb "$OUT"/
ls "$OUT"/postgresql-"$major"-snowflake_*.deb "$OUT"/snowflake-inspect_*.deb
