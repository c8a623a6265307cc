#!/bin/bash
# uuidv7() from several backends at once, on a throwaway instance that
# preloads snowflake (so the library is loaded in the postmaster before it
# forks: the case where an inherited random buffer would show).
#
#   1. pgbench, 4 clients on 2 threads, one connection each: every
#      transaction inserts 10 uuidv7() into an UNLOGGED table with a uuid
#      PRIMARY KEY, with the backend's session (pid and start time) and an
#      insertion counter.
#   2. pgbench -C, 4 clients: a new connection (a new backend) for every
#      transaction, each inserting 3 uuidv7(): many first UUIDs of backends.
#   3. A parallel query (CREATE TABLE AS over a parallel seq scan) whose
#      workers evaluate uuidv7() themselves.
#
# Then it asserts, one "ok - ..." / "not ok - ..." line each: pgbench ran
# without failures; the row count; no duplicate UUIDs; version 7 and variant
# 0b10 everywhere; times within the run; fork safety: the rand_b values (the
# last 8 bytes with the 2 variant bits cleared, 62 random bits) of different
# backends never intersect, nor do those of parallel workers and backends (a
# shared random stream would show as shared values; by chance even one is
# out of reach); every backend's first UUID has random bits no other backend
# produced; within a backend the UUIDs strictly increase in insertion order.
# Exits non-zero if any check fails.
#
# As root, the server, pgbench and psql run as the postgres user. The
# instance is removed on exit, pass or fail (KEEP_TMP=1 keeps it).
#
# Usage: test/uuid_backends.sh [transactions per client, default 2500]
set -euo pipefail
cd "$(dirname "$0")/.."

. test/lib/tap.sh
. test/lib/pg.sh

CLIENTS=4
THREADS=2
TRANSACTIONS=${1:-2500}
ROWS_PER_TRANSACTION=10
NEW_CONNECTIONS=50 # transactions per client with -C: 4 x 50 backends
ROWS_PER_CONNECTION=3
PARALLEL_ROWS=200000

DIR=""
WORK=""
cleanup() {
    pg_cleanup_all
    if [ -z "${KEEP_TMP:-}" ]; then
        [ -z "$WORK" ] || rm -rf "$WORK"
    else
        echo "kept $DIR $WORK"
    fi
}
trap cleanup EXIT

DIR=$(pg_tmpdir)
WORK=$(pg_tmpdir)

pg_init "$DIR" \
    "shared_preload_libraries = 'snowflake'" \
    "snowflake.worker_id = 1" \
    "autovacuum = off" \
    "max_connections = 50" \
    "max_worker_processes = 8" \
    "max_parallel_workers = 4"
if ! pg_start "$DIR"; then
    echo "uuid_backends: the server did not start" >&2
    cat "$DIR/server.log" >&2
    exit 1
fi

pg_psql "$DIR" <<'SQL'
CREATE EXTENSION snowflake;
CREATE UNLOGGED TABLE uuid_backends (
    id uuid PRIMARY KEY,
    n bigserial,          -- insertion order
    session text NOT NULL, -- pid@backend start: unique even if a pid is reused
    phase text NOT NULL
);
CREATE TABLE uuid_run AS SELECT clock_timestamp() AS started, NULL::timestamptz AS finished;
-- rand_b: the last 8 bytes, the 2 variant bits cleared.
CREATE FUNCTION rand_b(u uuid) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT set_byte(substr(uuid_send(u), 9), 0, get_byte(uuid_send(u), 8) & 63)
$$;
SQL

# One INSERT per transaction; the session key is computed once per statement.
session_sql="(SELECT pg_backend_pid() || '@' || extract(epoch FROM backend_start)
              FROM pg_stat_get_activity(pg_backend_pid()))"
cat >"$WORK/steady.sql" <<SQL
INSERT INTO uuid_backends (id, session, phase)
SELECT uuidv7(), $session_sql, 'steady' FROM generate_series(1, $ROWS_PER_TRANSACTION);
SQL
cat >"$WORK/connect.sql" <<SQL
INSERT INTO uuid_backends (id, session, phase)
SELECT uuidv7(), $session_sql, 'connect' FROM generate_series(1, $ROWS_PER_CONNECTION);
SQL
[ "$(id -u)" = 0 ] && chown postgres: "$WORK"/*.sql


# pgbench NAME SCRIPT OPTIONS...: runs pgbench, reports its status and failures.
run_pgbench() {
    local name=$1 script=$2 status=0; shift 2
    echo "# pgbench ($name): $*"
    as_pg "$PGBIN/pgbench" -n -c "$CLIENTS" -j "$THREADS" -f "$script" "$@" \
        -h "$DIR" -p "$PG_PORT" -U postgres postgres >"$WORK/pgbench_$name.log" 2>&1 || status=$?
    grep -E "^(number of (transactions actually processed|failed transactions)|tps)" "$WORK/pgbench_$name.log" \
        | sed 's/^/#   /' || true
    if [ $status -eq 0 ] && grep -qE "^number of failed transactions: 0 " "$WORK/pgbench_$name.log"; then
        report 1 "pgbench ($name) ran without errors or failed transactions"
    else
        report 0 "pgbench ($name) ran without errors or failed transactions" "status $status"
        sed 's/^/#   /' "$WORK/pgbench_$name.log" | tail -20
    fi
}


start=$(date +%s)
run_pgbench steady "$WORK/steady.sql" -t "$TRANSACTIONS"
run_pgbench connect "$WORK/connect.sql" -C -t "$NEW_CONNECTIONS"

# A parallel query: the workers evaluate uuidv7() (PARALLEL SAFE) in their
# own processes.
pg_psql "$DIR" -A -t >"$WORK/parallel_plan.txt" <<SQL
CREATE TABLE parallel_source AS SELECT g FROM generate_series(1, $PARALLEL_ROWS) AS g;
ANALYZE parallel_source;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF)
CREATE TABLE parallel_uuids AS SELECT uuidv7() AS id FROM parallel_source;
SQL
pg_psql "$DIR" -c "UPDATE uuid_run SET finished = clock_timestamp()"
echo "# load took $(( $(date +%s) - start )) s"

workers=$(sed -n 's/.*Workers Launched: \([0-9]*\).*/\1/p' "$WORK/parallel_plan.txt" | head -1)
if [ "${workers:-0}" -ge 1 ] && grep -q "Parallel Seq Scan" "$WORK/parallel_plan.txt" \
    && grep -A2 "Parallel Seq Scan" "$WORK/parallel_plan.txt" | grep -q "Output: uuidv7()"; then
    report 1 "parallel query: uuidv7() evaluated in $workers parallel workers"
