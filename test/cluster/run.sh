#!/bin/bash
# Multi-node suite of snowflake: many real PostgreSQL nodes issue ids
# independently into one data set, which a merge node assembles with logical
# replication, and no id collides.
#
#   static  four nodes with static worker ids 1-4, two of them under
#           libfaketime at +3 ms and -3 ms, each inserting concurrently into
#           its own orders table (pgbench, several seconds); a fifth node
#           subscribes to each (one publication per node, one subscription
#           each, the same table and primary key). Mid-run node 4 is killed
#           with kill -9 and replaced by a fresh node (new data directory)
#           with the same static worker id, after snowflake_advance_floor()
#           over the merged ids of that worker (docs/operations.md, "Carrying
#           the mark where PostgreSQL does not"). Then the dead node's disk
#           comes back (started without snowflake, issuing nothing) so that
#           its last rows reach the merge node too. Checks:
#             - every node's clock is where it should be (+3 ms, -3 ms, 0),
#               measured NTP-style from here
#             - merged rows = the sum of the nodes' rows, per node and in all
#             - no subscription error (pg_stat_subscription_stats) but the
#               dead node's lost connection; no conflict in the merge log;
#               every subscription has its apply worker
#             - every row's decoded worker id is the id its node held
#             - the merged order by id against the order by created_at, and
#               against the real time (created_at less the node's offset):
#               the largest disagreement, in ms, within the skew + 4 ms
#             - the replacement's ids sort after every id of the dead node,
#               also the ones the merge node only got from its disk
#   leased  TODO(leases): the same with worker ids leased from etcd (an etcd
#           cluster on loopback, 4 nodes with leased ids, failover = the
#           freed id taken by a fresh node after the lease's TTL). Not
#           written yet: it needs the lease feature. Asked for, it is
#           reported as skipped, never as passed.
#   all     both (the leased variant skipped while leasing is not available)
#
# Prints one line per check, "ok - ..." or "not ok - ..." (details on "#"
# lines), and ends with "N passed, N failed"; exits non-zero on any failure,
# 2 for a bad argument or when only the leased variant was asked for and it
# is not available. Every instance is stopped and removed at the end, pass
# or fail (KEEP_TMP=1 keeps their directories and logs).
#
# Usage: test/cluster/run.sh [static|leased|all]   (default: static)
# Needs root or the postgres user, pgbench, libfaketime, a C compiler (for
# test/fault/select_shim.c).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
. test/lib/pg.sh
FAULT_DIR=$PWD/test/fault
# Results, time and libfaketime helpers of the fault suite.
# shellcheck source=/dev/null
. "$FAULT_DIR/lib.sh"
# shellcheck source=test/cluster/lib.sh
. test/cluster/lib.sh

MODE=${1:-static}
case $MODE in
    static|leased|all) ;;
    *) echo "usage: $0 [static|leased|all]" >&2; exit 2 ;;
esac

# The clock offsets (seconds) of the nodes run under libfaketime, and the
# largest disagreement allowed beyond their spread.
SKEW_FAST=+0.003
SKEW_SLOW=-0.003
SKEW_SPREAD_MS=6
SKEW_SLACK_MS=4
LOAD_SECONDS=8       # load on the first four nodes
KILL_AFTER=3         # seconds into the load when node 4 is killed
LOAD_RATE=150        # pgbench transactions per second per node (10 rows each)

SHIM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-shim.XXXXXX")
LOAD_PIDS=()
cleanup() {
    local p
    cl_stop_all
    pg_cleanup_all
    for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$SHIM_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
umask 022

if [ ! -r "$FT_LIB" ]; then
    echo "not ok - libfaketime is installed ($FT_LIB missing: apt-get install libfaketime)"
    echo "0 passed, 1 failed"
    exit 1
fi
if ! ft_build_shim "$SHIM_DIR"; then
    echo "# could not compile test/fault/select_shim.c: the mark worker of a skewed node reads the real clock"
fi

# pgbench_ok LOG STATUS DESC: pgbench ended with status 0, no failed
# transaction.
pgbench_ok() {
    local failed
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$1")
    if [ "$2" = 0 ] && [ "${failed:-0}" = 0 ] && grep -q '^number of transactions actually processed' "$1"; then
        ok "$3 ($(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$1") transactions)"
    else
        not_ok "$3" "pgbench exit status $2, failed transactions '${failed:-?}'" \
            "$(grep -E 'error|ERROR|abort' "$1" | head -3)"
    fi
}

