#!/bin/bash
# pg_regress suites of snowflake (sql/*.sql against expected/*.out).
#
# Three runs, each on its own throwaway instance created by pg_regress
# (--temp-instance):
#   1. preloaded: test/regress/preload.conf (shared_preload_libraries,
#      snowflake.worker_id = 42): generator decode bad_input settings uuidv7
#      text_ids layouts convert (convert last: it raises the floor ahead of
#      the clock)
#   2. preloaded without a worker id: test/regress/no_worker_id.conf:
#      no_worker_id
#   3. without preload: test/regress/no_preload.conf: no_preload uuidv7 text_ids
#      layouts (uuidv7, text_ids and layouts need no shared state; the same
#      files and expected output)
#   4. preloaded with snowflake.layout = 'js-safe': test/regress/js_safe.conf:
#      layout_js_safe
# After each run the instance's server log is searched for a backend killed by
# a signal. On failure regression.diffs is printed; the exit status is
# non-zero if any run failed.
#
# PostgreSQL refuses to run as root, so when run as root pg_regress runs as the
# postgres user, in a temporary directory it owns (the repository may not be
# writable by it). Everything is removed afterwards, pass or fail; set
# KEEP_TMP=1 to keep it.
#
# Usage: test/regress.sh [test ...]   (default: every suite; a name picks the
# run it belongs to)
set -euo pipefail
cd "$(dirname "$0")/.."

. test/lib/pg.sh
PG_REGRESS=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress

PRELOAD_TESTS=(generator decode bad_input settings uuidv7 text_ids layouts convert)
NO_WORKER_TESTS=(no_worker_id)
NO_PRELOAD_TESTS=(no_preload uuidv7 text_ids layouts)
JS_SAFE_TESTS=(layout_js_safe)
if [ $# -gt 0 ]; then
    want=" $* "
    filter() { local t; for t in "$@"; do [[ $want == *" $t "* ]] && echo "$t"; done; return 0; }
    mapfile -t PRELOAD_TESTS < <(filter "${PRELOAD_TESTS[@]}")
    mapfile -t NO_WORKER_TESTS < <(filter "${NO_WORKER_TESTS[@]}")
    mapfile -t NO_PRELOAD_TESTS < <(filter "${NO_PRELOAD_TESTS[@]}")
    mapfile -t JS_SAFE_TESTS < <(filter "${JS_SAFE_TESTS[@]}")
fi

WORK=$(pg_tmpdir)
cleanup() {
    local d
    # pg_regress stops its postmaster itself; this covers an interrupted run.
    for d in "$WORK"/instance_*; do
        if [ -f "$d/data/postmaster.pid" ]; then
            as_pg "$PGBIN/pg_ctl" -D "$d/data" -m immediate -w stop >/dev/null 2>&1 || true
        fi
    done
    if [ -n "${KEEP_TMP:-}" ]; then
        echo "kept $WORK"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

cp -r sql expected test/regress/*.conf "$WORK"/
[ "$(id -u)" = 0 ] && chown -R postgres: "$WORK"

failed=0

# run NAME CONF EXTRA_OPTION TEST...: one pg_regress run on a new temp instance.
run() {
    local name=$1 conf=$2 extra=$3; shift 3
    [ $# -gt 0 ] || return 0
    local out="$WORK/out_$name" status=0
    as_pg mkdir -p "$out"
    echo "--- pg_regress ($name): $*"
    as_pg "$PG_REGRESS" \
        --temp-instance="$WORK/instance_$name" \
        --temp-config="$WORK/$conf" \
        --inputdir="$WORK" \
        --outputdir="$out" \
        --bindir="$PGBIN" \
        --dbname=contrib_regression \
        ${extra:+"$extra"} \
        "$@" || status=$?
    if [ $status -ne 0 ]; then
        echo "pg_regress ($name) failed with status $status" >&2
        if [ -s "$out/regression.diffs" ]; then
            echo "=== $out/regression.diffs" >&2
            cat "$out/regression.diffs" >&2
        fi
        failed=1
    fi
    # A crash shows in the server log even if the expected output hides it.
    local log="$out/log/postmaster.log"
    if [ ! -f "$log" ]; then
        echo "pg_regress ($name): no server log at $log" >&2
        failed=1
    elif grep -E "terminated by signal|PANIC:" "$log" >&2; then
        echo "pg_regress ($name): a server process crashed (see above, from $log)" >&2
        failed=1
    fi
}

# The preloaded suites share one database with the extension created in it;
# the others create it themselves.
run preload preload.conf --load-extension=snowflake "${PRELOAD_TESTS[@]}"
run no_worker no_worker_id.conf "" "${NO_WORKER_TESTS[@]}"
run no_preload no_preload.conf "" "${NO_PRELOAD_TESTS[@]}"
run js_safe js_safe.conf "" "${JS_SAFE_TESTS[@]}"

if [ $failed -ne 0 ]; then
    echo "pg_regress: FAILED" >&2
    exit 1
fi
echo "pg_regress: all suites passed"
