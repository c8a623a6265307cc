#!/bin/bash
# Installs a Debian package postgresql-N-snowflake on a clean Debian system
# (run inside a throwaway chroot by scripts/matrix.sh: apt, root), and the
# package snowflake-inspect beside it when given, then on a new instance that
# preloads the library: CREATE EXTENSION snowflake, a few ids and a UUIDv7,
# decoded. postgresql-N-snowflake must keep to its version's directories (so
# that the packages of two versions install side by side); with
# snowflake-inspect, the command must be where a shell finds it (command -v),
# its man page where man finds it (man -w; man-db is installed for that, with
# no recommended package), and it must decode an id as SQL does. Prints
# "ok - ..." lines; exits non-zero on any failure. The instance is removed
# afterwards, pass or fail.
#
# Usage: test/deb_install.sh PACKAGE.deb [snowflake-inspect_*.deb]
set -euo pipefail
cd "$(dirname "$0")/.."

deb=$(readlink -f "$1")
inspect_deb=${2:+$(readlink -f "$2")}
major=$(dpkg-deb -f "$deb" Package | sed -n 's/^postgresql-\([0-9]*\)-snowflake$/\1/p')
[ -n "$major" ] || { echo "not ok - $deb is a postgresql-N-snowflake package"; exit 1; }
if [ -n "$inspect_deb" ] && [ "$(dpkg-deb -f "$inspect_deb" Package)" != snowflake-inspect ]; then
    echo "not ok - $inspect_deb is the snowflake-inspect package"
    exit 1
fi

# Every file of postgresql-N-snowflake lies in version N's directories: the
# packages of two versions never ship the same path.
outside=$(dpkg-deb -c "$deb" | awk '{print substr($6, 2)}' | grep -v '/$' \
    | grep -vE "^/usr/(lib/postgresql/$major/|share/postgresql/$major/|share/doc/postgresql-$major-snowflake/)" || true)
if [ -z "$outside" ]; then
    echo "ok - postgresql-$major-snowflake ships files only under its version's directories"
else
    echo "not ok - postgresql-$major-snowflake ships files outside its version's directories:" $outside
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/snowflake.conf
apt-get -o Acquire::Check-Valid-Until=false update -qq
# apt resolves the package's dependencies (postgresql-N) from the archive.
# man-db for `man -w` below (a minbase system has no man); --no-install-recommends
# keeps it small.
extra=()
[ -z "$inspect_deb" ] || command -v man >/dev/null || extra=(man-db)
if ! apt-get install -y -qq --no-install-recommends "$deb" ${inspect_deb:+"$inspect_deb"} "${extra[@]}" \
    >/tmp/deb_install.log 2>&1; then
    tail -20 /tmp/deb_install.log
    echo "not ok - apt-get install $(basename "$deb") ${inspect_deb:+$(basename "$inspect_deb")}"
    exit 1
fi
echo "ok - apt-get install $(basename "$deb") ${inspect_deb:+$(basename "$inspect_deb") }(with postgresql-$major from the archive)"

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

[ -n "$inspect_deb" ] || exit 0

# snowflake-inspect where users look: on a user's PATH, its man
# page found by man, and decoding an id of this server as SQL does.
# A user's PATH as Debian's /etc/profile sets it (no PostgreSQL directory).
found=$(env -i PATH=/usr/local/bin:/usr/bin:/bin sh -c 'command -v snowflake-inspect' || true)
if [ "$found" = /usr/bin/snowflake-inspect ]; then
    echo "ok - command -v snowflake-inspect: /usr/bin/snowflake-inspect"
else
    echo "not ok - command -v snowflake-inspect: got '$found', want /usr/bin/snowflake-inspect"
    exit 1
fi
page=$(man -w snowflake-inspect 2>&1 || true)
if [ "$page" = /usr/share/man/man1/snowflake-inspect.1.gz ]; then
    echo "ok - man -w snowflake-inspect: $page"
else
    echo "not ok - man -w snowflake-inspect: got '$page', want /usr/share/man/man1/snowflake-inspect.1.gz"
    exit 1
fi
if [ -f /usr/share/bash-completion/completions/snowflake-inspect ]; then
    echo "ok - the bash completion is where bash-completion loads it"
else
    echo "not ok - /usr/share/bash-completion/completions/snowflake-inspect is installed"
    exit 1
fi
id=$(pg_val "$DIR" "SELECT snowflake_nextval()")
want=$(pg_val "$DIR" "SELECT format('%s time=%s worker=%s sequence=%s base32=%s base62=%s', $id,
    to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), worker_id, sequence,
    snowflake_encode($id, 'base32'), snowflake_encode($id, 'base62')) FROM snowflake_decode($id)")
got=$(snowflake-inspect --format base32 --text-forms "$(pg_val "$DIR" "SELECT snowflake_encode($id, 'base32')")" 2>&1 || true)
if [ "$got" = "$want" ]; then
    echo "ok - snowflake-inspect decodes an id of this server (given in base32) as SQL does"
else
    echo "not ok - snowflake-inspect decodes an id as SQL does: got '$got', want '$want'"
    exit 1
fi