# merge_errors MERGE: ERROR lines of the merge node's log other than those of
# a lost or refused connection to a publisher (the killed node's).
merge_errors() {
    grep 'ERROR:' "$1/server.log" |
        grep -vE 'could not receive data from WAL stream|could not connect to the publisher|could not send data to WAL stream' || true
}

# -------------------------------------------------------------------------
variant_static() {
    echo "# static worker ids: 4 nodes (2 skewed), a merge node, kill -9 and a replacement"
    CL_ID_SOURCE=static
    local t0 n d
    t0=$(real_now)
    local -A DIR WORKER OFFSET
    local NODES=(n1 n2 n3 n4)
    WORKER=([n1]=1 [n2]=2 [n3]=3 [n4]=4 [n4b]=4 [merge]=100)
    OFFSET=([n1]="" [n2]=$SKEW_FAST [n3]=$SKEW_SLOW [n4]="" [n4b]="" [merge]="")

    # One initdb, copied into every data directory.
    cl_make_template || { bail "static: initdb"; return; }
    local pids=() names=(n1 n2 n3 n4 n4b merge)
    for n in "${names[@]}"; do
        DIR[$n]=$(pg_tmpdir)
        PG_INSTANCES+=("${DIR[$n]}")
        if [ "$n" = merge ]; then
            cl_merge_init "${DIR[$n]}" "${WORKER[$n]}" &
        else
            cl_node_init "${DIR[$n]}" "${WORKER[$n]}" &
        fi
        pids+=($!)
    done
    local i failed=0
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || { failed=1; echo "# initdb of ${names[$i]} failed"; }; done
    [ $failed = 0 ] || { bail "static: 6 data directories initialised"; return; }

    # Start the four nodes and the merge node (not the replacement yet).
    pids=()
    for n in "${NODES[@]}" merge; do
        cl_start "${DIR[$n]}" "${OFFSET[$n]}" &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed=1; done
    [ $failed = 0 ] || { bail "static: 4 nodes and the merge node started"; return; }
    ok "static: 4 nodes (worker ids 1-4; n2 at $SKEW_FAST s, n3 at $SKEW_SLOW s) and a merge node started ($(elapsed_since "$t0") s)"

    # Each node's clock, measured from here.
    local off rtt want
    for n in "${NODES[@]}"; do
        cl_clock_offset "${DIR[$n]}" || { not_ok "static: $n: clock offset measured"; continue; }
        read -r off rtt <<<"$REPLY"
        to_us "${OFFSET[$n]:-0}"; want=$REPLY
        local slack=$(( rtt / 2 + 700 ))
        if [ $((off - want)) -le $slack ] && [ $((want - off)) -le $slack ]; then
            ok "static: $n: clock $(cl_us_ms "$off") ms from the real one (want $(cl_us_ms "$want"), round trip $(cl_us_ms "$rtt") ms)"
        else
            not_ok "static: $n: clock offset" "measured $(cl_us_ms "$off") ms (round trip $(cl_us_ms "$rtt") ms), want $(cl_us_ms "$want") ms"
        fi
    done

    # Tables, publications, subscriptions (each node's at once).
    pids=()
    for n in "${NODES[@]}" merge; do
        cl_schema "${DIR[$n]}" &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed=1; done
    [ $failed = 0 ] || { bail "static: schema on every node"; return; }
    pids=()
    for n in "${NODES[@]}"; do
        { cl_publish "${DIR[$n]}" && cl_subscribe "${DIR[merge]}" "$n" "${DIR[$n]}"; } &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed=1; done
    [ $failed = 0 ] || { bail "static: publications of the nodes and their subscriptions on the merge node"; return; }
    ok "static: one publication per node, one subscription each on the merge node ($(elapsed_since "$t0") s)"

    # The load: all four nodes at once; node 4 is killed KILL_AFTER seconds in.
    local -A LOG LPID
    for n in "${NODES[@]}"; do
        LOG[$n]=${DIR[$n]}/pgbench.log
        cl_load "${DIR[$n]}" "$n" "$LOAD_SECONDS" 2 "$LOAD_RATE" >"${LOG[$n]}" 2>&1 &
        LPID[$n]=$!
        LOAD_PIDS+=($!)
    done
    echo "# $(elapsed_since "$t0") s: the load runs on the four nodes"
    sleep "$KILL_AFTER"
    local before_kill
    before_kill=$(cl_count "${DIR[n4]}")
    pg_kill9 "${DIR[n4]}" || { bail "static: n4 killed with kill -9"; return; }
    wait "${LPID[n4]}"
    local n4_status=$?
    cmp_num "static: n4 killed with kill -9 under load (over $before_kill rows; its pgbench lost the server: status $n4_status)" \
        "$n4_status" -ne 0

    # The replacement: a fresh data directory, the same static worker id,
    # its floor raised above the dead node's ids the merge node holds.
    local floor floor_rows
    floor=$(pg_val "${DIR[merge]}" "SELECT coalesce(max(id), 0) FROM orders WHERE snowflake_worker_id(id) = ${WORKER[n4]}")
    floor_rows=$(cl_count "${DIR[merge]}" "node = 'n4'")
    cl_start "${DIR[n4b]}" || { bail "static: replacement n4b started"; return; }
    cl_schema "${DIR[n4b]}" || { bail "static: schema on n4b"; return; }
    if pg_val "${DIR[n4b]}" "SELECT snowflake_advance_floor($floor)" >/dev/null; then
        ok "static: n4b (worker id ${WORKER[n4b]}): snowflake_advance_floor($floor), the largest of the $floor_rows merged ids of worker ${WORKER[n4]}"
    else
        not_ok "static: n4b: snowflake_advance_floor($floor)"
    fi
    if ! { cl_publish "${DIR[n4b]}" && cl_subscribe "${DIR[merge]}" n4b "${DIR[n4b]}"; }; then
        bail "static: publication of n4b and its subscription"; return
    fi
    LOG[n4b]=${DIR[n4b]}/pgbench.log
    cl_load "${DIR[n4b]}" n4b $((LOAD_SECONDS - KILL_AFTER)) 2 "$LOAD_RATE" >"${LOG[n4b]}" 2>&1 &
    LPID[n4b]=$!
    LOAD_PIDS+=($!)
    echo "# $(elapsed_since "$t0") s: n4b issues ids in n4's place"

    local st
    for n in n1 n2 n3 n4b; do
        wait "${LPID[$n]}"; st=$?
        pgbench_ok "${LOG[$n]}" "$st" "static: $n: load without a failed transaction"
    done
    echo "# $(elapsed_since "$t0") s: the load is over"

    # The merge node catches up with the live nodes.
    for n in n1 n2 n3 n4b; do
        wait_for "merged" 60 cl_caught_up "${DIR[merge]}" "$n" "${DIR[$n]}" \
            || not_ok "static: the merge node has every row of $n" \
                "node $(cl_count "${DIR[$n]}"), merged $(cl_count "${DIR[merge]}" "node = '$n'")"
    done

    echo "# $(elapsed_since "$t0") s: the merge node has caught up with the live nodes"

    # The dead node's disk comes back: started without snowflake (it issues
    # nothing), only so that its rows the merge node had not received yet
    # reach it through its subscription, which reconnects by itself.
    pg_conf "${DIR[n4]}" "shared_preload_libraries = ''"
    cl_start "${DIR[n4]}" || { bail "static: the dead node's data directory starts again (crash recovery)"; return; }
    wait_for "merged" 60 cl_caught_up "${DIR[merge]}" n4 "${DIR[n4]}" \
        || not_ok "static: the merge node has every row of n4 once its disk is back" \
            "node $(cl_count "${DIR[n4]}"), merged $(cl_count "${DIR[merge]}" "node = 'n4'")"
    echo "# $(elapsed_since "$t0") s: n4: $(cl_count "${DIR[n4]}") rows committed before kill -9; $floor_rows had reached the merge node at the failover"

    # --- checks --------------------------------------------------------------
    local total=0 c m
    for n in n1 n2 n3 n4 n4b; do
        c=$(cl_count "${DIR[$n]}")
        m=$(cl_count "${DIR[merge]}" "node = '$n'")
        is "static: $n: merged rows = its rows ($c)" "$m" "$c"
        total=$((total + c))
    done
    is "static: merged rows = the sum of the nodes' rows ($total)" "$(cl_count "${DIR[merge]}")" "$total"
    cmp_num "static: a real load ($total rows)" "$total" -gt 10000

    local M=${DIR[merge]}
    is "static: no apply or sync error on the live nodes' subscriptions (pg_stat_subscription_stats)" \
        "$(pg_val "$M" "SELECT coalesce(string_agg(subname || ': ' || apply_error_count || '/' || sync_error_count, ', '), '') FROM pg_stat_subscription_stats WHERE subname <> 'sub_n4' AND apply_error_count + sync_error_count > 0")" ""
    echo "# sub_n4 (the killed node's): $(pg_val "$M" "SELECT apply_error_count || ' apply errors, ' || sync_error_count || ' sync errors' FROM pg_stat_subscription_stats WHERE subname = 'sub_n4'") (its lost connection)"
    is "static: the merge log has no ERROR but the killed node's lost connection" "$(merge_errors "$M")" ""
    is "static: no primary-key conflict in the merge log" "$(grep -c 'duplicate key value' "$M/server.log")" 0
    is "static: every subscription has its apply worker (pg_stat_subscription)" \
        "$(pg_val "$M" "SELECT count(DISTINCT subname) FROM pg_stat_subscription WHERE pid IS NOT NULL AND relid IS NULL")" 5

    local map="('n1', ${WORKER[n1]}), ('n2', ${WORKER[n2]}), ('n3', ${WORKER[n3]}), ('n4', ${WORKER[n4]}), ('n4b', ${WORKER[n4b]})"
    is "static: every merged row's decoded worker id is its node's" \
        "$(pg_val "$M" "SELECT count(*) FROM orders o JOIN (VALUES $map) w(node, worker) USING (node) WHERE snowflake_worker_id(o.id) <> w.worker")" 0
    is "static: every merged row is of a known node" \
        "$(pg_val "$M" "SELECT count(*) FROM orders WHERE node NOT IN ('n1', 'n2', 'n3', 'n4', 'n4b')")" 0
    for n in n1 n2 n3 n4b; do
        is "static: $n: snowflake_stats reports worker id ${WORKER[$n]}" "$(cl_node_worker_id "${DIR[$n]}")" "${WORKER[$n]}"
        is "static: $n: no clock error (clock_backwards_errors)" \
            "$(pg_val "${DIR[$n]}" "SELECT clock_backwards_errors FROM snowflake_stats")" 0
    done

    # Failover: the replacement's ids sort after every id of the dead node.
    local dead_max new_min
    dead_max=$(pg_val "$M" "SELECT max(id) FROM orders WHERE node = 'n4'")
    new_min=$(pg_val "$M" "SELECT min(id) FROM orders WHERE node = 'n4b'")
    cmp_num "static: n4b's first id ($new_min) > every id of the dead n4 (max $dead_max)" "${new_min:-0}" -gt "${dead_max:-0}"
    cmp_num "static: ... and > the floor it was given" "${new_min:-0}" -gt "$floor"

    # Clock skew: the merged order by id against created_at (each node's own
    # clock) and against the real time (created_at less the node's offset,
    # which libfaketime applies exactly). A row whose created_at lags its own
    # id's time by more than 1.5 ms had its backend descheduled between the
    # two defaults: its created_at does not tell when its id was made, so it
    # is left out of the comparison, and counted.
    local offs
    offs="('n1', 0), ('n2', $(awk -v o="$SKEW_FAST" 'BEGIN { print o * 1000 }')), ('n3', $(awk -v o="$SKEW_SLOW" 'BEGIN { print o * 1000 }')), ('n4', 0), ('n4b', 0)"
    local res node_ms real_ms raw_ms lagged rows max_lag min_lag limit=$((SKEW_SPREAD_MS + SKEW_SLACK_MS))
    res=$(pg_val "$M" "
        WITH o AS (
            SELECT o.id, o.created_at AS t_node,
                   o.created_at - make_interval(secs => f.off_ms / 1000.0) AS t_real,
                   extract(epoch FROM o.created_at - snowflake_timestamp(o.id)) * 1000 AS lag_ms
            FROM orders o JOIN (VALUES $offs) f(node, off_ms) USING (node)),
        w AS (
            SELECT t_node, t_real, lag_ms,
                   max(t_node) FILTER (WHERE lag_ms BETWEEN -0.5 AND 1.5) OVER prev AS pn,
                   max(t_real) FILTER (WHERE lag_ms BETWEEN -0.5 AND 1.5) OVER prev AS pr,
                   max(t_node) OVER prev AS pn_all
            FROM o WINDOW prev AS (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))
        SELECT round(coalesce(max(extract(epoch FROM pn - t_node) * 1000) FILTER (WHERE lag_ms BETWEEN -0.5 AND 1.5), 0), 3),
               round(coalesce(max(extract(epoch FROM pr - t_real) * 1000) FILTER (WHERE lag_ms BETWEEN -0.5 AND 1.5), 0), 3),
               round(coalesce(max(extract(epoch FROM pn_all - t_node) * 1000), 0), 3),
               count(*) FILTER (WHERE lag_ms NOT BETWEEN -0.5 AND 1.5), count(*),
               round(max(lag_ms), 3), round(min(lag_ms), 3)
        FROM w")
    IFS='|' read -r node_ms real_ms raw_ms lagged rows max_lag min_lag <<<"$res"
    echo "# created_at - id time: from $min_lag to $max_lag ms; $lagged of $rows rows lag by more than 1.5 ms (left out)"
    if fcmp "${node_ms:-999}" '<=' "$limit"; then
        ok "static: order by id vs order by created_at (node clocks): largest disagreement $node_ms ms (<= $SKEW_SPREAD_MS + $SKEW_SLACK_MS)"
    else
        not_ok "static: order by id vs order by created_at (node clocks)" "largest disagreement $node_ms ms, want <= $limit"
    fi
    if fcmp "${real_ms:-999}" '<=' "$limit"; then
        ok "static: order by id vs real time: largest disagreement $real_ms ms (<= $SKEW_SPREAD_MS + $SKEW_SLACK_MS)"
    else
        not_ok "static: order by id vs real time" "largest disagreement $real_ms ms, want <= $limit"
    fi
    # The skew was really there: rows of n2 and n3 made less than 6 ms apart
    # in real time sort by their nodes' clocks, not by real time.
    if fcmp "${real_ms:-0}" '>=' 3; then
        ok "static: ... the skew shows in it (>= 3 ms)"
    else
        not_ok "static: ... the skew shows in it (>= 3 ms)" "largest disagreement with real time $real_ms ms"
    fi
    echo "# all rows, descheduled ones included: largest disagreement with created_at $raw_ms ms"
    cmp_num "static: rows left out of the comparison: $lagged of $rows (< 2%)" "$((lagged * 50))" -lt "$rows"

    echo "# $(elapsed_since "$t0") s: checks done"
    cl_stop_all
    echo "# $(elapsed_since "$t0") s: instances stopped"
    pg_cleanup_all
    echo "# static variant took $(elapsed_since "$t0") s (instances stopped and removed)"
}

# -------------------------------------------------------------------------
# TODO(leases): the leased variant. When the lease feature is in the
# installed extension, cl_leasing_available detects it, and this runs:
#   - an etcd cluster on loopback (three etcd members, data in a temp dir,
#     stopped by the EXIT trap like the PostgreSQL instances)
#   - CL_ID_SOURCE=leased: cl_node_init gives each node the lease settings
#     instead of a fixed worker id; cl_node_worker_id reads the id it got
#   - the same load, merge and checks as variant_static, with the expected
#     worker id of each node read from the node (and from etcd's lease
#     table), not set
#   - failover: kill -9 a node, wait out the lease's TTL, start a fresh node
#     that leases the freed id; its ids sort after the dead node's (the mark
#     handed over through etcd) and merge without conflict
variant_leased() {
    echo "# leased variant: not written yet (needs the etcd lease feature)" >&2
    return 1
}

SUITE_START=$(real_now)
case $MODE in
    static) variant_static ;;
    all)
        variant_static
        if cl_leasing_available; then
            variant_leased || not_ok "leased variant"
        else
            echo "# skipped: leased variant (needs etcd leases)"
        fi
        ;;
    leased)
        if cl_leasing_available; then
            variant_leased || not_ok "leased variant"
        else
            echo "# skipped: leased variant (needs etcd leases)"
            exit 2
        fi
        ;;
esac

echo "# cluster suite took $(elapsed_since "$SUITE_START") s"
if [ "$T_FAILED" -gt 0 ]; then
    printf '# failed: %s\n' "${T_FAILED_NAMES[@]}"
fi
echo "$T_PASSED passed, $T_FAILED failed"
[ "$T_FAILED" -eq 0 ]
