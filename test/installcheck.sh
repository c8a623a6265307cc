#!/bin/bash
# `make installcheck` as a packager or user runs it: against the installed
# extension and PostgreSQL (PG_CONFIG), as a non-root user (pg_regress's
# temporary instances refuse root), from a copy of the files it needs in a
# temporary directory that user owns. Removed afterwards, pass or fail
# (KEEP_TMP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."

. test/lib/pg.sh

DIR=$(pg_tmpdir)
cleanup() {
    local d
    for d in "$DIR"/src/tmp_check*; do
        [ -f "$d/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$d/data" -m immediate -w stop >/dev/null 2>&1
    done
    if [ -n "${KEEP_TMP:-}" ]; then echo "kept $DIR"; else rm -rf "$DIR"; fi
}
trap cleanup EXIT

mkdir "$DIR/src"
cp -r Makefile snowflake.control snowflake--*.sql sql expected src "$DIR/src/"
mkdir -p "$DIR/src/test"
cp -r test/regress "$DIR/src/test/"
find "$DIR/src" \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -delete
[ "$(id -u)" = 0 ] && chown -R postgres: "$DIR"

status=0
as_pg make -C "$DIR/src" --no-print-directory PG_CONFIG="$PG_CONFIG" installcheck || status=$?
if [ $status -ne 0 ]; then
    for f in "$DIR"/src/regression.diffs "$DIR"/src/results/*/regression.diffs; do
        [ -s "$f" ] && { echo "=== $f" >&2; cat "$f" >&2; }
    done
    echo "installcheck: FAILED" >&2
    exit 1
fi
echo "installcheck: passed"
