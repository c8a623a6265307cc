#!/bin/bash
# `make demo-cluster`: many nodes, one id space. Three throwaway PostgreSQL
# nodes issue ids independently (worker ids 1, 2, 3), a fourth merges their
# orders with logical replication; the merged rows are decoded, interleaving
# by time. Then node 3 dies (kill -9) and a fresh node takes over its worker
# id: its ids continue above the dead node's. Everything it starts is stopped
# and removed at the end.
#
# Worker ids are static for now (snowflake.worker_id in each node's
# postgresql.conf). TODO(leases): with the etcd lease feature installed,
# `scripts/demo_cluster.sh leased` starts etcd, gives the nodes leased ids,
# shows the lease table, and shows node 3's id freed after the lease's TTL
# and taken by the new node; the places are marked TODO(leases) below.
#
# Usage: scripts/demo_cluster.sh [static|leased]   (default: static)
set -euo pipefail
cd "$(dirname "$0")/.." || exit 2

PG_CONFIG=${PG_CONFIG:-pg_config}
export PG_CONFIG
. test/lib/pg.sh
FAULT_DIR=$PWD/test/fault
# Results, time and libfaketime helpers of the fault suite.
# shellcheck source=/dev/null
. "$FAULT_DIR/lib.sh"
# shellcheck source=test/cluster/lib.sh
. test/cluster/lib.sh

CL_ID_SOURCE=${1:-static}
case $CL_ID_SOURCE in
    static) ;;
    leased)
        if ! cl_leasing_available; then
            echo "demo-cluster: leased worker ids need the etcd lease feature, which the installed" >&2
            echo "extension does not have yet; run it without an argument for static ids" >&2
            exit 2
        fi ;;
    *) echo "usage: $0 [static|leased]" >&2; exit 2 ;;
esac

LOAD_PIDS=()
cleanup() {
    local p
    cl_stop_all
    pg_cleanup_all
    for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    # TODO(leases): stop the etcd member started for the demo.
}
trap cleanup EXIT
trap 'exit 130' INT TERM
umask 022

START=$(real_now)
say() { echo; echo "== $*"; }
# run DIR LABEL SQL: shows and runs a statement on a node.
run() {
    echo
    echo "$2=# $3"
    pg_psql "$1" -c "$3"
}

# run_each SQL: runs SQL on n1, n2 and n3, and shows their rows as one
# table (copied into a temporary table of the merge node, which has the
# same extension, so that the columns keep their types).
run_each() {
    local n
    echo
    echo "n1, n2, n3=# $1"
    {
        echo "CREATE TEMP TABLE each_node AS SELECT ''::text AS node, * FROM ($1) s WITH NO DATA;"
        echo "COPY each_node FROM STDIN;"
        for n in "${NODES[@]}"; do
            pg_psql "${DIR[$n]}" -c "COPY (SELECT '$n', * FROM ($1) s) TO STDOUT"
        done
        echo '\.'
        echo "SELECT * FROM each_node ORDER BY node;"
    } | pg_psql "${DIR[merge]}"
}

declare -A DIR WORKER
NODES=(n1 n2 n3)
WORKER=([n1]=1 [n2]=2 [n3]=3 [n3b]=3 [merge]=100)

# TODO(leases): start etcd here (one member on a loopback port, data in a
# temporary directory) and point cl_id_conf at it.
say "starting three nodes (worker ids 1, 2, 3) and a merge node (worker id 100), each a throwaway PostgreSQL"
echo "   (a fourth node's data directory is initialised now too, to stand in for node 3 later)"
cl_make_template
pids=()
for n in n1 n2 n3 n3b merge; do
    DIR[$n]=$(pg_tmpdir)
    PG_INSTANCES+=("${DIR[$n]}")
    if [ "$n" = merge ]; then
        cl_merge_init "${DIR[$n]}" "${WORKER[$n]}" &
    else
        cl_node_init "${DIR[$n]}" "${WORKER[$n]}" &
    fi
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
pids=()
for n in "${NODES[@]}" merge; do
    cl_start "${DIR[$n]}" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for n in "${NODES[@]}" merge; do
    echo "   $n: ${DIR[$n]} (snowflake.worker_id = $(pg_val "${DIR[$n]}" "SHOW snowflake.worker_id"))"
done

say "the same orders table on every node; each node publishes it, the merge node subscribes to each"
echo
echo "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), node text NOT NULL,"
echo "                     created_at timestamptz NOT NULL DEFAULT clock_timestamp(), client integer, amount numeric(10, 2));"
for n in "${NODES[@]}" merge; do cl_schema "${DIR[$n]}"; done
for n in "${NODES[@]}"; do
    cl_publish "${DIR[$n]}"
    cl_subscribe "${DIR[merge]}" "$n" "${DIR[$n]}"
