#!/bin/bash
# pgTAP suites of snowflake (test/pgtap/*.sql), run with pg_prove against a
# throwaway instance that preloads snowflake with snowflake.worker_id = 42.
#
# Before pg_prove, pgbench makes ids from several backends at once (4 clients,
# each transaction inserting one snowflake_nextval() and a
# snowflake_nextval_batch(10) into an UNLOGGED table with a primary key);
# test/pgtap/90_concurrency.sql then checks the count, that there are no
# duplicates, the worker id, per-client order and the statistics.
#
# As root, the server, pgbench and pg_prove run as the postgres user; the
# test files are copied to a directory it can read. The instance is removed
# on exit, pass or fail (KEEP_TMP=1 keeps it).
#
# The TypeID specification's vectors (test/vectors/typeid) are loaded into
# tables first, for test/pgtap/07_typeid_vectors.sql.
#
# The same concurrency run and pg_prove follow on a second instance with
# snowflake.layout = 'js-safe', over test/pgtap/js_safe/*.sql and
# 90_concurrency.sql.
#
# Usage: test/pgtap.sh [pgbench transactions per client, default 2500]
set -euo pipefail
cd "$(dirname "$0")/.."

. test/lib/pg.sh

CLIENTS=4
TRANSACTIONS=${1:-2500}
IDS_PER_TRANSACTION=11

DIR=""
DIR_JS=""
TAPDIR=""
cleanup() {
    pg_cleanup_all
    if [ -z "${KEEP_TMP:-}" ]; then
        [ -z "$DIR" ] || rm -rf "$DIR"
        [ -z "$DIR_JS" ] || rm -rf "$DIR_JS"
        [ -z "$TAPDIR" ] || rm -rf "$TAPDIR"
    else
        echo "kept $DIR $DIR_JS $TAPDIR"
    fi
}
trap cleanup EXIT

