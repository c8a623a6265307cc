#!/bin/bash
# Concurrency suite of snowflake: 8 pgbench clients (2 threads) mixing
# snowflake_nextval() and snowflake_nextval_batch(n) write at least 2 million
# ids into an UNLOGGED table whose primary key is the id, on a throwaway
# instance. Checks:
#   - pgbench: exit status 0 and no failed transaction (a duplicate id would
#     abort a client with a unique violation);
#   - rows = ids requested (every statement logs how many it asked for);
#   - ids from each connection strictly increase in issue order;
#   - every id is above every id committed before its statement began,
#     whichever connection issued that one;
#   - every id carries the worker id; snowflake_stats.ids_issued = rows.
# Prints "ok - ..." / "not ok - ..." per check and "N passed, N failed";
# exits non-zero on any failure.
#
# Environment: SNOWFLAKE_CONCURRENCY_IDS (default 2000000) ids to aim for,
# SNOWFLAKE_CONCURRENCY_CLIENTS (8), SNOWFLAKE_CONCURRENCY_JOBS (2),
# SNOWFLAKE_CONCURRENCY_SHARED_BUFFERS (256MB). KEEP_TMP=1 keeps the instance
# directory. bench/concurrency_long.sh runs this with 10 million ids.
#
# How issue order is recorded. Each statement takes a number from the
# sequence stmt_seq once (in a MATERIALIZED CTE, evaluated before any id), so
# the statements of one connection, which run one after another, get
# increasing numbers. Within a statement, pos is the position of the row in
# the set-returning function that drives it:
#   INSERT ... SELECT g, snowflake_nextval() FROM generate_series(1, k) g
#     the function scan returns g in ascending order and the projection calls
#     snowflake_nextval() once per row as the rows are pulled, so the call
#     order is the order of g;
#   INSERT ... SELECT b.pos, b.id FROM snowflake_nextval_batch(n)
#       WITH ORDINALITY b(id, pos)
#     ORDINALITY numbers the rows in the order the function returned them.
# So (stmt, pos) is the issue order within a connection, independent of the
# order in which rows land in the heap. If the planner ever evaluated rows
# out of that order the check would fail loudly, not pass silently.
# The CTE also reads max(id) over committed rows (the statement's snapshot is
# taken before any id is issued): every new id must be above it.
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/tap.sh
. test/lib/pg.sh

TARGET=${SNOWFLAKE_CONCURRENCY_IDS:-2000000}
CLIENTS=${SNOWFLAKE_CONCURRENCY_CLIENTS:-8}
JOBS=${SNOWFLAKE_CONCURRENCY_JOBS:-2}
SHARED_BUFFERS=${SNOWFLAKE_CONCURRENCY_SHARED_BUFFERS:-256MB}
WORKER=5

finish() { tap_summary; exit; }

trap pg_cleanup_all EXIT
trap 'exit 130' INT TERM
umask 022

# Scripts, with the sizes they ask for. Mean ids per transaction (weights
# 3:2:5): (3 * 1000.5 + 2 * 5000.5 + 5 * 1) / 10 = 1300.75.
MEAN_X100=130075
TRANSACTIONS=$(( (TARGET * 100 * 108 / 100 / MEAN_X100 + CLIENTS - 1) / CLIENTS ))  # 8 % margin

dir=$(pg_tmpdir)
pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = $WORKER" \
    "shared_buffers = $SHARED_BUFFERS" "work_mem = '256MB'" "maintenance_work_mem = '256MB'" \
    "autovacuum = off" "synchronous_commit = off" "max_connections = $((CLIENTS + 20))" \
    || { not_ok "instance initialised"; finish; }
pg_start "$dir" || { not_ok "server started" "$(tail -5 "$dir/server.log")"; finish; }

pg_psql "$dir" >/dev/null <<'SQL' || { not_ok "schema created"; finish; }
CREATE EXTENSION snowflake;
CREATE SEQUENCE stmt_seq;
CREATE UNLOGGED TABLE ids (
    id bigint PRIMARY KEY,
    client int NOT NULL,    -- pgbench client
    pid int NOT NULL,       -- the backend (connection) that issued it
    stmt bigint NOT NULL,   -- statement, increasing within a connection
    pos int NOT NULL,       -- position within the statement, in issue order
    seen bigint NOT NULL    -- largest id committed before the statement began
);
CREATE UNLOGGED TABLE requests (client int, pid int, stmt bigint, n int, kind text);
SQL

cat >"$dir/nextval.sql" <<'SQL'
\set k random(1, 2000)
WITH s AS MATERIALIZED (SELECT nextval('stmt_seq') AS stmt, coalesce(max(id), 0) AS seen FROM ids),
     r AS (INSERT INTO requests SELECT :client_id, pg_backend_pid(), stmt, :k, 'nextval' FROM s)
