#!/bin/bash
# Installs a Debian package postgresql-N-snowflake on a clean Debian system
# (run inside a throwaway chroot by scripts/matrix.sh: apt, root), then on a
# new instance that preloads the library: CREATE EXTENSION snowflake, a few
# ids and a UUIDv7, decoded. Prints "ok - ..." lines; exits non-zero on any
# failure. The instance is removed afterwards, pass or fail.
#
# Usage: test/deb_install.sh PACKAGE.deb
set -euo pipefail
cd "$(dirname "$0")/.."

deb=$(readlink -f "$1")
major=$(dpkg-deb -f "$deb" Package | sed -n 's/^postgresql-\([0-9]*\)-snowflake$/\1/p')
[ -n "$major" ] || { echo "not ok - $deb is a postgresql-N-snowflake package"; exit 1; }

export DEBIAN_FRONTEND=noninteractive
mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/snowflake.conf
apt-get -o Acquire::Check-Valid-Until=false update -qq
# apt resolves the package's dependencies (postgresql-N) from the archive.
if ! apt-get install -y -qq "$deb" >/tmp/deb_install.log 2>&1; then
    tail -20 /tmp/deb_install.log
    echo "not ok - apt-get install $(basename "$deb")"
    exit 1
fi
echo "ok - apt-get install $(basename "$deb") (with postgresql-$major from the archive)"

# The server package has no pg_config: the binaries are where Debian puts them.
export PGBIN=/usr/lib/postgresql/$major/bin
. test/lib/pg.sh
trap pg_cleanup_all EXIT

for f in "/usr/lib/postgresql/$major/lib/snowflake.so" "/usr/share/postgresql/$major/extension/snowflake.control"; do
    [ -f "$f" ] || { echo "not ok - the package installs $f"; exit 1; }
done
echo "ok - the package installs the library and the control file"

DIR=$(pg_tmpdir)
pg_init "$DIR" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 5"
if ! pg_start "$DIR"; then
    cat "$DIR/server.log"
    echo "not ok - a server preloading snowflake starts"
    exit 1
fi
echo "ok - a server preloading snowflake starts"
out=$(pg_psql "$DIR" -A -t <<'SQL'
CREATE EXTENSION snowflake;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake')
  FROM pg_extension WHERE extname = 'snowflake';
SELECT count(DISTINCT id) = 1000 AND min(snowflake_worker_id(id)) = 5 AND max(snowflake_worker_id(id)) = 5
  FROM snowflake_nextval_batch(1000) AS id;
SELECT snowflake_nextval() < snowflake_nextval();
SELECT substr(u::text, 15, 1) = '7' FROM (SELECT public.uuidv7() AS u) s;
SQL
) || { echo "$out"; echo "not ok - CREATE EXTENSION snowflake and ids"; exit 1; }
if [ "$(echo $out)" = "t t t t" ]; then
    echo "ok - CREATE EXTENSION snowflake, 1000 distinct ids of worker 5, increasing ids, a version-7 UUID"
else
    echo "not ok - CREATE EXTENSION snowflake and ids: got '$(echo $out)', want 't t t t'"
    exit 1
fi