done
echo "n1, n2, n3=# CREATE PUBLICATION orders_pub FOR TABLE orders;"
echo "merge=# CREATE SUBSCRIPTION sub_n1 CONNECTION 'host=${DIR[n1]} ...' PUBLICATION orders_pub;   -- and sub_n2, sub_n3"

say "inserting on all three nodes at once for 3 seconds (pgbench, 2 clients each, one order per transaction)"
for n in "${NODES[@]}"; do
    cl_load "${DIR[$n]}" "$n" 3 2 60 1 >"${DIR[$n]}/pgbench.log" 2>&1 &
    LOAD_PIDS+=($!)
done
for p in "${LOAD_PIDS[@]}"; do wait "$p"; done
LOAD_PIDS=()
for n in "${NODES[@]}"; do
    wait_for "merged" 30 cl_caught_up "${DIR[merge]}" "$n" "${DIR[$n]}"
done

M=${DIR[merge]}
run "$M" merge "SELECT node, count(*) AS orders, min(id), max(id) FROM orders GROUP BY node ORDER BY node"
echo
echo "   Merged without a single conflict. Twelve consecutive merged rows, in id order: the ids"
echo "   interleave by time, whichever node made them; the worker id says which node did."
run "$M" merge "SELECT o.id, o.node, d.ts, d.worker_id, d.sequence FROM orders o, snowflake_decode(o.id) d
WHERE o.id >= (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY id) FROM orders) ORDER BY o.id LIMIT 12"

say "who holds which worker id"
# TODO(leases): with leased ids, the lease table from etcd (node, worker id,
# lease, TTL left) instead of each node's setting.
run_each "SELECT current_setting('snowflake.worker_id')::integer AS worker_id, current_setting('unix_socket_directories') AS socket_dir"

say "each node's statistics"
run_each "SELECT worker_id, ids_issued, last_timestamp, overflow_waits, clock_backwards_events, high_water_mark FROM snowflake_stats"

say "node 3 dies: kill -9 of its postmaster"
pg_kill9 "${DIR[n3]}"
sleep 1
dead_max=$(pg_val "$M" "SELECT max(id) FROM orders WHERE snowflake_worker_id(id) = 3")
run "$M" merge "SELECT subname, pid IS NOT NULL AS receiving, latest_end_time FROM pg_stat_subscription ORDER BY subname"
echo
echo "   Its subscription has no apply worker any more: nothing arrives from node 3."
# TODO(leases): with leased ids, wait out the lease's TTL here and show the
# lease table without worker id 3: the id is free.
echo "   With static ids, worker id 3 is free once node 3 is known to be dead for good (it must"
echo "   never come back with it). A fresh node takes it over; first its high-water mark is"
echo "   raised above every id of worker 3 that the merge node holds:"

say "a fresh node (new data directory, snowflake.worker_id = 3) takes over"
cl_start "${DIR[n3b]}"
cl_schema "${DIR[n3b]}"
echo
echo "merge=# SELECT max(id) FROM orders WHERE snowflake_worker_id(id) = 3;   -- $dead_max"
run "${DIR[n3b]}" n3b "SELECT snowflake_advance_floor($dead_max)"
cl_publish "${DIR[n3b]}"
cl_subscribe "$M" n3b "${DIR[n3b]}"
echo "n3b=# CREATE PUBLICATION orders_pub FOR TABLE orders;"
echo "merge=# CREATE SUBSCRIPTION sub_n3b CONNECTION 'host=${DIR[n3b]} ...' PUBLICATION orders_pub;"
run "${DIR[n3b]}" n3b "INSERT INTO orders (node, client) SELECT 'n3b', 0 FROM generate_series(1, 5)"
wait_for "merged" 30 cl_caught_up "$M" n3b "${DIR[n3b]}"
echo
echo "   Worker 3's ids on the merge node: the new node's continue above the dead node's."
run "$M" merge "SELECT o.node, o.id, d.ts, d.worker_id, d.sequence FROM orders o, snowflake_decode(o.id) d
WHERE o.id IN ((SELECT max(id) FROM orders WHERE node = 'n3'), (SELECT min(id) FROM orders WHERE node = 'n3b'))
   OR o.node = 'n3b' ORDER BY o.id"
run "$M" merge "SELECT count(*) AS merged_orders, count(DISTINCT id) AS distinct_ids,
       (SELECT max(id) FROM orders WHERE node = 'n3') < (SELECT min(id) FROM orders WHERE node = 'n3b') AS new_ids_above_dead_ones,
       (SELECT sum(apply_error_count) FROM pg_stat_subscription_stats WHERE subname <> 'sub_n3') AS apply_errors_of_live_nodes
FROM orders"

say "stopping every instance"
cl_stop_all
pg_cleanup_all
echo "   done in $(elapsed_since "$START") s"