INSERT INTO ids (client, pid, stmt, pos, id, seen)
SELECT :client_id, pg_backend_pid(), s.stmt, g, snowflake_nextval(), s.seen
FROM s, generate_series(1, :k) AS g;
SQL
cat >"$dir/batch.sql" <<'SQL'
\set n random(1, 10000)
WITH s AS MATERIALIZED (SELECT nextval('stmt_seq') AS stmt, coalesce(max(id), 0) AS seen FROM ids),
     r AS (INSERT INTO requests SELECT :client_id, pg_backend_pid(), stmt, :n, 'batch' FROM s)
INSERT INTO ids (client, pid, stmt, pos, id, seen)
SELECT :client_id, pg_backend_pid(), s.stmt, b.pos, b.id, s.seen
FROM s, snowflake_nextval_batch(:n) WITH ORDINALITY AS b(id, pos);
SQL
cat >"$dir/single.sql" <<'SQL'
WITH s AS MATERIALIZED (SELECT nextval('stmt_seq') AS stmt, coalesce(max(id), 0) AS seen FROM ids),
     r AS (INSERT INTO requests SELECT :client_id, pg_backend_pid(), stmt, 1, 'single' FROM s)
INSERT INTO ids (client, pid, stmt, pos, id, seen)
SELECT :client_id, pg_backend_pid(), s.stmt, 1, snowflake_nextval(), s.seen FROM s;
SQL
chmod 644 "$dir"/*.sql

pg_val "$dir" "SELECT snowflake_stats_reset()" >/dev/null
echo "# $CLIENTS clients, $JOBS threads, $TRANSACTIONS transactions each, aiming at $TARGET ids"
start=${EPOCHREALTIME/./}
as_pg "$PGBIN/pgbench" -n -h "$dir" -p "$PG_PORT" -U postgres -c "$CLIENTS" -j "$JOBS" \
    -t "$TRANSACTIONS" --random-seed=20250101 \
    -f "$dir/nextval.sql@3" -f "$dir/batch.sql@2" -f "$dir/single.sql@5" postgres \
    >"$dir/pgbench.log" 2>&1
status=$?
elapsed_ms=$(( (${EPOCHREALTIME/./} - start) / 1000 ))

failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$dir/pgbench.log")
if [ "$status" = 0 ] && [ "${failed_tx:-x}" = 0 ]; then
    ok "pgbench: exit status 0, 0 failed transactions"
else
    not_ok "pgbench: exit status 0, 0 failed transactions" "exit status $status, failed '${failed_tx:-?}'" \
        "$(grep -iE 'error|abort|duplicate' "$dir/pgbench.log" | head -5)"
fi

checks_start=${EPOCHREALTIME/./}
read -r rows requested <<<"$(pg_val "$dir" \
    "SELECT (SELECT count(*) FROM ids) || ' ' || (SELECT coalesce(sum(n), 0) FROM requests)")"
echo "# $rows ids in $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s ($(( rows * 1000 / (elapsed_ms > 0 ? elapsed_ms : 1) )) ids/s, checks not included)"
is "rows = ids requested ($requested): no id lost, none refused as a duplicate" "$rows" "$requested"
# No duplicate: the primary key refused none (pgbench had no failed
# transaction) and every id requested is in the table.
if [[ $rows =~ ^[0-9]+$ ]] && [ "$rows" -ge "$TARGET" ]; then
    ok "at least $TARGET ids ($rows)"
else
    not_ok "at least $TARGET ids" "got '$rows'"
fi

is "each pgbench client used one connection" \
    "$(pg_val "$dir" "SELECT count(DISTINCT client) || ' ' || count(DISTINCT pid) || ' ' || count(DISTINCT (client, pid)) FROM requests")" \
    "$CLIENTS $CLIENTS $CLIENTS"
is "all three statement kinds ran" \
    "$(pg_val "$dir" "SELECT string_agg(kind, ' ' ORDER BY kind) FROM (SELECT DISTINCT kind FROM requests) k")" \
    "batch nextval single"
is "ids strictly increase per connection in issue order" \
    "$(pg_val "$dir" "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY pid ORDER BY stmt, pos) AS prev FROM ids) s WHERE id <= prev")" 0
is "every id is above every id committed before its statement" \
    "$(pg_val "$dir" "SELECT count(*) FROM ids WHERE id <= seen")" 0
is "every id carries worker id $WORKER" \
    "$(pg_val "$dir" "SELECT count(*) FROM ids WHERE snowflake_worker_id(id) <> $WORKER")" 0
is "snowflake_stats.ids_issued = rows" "$(pg_val "$dir" "SELECT ids_issued FROM snowflake_stats")" "$rows"
pg_val "$dir" "SELECT 'overflow_waits ' || overflow_waits || ', clock_backwards_events ' || clock_backwards_events || ', reservations ' || reservations || ', reservation_waits ' || reservation_waits FROM snowflake_stats" | sed 's/^/# /'

echo "# checks took $(( (${EPOCHREALTIME/./} - checks_start) / 1000000 )) s"
pg_stop "$dir"
echo "# total $(( (${EPOCHREALTIME/./} - start) / 1000000 )) s after the start of pgbench"
finish
