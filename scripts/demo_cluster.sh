#!/bin/bash
# `make demo-cluster`: many nodes, one id space. Three throwaway PostgreSQL
# nodes issue ids independently, a fourth merges their orders with logical
# replication; the merged rows are decoded, interleaving by time. Then node 3
# dies (kill -9) and a fresh node takes over its worker id: its ids continue
# above the dead node's. Everything it starts is stopped and removed at the
# end, whatever happens.
#
#   leased  (the default) the nodes lease their worker ids from etcd (one
#           member on a loopback port; snowflake.worker_id unset, lease TTL
#           5 s): the lease table in etcd says which node holds which id;
#           node 3's id stays held until its lease expires, then a fresh node
#           leases it and starts above the id's mark in etcd, with nothing
#           done by hand.
#   static  snowflake.worker_id = 1, 2, 3 in the nodes' postgresql.conf; the
#           fresh node gets worker id 3 and its floor is raised by hand with
#           snowflake_advance_floor().
# Without an argument, leased when etcd is installed and the installed
# extension can lease ids, static otherwise (with a note).
#
# COORDINATOR=zookeeper (`make demo-cluster COORDINATOR=zookeeper`): leased,
# from a ZooKeeper server the demo starts (one server on a loopback port,
# test/lib/zookeeper.sh) instead of etcd. ZooKeeper's view replaces etcd's
# lease table: the ephemeral znodes <prefix>/workers/<id>, the session
# owning each (the lease_session in the node's snowflake_stats) and their
# data, read with ZooKeeper's own command-line client (the Java class behind
# Debian's zkCli.sh); node 3's id stays held until its session times out.
#
# Usage: [COORDINATOR=etcd|zookeeper] scripts/demo_cluster.sh [leased|static]
set -euo pipefail
cd "$(dirname "$0")/.." || exit 2

. test/lib/suite.sh
# shellcheck source=test/cluster/lib.sh
. test/cluster/lib.sh

COORDINATOR=${COORDINATOR:-etcd}
case $COORDINATOR in
    etcd) ;;
    zookeeper)
        . test/lib/zookeeper.sh
        CL_COORDINATOR=zookeeper
        if [ "${1:-leased}" = leased ] && ! cl_leasing_available; then
            echo "demo-cluster: worker ids leased from ZooKeeper need Java and ZooKeeper (Debian's zookeeper" >&2
            echo "package) and the installed extension's snowflake.zookeeper_hosts" >&2
            exit 2
        fi ;;
    *) echo "demo-cluster: COORDINATOR is etcd or zookeeper, not '$COORDINATOR'" >&2; exit 2 ;;
esac
is_zk() { [ "$COORDINATOR" = zookeeper ]; }

case ${1:-} in
    "")
        if cl_leasing_available; then
            CL_ID_SOURCE=leased
        else
            CL_ID_SOURCE=static
            echo "demo-cluster: etcd or the lease feature of the installed extension is missing:" >&2
            echo "showing static worker ids" >&2
        fi ;;
    leased)
        if ! cl_leasing_available; then
            echo "demo-cluster: leased worker ids need etcd (/usr/bin/etcd, etcdctl) and the installed" >&2
            echo "extension's lease settings; run it with 'static' for static worker ids" >&2
            exit 2
        fi
        CL_ID_SOURCE=leased ;;
    static) CL_ID_SOURCE=static ;;
    *) echo "usage: $0 [leased|static]" >&2; exit 2 ;;
esac
CL_LEASE_TTL=5
CL_LEASE_PREFIX=/snowflake

trap cl_cleanup EXIT
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