DIR=$(pg_tmpdir)
DIR_JS=$(pg_tmpdir)
TAPDIR=$(pg_tmpdir)
mkdir "$TAPDIR/tests" "$TAPDIR/js_safe"
cp test/pgtap/*.sql "$TAPDIR/tests/"
# The js-safe node: its own file, and the concurrency checks (layout-neutral).
cp test/pgtap/js_safe/*.sql test/pgtap/90_concurrency.sql "$TAPDIR/js_safe/"
[ "$(id -u)" = 0 ] && chown -R postgres: "$TAPDIR"

failed=0

# suite NAME DIR LAYOUT TESTDIR: an instance of snowflake.layout LAYOUT
# (worker 42) in DIR, the concurrency run, pg_prove of TESTDIR/*.sql.
suite() {
    local name=$1 DIR=$2 layout=$3 tests=$4
    echo "=== pgTAP ($name): snowflake.layout = '$layout'"
    pg_init "$DIR" \
        "shared_preload_libraries = 'snowflake'" \
        "snowflake.worker_id = 42" \
        "snowflake.layout = '$layout'" \
        "autovacuum = off"
    if ! pg_start "$DIR"; then
        echo "pgTAP ($name): the server did not start" >&2
        cat "$DIR/server.log" >&2
        failed=1
        return
    fi
    pg_psql "$DIR" -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION snowflake"

    # --- The TypeID specification's vectors ----------------------------------------
    # test/vectors/typeid/*.yml as tables for test/pgtap/07_typeid_vectors.sql,
    # with the number of entries each file has, counted apart from the YAML
    # parser ('- name:' lines), so that a case the loading loses fails the test.
    pg_psql "$DIR" -c "CREATE TABLE typeid_valid (name text, typeid text, prefix text, uuid uuid)" \
        -c "CREATE TABLE typeid_invalid (name text, typeid text)" \
        -c "CREATE TABLE typeid_vector_files (file text, entries int)"
    for f in valid invalid; do
        n=$(grep -c '^- name:' "test/vectors/typeid/$f.yml")
        pg_psql "$DIR" -c "INSERT INTO typeid_vector_files VALUES ('$f', $n)"
        python3 -c '
import csv, sys, yaml
columns = sys.argv[2].split(",")
writer = csv.writer(sys.stdout, quoting=csv.QUOTE_ALL)  # "" stays an empty string, not NULL
for case in yaml.safe_load(open(sys.argv[1], encoding="utf-8")):
    writer.writerow([case[c] for c in columns])
' "test/vectors/typeid/$f.yml" "$([ $f = valid ] && echo name,typeid,prefix,uuid || echo name,typeid)" |
            pg_psql "$DIR" -c "\\copy typeid_$f FROM pstdin WITH (FORMAT csv)"
    done

    # --- Ids from several backends at once -------------------------------------
    pg_psql "$DIR" <<SQL
CREATE UNLOGGED TABLE sf_concurrency (
    id bigint PRIMARY KEY,
    n bigserial,
    client integer NOT NULL
);
CREATE TABLE sf_concurrency_run AS
SELECT $CLIENTS AS clients, $TRANSACTIONS AS transactions, $IDS_PER_TRANSACTION AS ids_per_transaction,
       clock_timestamp() AS started, NULL::timestamptz AS finished,
       (SELECT ids_issued FROM snowflake_stats) AS ids_before, NULL::bigint AS ids_after;
SQL
    cat >"$TAPDIR/pgbench.sql" <<'SQL'
INSERT INTO sf_concurrency (id, client) VALUES (snowflake_nextval(), :client_id);
INSERT INTO sf_concurrency (id, client) SELECT id, :client_id FROM snowflake_nextval_batch(10) AS id;
SQL
    [ "$(id -u)" = 0 ] && chown postgres: "$TAPDIR/pgbench.sql"

    echo "--- pgbench: $CLIENTS clients x $TRANSACTIONS transactions x $IDS_PER_TRANSACTION ids"
    pgbench_status=0
    as_pg "$PGBIN/pgbench" -n -c "$CLIENTS" -j "$CLIENTS" -t "$TRANSACTIONS" -f "$TAPDIR/pgbench.sql" \
        -h "$DIR" -p "$PG_PORT" -U postgres postgres >"$DIR/pgbench.log" 2>&1 || pgbench_status=$?
    grep -E "^(number of (transactions actually processed|failed)|tps|latency average)" "$DIR/pgbench.log" || true
    if [ $pgbench_status -ne 0 ]; then
        echo "pgbench failed with status $pgbench_status:" >&2
        cat "$DIR/pgbench.log" >&2
    fi
    pg_psql "$DIR" -c "UPDATE sf_concurrency_run SET finished = clock_timestamp(),
                       ids_after = (SELECT ids_issued FROM snowflake_stats)"

    # --- pgTAP --------------------------------------------------------------------
    # 90_concurrency.sql sorts last, after the files that take ids themselves.
    echo "--- pg_prove"
    prove_status=0
    as_pg pg_prove --psql-bin "$PGBIN/psql" -h "$DIR" -p "$PG_PORT" -U postgres -d postgres \
        --failures --comments "$tests"/*.sql || prove_status=$?

    # A crashed backend would show in the server log.
    crash=0
    if grep -E "terminated by signal|PANIC:" "$DIR/server.log" >&2; then
        echo "pgTAP: a server process crashed (see above, from the server log)" >&2
        crash=1
    fi

    if [ $pgbench_status -ne 0 ] || [ $prove_status -ne 0 ] || [ $crash -ne 0 ]; then
        echo "pgTAP ($name): FAILED" >&2
        failed=1
    fi
    pg_stop "$DIR"
}

suite twitter "$DIR" twitter "$TAPDIR/tests"
# The same concurrency run, and the layout's own checks, on a js-safe node.
suite js-safe "$DIR_JS" js-safe "$TAPDIR/js_safe"

if [ $failed -ne 0 ]; then
    echo "pgTAP: FAILED" >&2
    exit 1
fi
echo "pgTAP: all tests passed"