else
    report 0 "parallel query: uuidv7() evaluated in parallel workers" "plan: $(tr '\n' ' ' <"$WORK/parallel_plan.txt")"
fi

expected_rows=$((CLIENTS * TRANSACTIONS * ROWS_PER_TRANSACTION + CLIENTS * NEW_CONNECTIONS * ROWS_PER_CONNECTION))
sql_is "$DIR" "$expected_rows rows" "$expected_rows" \
    "SELECT count(*) FROM uuid_backends"
sql_is "$DIR" "no duplicate UUIDs" "0" \
    "SELECT count(*) - count(DISTINCT id) FROM uuid_backends"
sql_is "$DIR" "$CLIENTS backends in the steady phase, $((CLIENTS * NEW_CONNECTIONS)) in the connect phase" \
    "$CLIENTS|$((CLIENTS * NEW_CONNECTIONS))" \
    "SELECT count(DISTINCT session) FILTER (WHERE phase = 'steady'), count(DISTINCT session) FILTER (WHERE phase = 'connect')
     FROM uuid_backends"
sql_is "$DIR" "version 7 and variant 0b10 everywhere (backends and parallel workers)" "0" \
    "SELECT count(*) FROM (SELECT id FROM uuid_backends UNION ALL SELECT id FROM parallel_uuids) s
     WHERE get_byte(uuid_send(id), 6) >> 4 <> 7 OR get_byte(uuid_send(id), 8) >> 6 <> 2"
sql_is "$DIR" "decoded times lie within the run" "0" \
    "SELECT count(*) FROM (SELECT id FROM uuid_backends UNION ALL SELECT id FROM parallel_uuids) s, uuid_run
     WHERE uuidv7_timestamp(id) NOT BETWEEN date_trunc('milliseconds', started) AND finished"

pg_psql "$DIR" <<'SQL'
CREATE TABLE streams AS
SELECT session, n, rand_b(id) AS rb FROM uuid_backends
UNION ALL
SELECT 'parallel query', NULL, rand_b(id) FROM parallel_uuids;
CREATE INDEX ON streams (rb);
ANALYZE streams;
SQL
sql_is "$DIR" "rand_b values of different backends never intersect" "0" \
    "SELECT count(*) FROM (SELECT rb FROM streams WHERE session <> 'parallel query'
                           GROUP BY rb HAVING count(DISTINCT session) > 1) s"
sql_is "$DIR" "rand_b values of the parallel workers meet no backend's" "0" \
    "SELECT count(*) FROM streams p JOIN streams b ON b.rb = p.rb
     WHERE p.session = 'parallel query' AND b.session <> 'parallel query'"
sql_is "$DIR" "no rand_b value occurs twice at all (62 random bits)" "0" \
    "SELECT count(*) - count(DISTINCT rb) FROM streams"
sql_is "$DIR" "every backend's first UUID has random bits no other backend produced" \
    "$((CLIENTS + CLIENTS * NEW_CONNECTIONS))|0" \
    "WITH first AS (SELECT DISTINCT ON (session) session, rb FROM streams
                    WHERE session <> 'parallel query' ORDER BY session, n)
     SELECT count(*),
            (SELECT count(*) FROM first f JOIN streams s ON s.rb = f.rb AND s.session <> f.session)
     FROM first"
sql_is "$DIR" "within each backend the UUIDs strictly increase in insertion order" "0" \
    "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY session ORDER BY n) AS prev
                           FROM uuid_backends) s
     WHERE id <= prev"

crash=0
if grep -E "terminated by signal|PANIC:" "$DIR/server.log" >&2; then
    crash=1
fi
report $((1 - crash)) "no server process crashed"

if ! tap_summary; then
    echo "uuid_backends: FAILED" >&2
    exit 1
fi
echo "uuid_backends: all checks passed"