# run_each SQL: runs SQL on n1, n2 and n3 (those in NODES), and shows their
# rows as one table (copied into a temporary table of the merge node, which
# has the same extension, so that the columns keep their types).
run_each() {
    local n
    echo
    local names="${NODES[*]}"
    echo "${names// /, }=# $1"
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

# lease_table: etcd's lease table (the keys of /snowflake/workers/), with
# the node each lease belongs to (the lease_id in its snowflake_stats) and
# the time its lease has left, shown as a table by the merge node.
lease_table() {
    local id lease value node n ttl rows=
    echo
    echo "\$ etcdctl get --prefix $CL_LEASE_PREFIX/workers/   (and etcdctl lease timetolive of each lease)"
    while IFS=$'\t' read -r id lease value; do
        [ -n "$id" ] || continue
        node='?'
        for n in "${!LEASE[@]}"; do [ "${LEASE[$n]}" = "$lease" ] && node=$n; done
        ttl=$(etcd_ctl lease timetolive "$(printf '%x' "$lease")" | sed -n 's/.*remaining(\([0-9-]*\)s).*/\1/p')
        rows+="${rows:+, }('$CL_LEASE_PREFIX/workers/$id', $lease::bigint, ${ttl:-NULL}::integer, '$node', '$value')"
    done < <(cl_lease_table)
    if [ -z "$rows" ]; then
        echo "(no key)"
        return
    fi
    pg_psql "${DIR[merge]}" -c "SELECT * FROM (VALUES $rows) t(key, lease_id, ttl_left_s, node, value) ORDER BY key"
}

# zk_view: ZooKeeper's view, as lease_table shows etcd's: the ephemeral
# znodes of <prefix>/workers/, the session owning each (matched with the
# lease_session of the nodes' snowflake_stats) and their data, shown as a
# table by the merge node.
zk_view() {
    local id session value node n rows=
    echo
    echo "\$ zkCli.sh -server $ZK_HOSTS ls $CL_LEASE_PREFIX/workers   (and get -s of each: its data and ephemeralOwner)"
    while IFS=$'\t' read -r id session value; do
        [ -n "$id" ] || continue
        node='?'
        for n in "${!LEASE[@]}"; do [ "${LEASE[$n]}" = "$session" ] && node=$n; done
        rows+="${rows:+, }('$CL_LEASE_PREFIX/workers/$id', '$session', '$node', '$value')"
    done < <(cl_zk_workers)
    if [ -z "$rows" ]; then
        echo "(no znode)"
        return
    fi
    pg_psql "${DIR[merge]}" -c "SELECT * FROM (VALUES $rows) t(znode, session, node, data) ORDER BY znode"
}

# learn_lease NODE: waits until the node holds its lease; sets WORKER and
# LEASE for it (ZooKeeper: the session id, as lease_session prints it).
learn_lease() {
    if ! wait_for "held" 30 cl_held "${DIR[$1]}"; then
        echo "demo-cluster: $1 holds no worker id lease after 30 s:" >&2
        pg_val "${DIR[$1]}" "SELECT lease_state || ': ' || coalesce(lease_last_error, '') FROM snowflake_stats" >&2
        exit 1
    fi
    WORKER[$1]=$(cl_node_worker_id "${DIR[$1]}")
    if is_zk; then
        LEASE[$1]=$(pg_val "${DIR[$1]}" "SELECT lease_session FROM snowflake_stats")
    else
        LEASE[$1]=$(pg_val "${DIR[$1]}" "SELECT lease_id FROM snowflake_stats")
    fi
}

declare -A DIR WORKER LEASE
NODES=(n1 n2 n3)
if [ "$CL_ID_SOURCE" = leased ] && is_zk; then
    WORKER=([merge]=100)
    say "starting ZooKeeper (one server on a loopback port) and three nodes that lease their worker ids from it"
    cl_zk_start 1 || { echo "demo-cluster: ZooKeeper did not start" >&2; exit 1; }
    echo "   ZooKeeper $(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null) at $ZK_HOSTS (tickTime $ZK_TICK_MS ms)"
    echo "   each node's postgresql.conf:"
    cl_id_conf "" | sed 's/^/     /'
    echo "     (no snowflake.worker_id: any free id is leased; lease_ttl is the session timeout asked of ZooKeeper)"
    echo "   and a merge node with a static worker id (100), which subscribes to them"
elif [ "$CL_ID_SOURCE" = leased ]; then
    WORKER=([merge]=100)
    say "starting etcd (one member on a loopback port) and three nodes that lease their worker ids from it"
    cl_etcd_start 1 || { echo "demo-cluster: etcd did not start" >&2; exit 1; }
    echo "   etcd $("$ETCD_BIN" --version | head -1 | awk '{print $3}') at $ETCD_ENDPOINTS"
    echo "   each node's postgresql.conf:"
    cl_id_conf "" | sed 's/^/     /'
    echo "     (no snowflake.worker_id: any free id is leased)"
    echo "   and a merge node with a static worker id (100), which subscribes to them"
else
    WORKER=([n1]=1 [n2]=2 [n3]=3 [n3b]=3 [merge]=100)
    say "starting three nodes (worker ids 1, 2, 3) and a merge node (worker id 100), each a throwaway PostgreSQL"
fi
echo "   (a fourth node's data directory is initialised now too, to stand in for node 3 later)"
cl_make_template
pids=()
for n in n1 n2 n3 n3b merge; do
    DIR[$n]=$(pg_tmpdir)
    PG_INSTANCES+=("${DIR[$n]}")
    if [ "$n" = merge ]; then
        cl_merge_init "${DIR[$n]}" "${WORKER[$n]}" &
    else
        cl_node_init "${DIR[$n]}" "${WORKER[$n]:-}" &
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
for n in "${NODES[@]}" merge; do cl_schema "${DIR[$n]}"; done
if [ "$CL_ID_SOURCE" = leased ]; then
    for n in "${NODES[@]}"; do learn_lease "$n"; done
    for n in "${NODES[@]}"; do
        echo "   $n: ${DIR[$n]} leased worker id ${WORKER[$n]}"
    done
else
    for n in "${NODES[@]}"; do
        echo "   $n: ${DIR[$n]} (snowflake.worker_id = $(pg_val "${DIR[$n]}" "SHOW snowflake.worker_id"))"
    done
fi
echo "   merge: ${DIR[merge]} (snowflake.worker_id = ${WORKER[merge]})"

say "the same orders table on every node; each node publishes it, the merge node subscribes to each"
echo
echo "CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), node text NOT NULL,"
echo "                     created_at timestamptz NOT NULL DEFAULT clock_timestamp(), client integer, amount numeric(10, 2));"
for n in "${NODES[@]}"; do
    cl_publish "${DIR[$n]}"
    cl_subscribe "${DIR[merge]}" "$n" "${DIR[$n]}"
done
echo "n1, n2, n3=# CREATE PUBLICATION orders_pub FOR TABLE orders;"
echo "merge=# CREATE SUBSCRIPTION sub_n1 CONNECTION 'host=${DIR[n1]} ...' PUBLICATION orders_pub;   -- and sub_n2, sub_n3"

say "inserting on all three nodes at once for 3 seconds (pgbench, 2 clients each, one order per transaction)"
for n in "${NODES[@]}"; do
    cl_load "${DIR[$n]}" "$n" 3 2 60 1 >"${DIR[$n]}/pgbench.log" 2>&1 &
    CL_LOAD_PIDS+=($!)
done
for p in "${CL_LOAD_PIDS[@]}"; do wait "$p"; done
CL_LOAD_PIDS=()
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
if [ "$CL_ID_SOURCE" = leased ] && is_zk; then
    echo
    echo "   ZooKeeper's view: one ephemeral znode per worker id, owned by the session of the node"
    echo "   holding it (session: the lease_session in each node's snowflake_stats), its data naming"
    echo "   the node (host, port, system identifier, start time; here the nodes are copies of one"
    echo "   initdb on one host: their start times tell them apart). The nodes confirm their sessions"
    echo "   every third of the timeout; a clean shutdown deletes the znode and closes the session,"
    echo "   which frees the id at once."
    zk_view
elif [ "$CL_ID_SOURCE" = leased ]; then
    echo
    echo "   etcd's lease table: one key per worker id, on the lease of the node holding it, its value"
    echo "   naming the node (host, port, system identifier, start time; here the nodes are copies of"
    echo "   one initdb on one host: their start times tell them apart). lease_id is the one in each"
    echo "   node's snowflake_stats (etcdctl prints it in hex). The nodes renew their leases every"
    echo "   third of the TTL; a clean shutdown revokes its lease and frees the id at once."
    lease_table
else
    run_each "SELECT current_setting('snowflake.worker_id')::integer AS worker_id, current_setting('unix_socket_directories') AS socket_dir"
fi

say "each node's statistics"
if [ "$CL_ID_SOURCE" = leased ] && is_zk; then
    run_each "SELECT worker_id, ids_issued, last_timestamp, high_water_mark, lease_state, coordinator, lease_session, lease_granted_ttl_ms, lease_deadline, lease_renewals, lease_failures FROM snowflake_stats"
    echo
    echo "   lease_granted_ttl_ms: the session timeout ZooKeeper granted. lease_deadline: the node stops"
    echo "   issuing ids then unless a renewal succeeds first, before ZooKeeper could expire the session"
    echo "   and delete its znode."
elif [ "$CL_ID_SOURCE" = leased ]; then
    run_each "SELECT worker_id, ids_issued, last_timestamp, high_water_mark, lease_state, lease_id, lease_deadline, lease_renewals, lease_failures FROM snowflake_stats"
    echo
    echo "   lease_deadline: the node stops issuing ids then unless a renewal succeeds first, before"
    echo "   etcd could expire the lease and give the id to another node."
else
    run_each "SELECT worker_id, ids_issued, last_timestamp, overflow_waits, clock_backwards_events, high_water_mark FROM snowflake_stats"
fi

DEAD=${WORKER[n3]}
say "node 3 dies: kill -9 of its postmaster"
kill -9 "$(pg_postmaster_pid "${DIR[n3]}")"
T_KILL=$(real_now)
if [ "$CL_ID_SOURCE" = leased ] && is_zk; then
    echo
    echo "   Right after the kill, its worker id $DEAD is still held: nobody closed the session, ZooKeeper"
    echo "   expires it when the session timeout passes without a word from the node, and deletes its"
    echo "   ephemeral znode then."
    zk_view
elif [ "$CL_ID_SOURCE" = leased ]; then
    echo
    echo "   Right after the kill, its worker id $DEAD is still held: nobody revoked the lease, it expires"
    echo "   when its TTL runs out without a renewal."
    lease_table
fi
pg_reap "${DIR[n3]}"
dead_max=$(pg_val "$M" "SELECT max(id) FROM orders WHERE node = 'n3'")
run "$M" merge "SELECT subname, pid IS NOT NULL AS receiving, latest_end_time FROM pg_stat_subscription ORDER BY subname"
echo
echo "   Its subscription has no apply worker any more: nothing arrives from node 3."

if [ "$CL_ID_SOURCE" = leased ]; then
    if is_zk; then
        granted=$(pg_val "${DIR[n1]}" "SELECT lease_granted_ttl_ms FROM snowflake_stats")
        # ZooKeeper expires sessions on its ticks: up to a tick after the timeout.
        if ! wait_for "expired" $((CL_LEASE_TTL + 30)) cl_zk_worker_gone "$DEAD"; then
            echo "demo-cluster: $CL_LEASE_PREFIX/workers/$DEAD still exists $(elapsed_since "$T_KILL") s after the kill" >&2
            exit 1
        fi
        echo
        echo "   $(elapsed_since "$T_KILL") s after the kill (session timeout $granted ms, checked on ZooKeeper's"
        echo "   ${ZK_TICK_MS} ms ticks), the session has expired and ZooKeeper has deleted the ephemeral znode:"
        zk_view
        mark=$(cl_zk_mark "$DEAD")
        mark_col=its_mark_in_zookeeper
        coord_name=ZooKeeper
    else
        key_gone() { [ -z "$(cl_key_lease "$DEAD")" ]; }
        wait_for "expired" $((CL_LEASE_TTL + 30)) key_gone
        echo
        echo "   $(elapsed_since "$T_KILL") s after the kill, the lease has expired and etcd has deleted the key:"
        lease_table
        mark=$(cl_etcd_mark "$DEAD")
        mark_col=its_mark_in_etcd
        coord_name=etcd
    fi
    echo
    echo "   What stays is the id's mark, $CL_LEASE_PREFIX/marks/$DEAD = \"$mark\": a reservation (milliseconds"
    echo "   since the epoch) that node 3 kept ahead of its clock, above every id it issued:"
    run "$M" merge "SELECT snowflake_timestamp(max(id)) AS last_id_of_node_3, snowflake_timestamp(${mark%% *}::bigint << 22) AS $mark_col
FROM orders WHERE node = 'n3'"

    say "a fresh node (new data directory, no snowflake.worker_id) leases the lowest free id: $DEAD"
    cl_start "${DIR[n3b]}"
    cl_schema "${DIR[n3b]}"
    learn_lease n3b
    NODES=(n1 n2 n3b)
    echo "   n3b: ${DIR[n3b]} leased worker id ${WORKER[n3b]}, and started above the id's mark in $coord_name"
    echo "   (its ids may wait until its clock passes the mark: no snowflake_advance_floor by hand)"
else
    echo "   With static ids, worker id 3 is free once node 3 is known to be dead for good (it must"
    echo "   never come back with it). A fresh node takes it over; first its high-water mark is"
    echo "   raised above every id of worker 3 that the merge node holds:"

    say "a fresh node (new data directory, snowflake.worker_id = 3) takes over"
    cl_start "${DIR[n3b]}"
    cl_schema "${DIR[n3b]}"
    echo
    echo "merge=# SELECT max(id) FROM orders WHERE snowflake_worker_id(id) = 3;   -- $dead_max"
    run "${DIR[n3b]}" n3b "SELECT snowflake_advance_floor($dead_max)"
fi
cl_publish "${DIR[n3b]}"
cl_subscribe "$M" n3b "${DIR[n3b]}"
echo "n3b=# CREATE PUBLICATION orders_pub FOR TABLE orders;"
echo "merge=# CREATE SUBSCRIPTION sub_n3b CONNECTION 'host=${DIR[n3b]} ...' PUBLICATION orders_pub;"
run "${DIR[n3b]}" n3b "INSERT INTO orders (node, client) SELECT 'n3b', 0 FROM generate_series(1, 5)"
wait_for "merged" 30 cl_caught_up "$M" n3b "${DIR[n3b]}"
echo
echo "   Worker $DEAD's ids on the merge node: the new node's continue above the dead node's."
run "$M" merge "SELECT o.node, o.id, d.ts, d.worker_id, d.sequence FROM orders o, snowflake_decode(o.id) d
WHERE o.id IN ((SELECT max(id) FROM orders WHERE node = 'n3'), (SELECT min(id) FROM orders WHERE node = 'n3b'))
   OR o.node = 'n3b' ORDER BY o.id"
run "$M" merge "SELECT count(*) AS merged_orders, count(DISTINCT id) AS distinct_ids,
       (SELECT max(id) FROM orders WHERE node = 'n3') < (SELECT min(id) FROM orders WHERE node = 'n3b') AS new_ids_above_dead_ones,
       (SELECT sum(apply_error_count) FROM pg_stat_subscription_stats WHERE subname <> 'sub_n3') AS apply_errors_of_live_nodes
FROM orders"
if [ "$CL_ID_SOURCE" = leased ] && is_zk; then
    echo
    echo "   ZooKeeper's view now: n3b's session holds worker id $DEAD."
    zk_view
elif [ "$CL_ID_SOURCE" = leased ]; then
    echo
    echo "   The lease table now: n3b holds worker id $DEAD."
    lease_table
fi

if [ "$CL_ID_SOURCE" = leased ]; then say "stopping every instance and $coord_name"; else say "stopping every instance"; fi
cl_stop_all
pg_cleanup_all
if [ "$CL_ID_SOURCE" = leased ]; then
    cl_etcd_stop || true
    cl_zk_stop || true
fi
echo "   done in $(elapsed_since "$START") s"
