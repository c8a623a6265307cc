#!/bin/bash
# `make demo`: a throwaway PostgreSQL instance with snowflake preloaded, a
# table keyed by snowflake_nextval(), its ids decoded, the statistics, and
# UUIDv7. The instance and its directory are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/pg.sh
trap pg_cleanup_all EXIT

dir=$(pg_tmpdir)
echo "== starting a throwaway PostgreSQL in $dir (worker id 7)"
pg_snowflake demo "$dir"

run() {
    echo
    echo "snowflake=# $1"
    pg_psql "$dir" -c "$1"
}

run "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text NOT NULL)"
run "INSERT INTO orders (item) SELECT 'item ' || g FROM generate_series(1, 5) g"
run "SELECT o.id, o.item, d.ts, d.worker_id, d.sequence FROM orders o, snowflake_decode(o.id) d ORDER BY o.id"
run "SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM snowflake_nextval_batch(100000) AS id"
run "SELECT worker_id, ids_issued, overflow_waits, clock_backwards_events, last_timestamp, high_water_mark FROM snowflake_stats"
run "EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id >= snowflake_from_timestamp(now() - interval '1 day')"
run "SELECT snowflake_compose('2025-06-01 12:00:00+00', 7, 0) AS id, snowflake_timestamp(snowflake_compose('2025-06-01 12:00:00+00', 7, 0))"
run "SELECT u AS uuid, uuidv7_timestamp(u) FROM (SELECT uuidv7() AS u FROM generate_series(1, 3)) s"
echo
echo "== stopping the instance"
