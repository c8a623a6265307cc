#!/bin/bash
# The mixed fleet (issue 30): PostgreSQL nodes and applications' embedded
# generators (sdk/node, sdk/python) leasing worker ids from one registry, a
# real etcd and then a real ZooKeeper (COORDINATOR=etcd or zookeeper: one of
# them). Six members ask for the same four worker ids (20-23: the nodes'
# snowflake.lease_worker_ids, the SDK's workerIds): two PostgreSQL nodes
# with a SQL client each, two Node.js and two Python processes. Then:
#
#   1  four members hold the four ids; the other two wait (they hold none
#      and issue nothing)
#   2  kill -9 of a Node.js member: a waiting member takes its id once its
#      lease expired
#   3  a Python member forks: the child's first call is refused (SF003),
#      never an id under its parent's worker id
#   4  clean close of that Python member (SIGTERM: close()): the last
#      waiting member takes its id
#   5  a clock step back of 3 s in a Node.js member (libfaketime): refused
#      (SF001) until its clock passes its last id, then ids again
#   6  the checker reads every id of every member (test/sdk_fleet/check.py):
#      none twice, every one of 20-23, and per worker id the tenures in order
#      (an id issued after another is above it)
#
# and once, on etcd (COORDINATOR=etcd or both), a js-safe fleet:
#
#   7  a node with snowflake.layout = 'js-safe' and a Node.js and a Python
#      member of that layout hold worker ids 20-22; a twitter member under the
#      same prefix does not lease (55000, naming both layouts); every id lies
#      below 2^53, none twice, of 20-22 in bits 6-11, tenures in order
#
# Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

. test/lib/suite.sh
. test/lib/zookeeper.sh

suite_begin sdk-fleet
WORK=$SUITE_DIR
MEMBER_PIDS=()
SQL_PIDS=()
suite_cleanup() {
    local p
    for p in "${MEMBER_PIDS[@]}" "${SQL_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    for p in "${MEMBER_PIDS[@]}" "${SQL_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    zk_stop
}
require_tools node
[ -r "$FT_LIB" ] || tap_abort "libfaketime is installed ($FT_LIB)"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk >"$WORK/make-sdk.log" 2>&1 ||
    { cat "$WORK/make-sdk.log"; tap_abort "make sdk builds the bindings"; }

TTL=5
RANGE=20-23
export SF_PREFIX=/fleet SF_WORKER_IDS=$RANGE SF_TTL=$TTL SF_NODE_SDK=$ROOT/sdk/node

# sql_client NODE FILE STOP: a SQL client of NODE writing batches of 50 ids
# to FILE as the members do ("t0 t1 id id ..."; FILE.err for a failed call)
# until the file STOP exists; its pid in SQL_PIDS.
sql_client() {
    local n=$1 file=$2 stop=$3
    (
        while [ ! -e "$stop" ]; do
            read -r t0 _ </proc/uptime
            if ids=$(pg_psql "$n" -qAtc "SELECT string_agg(snowflake_nextval()::text, ' ') FROM generate_series(1, 50)" 2>/dev/null); then
                read -r t1 _ </proc/uptime
                echo "$t0 $t1 $ids" >>"$file"
            else
                echo "$t0 error" >>"$file.err"
                sleep 0.05
            fi
            sleep 0.02
        done
    ) &
    SQL_PIDS+=($!)
}
node_held() { [ "$(pg_val "$1" "SELECT lease_state FROM snowflake_stats" 2>/dev/null)" = held ]; }

fleet() {
    local coord=$1 out=$WORK/$1 coord_conf n1 n2 i
    mkdir -p "$out"
    chmod 777 "$out"
    echo "# fleet on $coord"
    if [ "$coord" = zookeeper ]; then
        zk_start 1 "$WORK/zk" || tap_abort "a ZooKeeper server starts on loopback"
        export SF_ZK=$ZK_HOSTS SF_ETCD=
        coord_conf="snowflake.zookeeper_hosts = '$ZK_HOSTS'"
    else
        etcd_start 1 "$WORK/etcd" || tap_abort "an etcd member starts on loopback"
        export SF_ETCD=$ETCD_ENDPOINTS SF_ZK=
        coord_conf="snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'"
    fi

    # Two PostgreSQL nodes, each with a SQL client writing batches as the
    # members do.
    NODES=()
    for i in 1 2; do
        n=$(pg_tmpdir)
        NODES+=("$n")
        pg_init "$n" "shared_preload_libraries = 'snowflake'" "$coord_conf" "snowflake.lease_ttl = $TTL" \
            "snowflake.lease_prefix = '$SF_PREFIX'" "snowflake.lease_worker_ids = '$RANGE'" "autovacuum = off"
        pg_start "$n" || tap_abort "node $i starts"
        pg_psql "$n" -qc "CREATE EXTENSION snowflake" || tap_abort "node $i: CREATE EXTENSION"
        sql_client "$n" "$out/pg$i" "$out/stop"
    done
    check "$coord: both nodes hold a worker id" wait_for "nodes held" 20 eval 'node_held "${NODES[0]}" && node_held "${NODES[1]}"'

    # The members: node-a and py-a first (they hold the last two ids), then
    # node-b (under libfaketime) and py-b, which wait.
    echo +0 >"$out/ft"
    node "$ROOT/test/sdk_fleet/member.js" "$out/node-a" 2>"$out/node-a.log" &
    PID_NODE_A=$!
    PYTHONPATH=$ROOT/sdk/python /usr/bin/python3 "$ROOT/test/sdk_fleet/member.py" "$out/py-a" --fork-after 20 \
        2>"$out/py-a.log" &
    PID_PY_A=$!
    MEMBER_PIDS+=("$PID_NODE_A" "$PID_PY_A")
    check "$coord: the first two members hold an id" wait_for "a held" 30 eval '[ -s "$out/node-a.held" ] && [ -s "$out/py-a.held" ]'
    LD_PRELOAD=$FT_LIB FAKETIME_TIMESTAMP_FILE=$out/ft FAKETIME_NO_CACHE=1 FAKETIME_DONT_RESET=1 \
        FAKETIME_DONT_FAKE_MONOTONIC=1 node "$ROOT/test/sdk_fleet/member.js" "$out/node-b" 2>"$out/node-b.log" &
    PID_NODE_B=$!
    PYTHONPATH=$ROOT/sdk/python /usr/bin/python3 "$ROOT/test/sdk_fleet/member.py" "$out/py-b" 2>"$out/py-b.log" &
    PID_PY_B=$!
    MEMBER_PIDS+=("$PID_NODE_B" "$PID_PY_B")

    # 1: the range is full: the late members wait, holding nothing.
    sleep 2
    is "$coord 1: with 20-23 held, the two late members hold none" \
        "$( [ -e "$out/node-b.held" ] || [ -e "$out/py-b.held" ] && echo some || echo none)" none
    local held
    held=$( (cat "$out/node-a.held" "$out/py-a.held"; for n in "${NODES[@]}"; do pg_val "$n" "SELECT worker_id FROM snowflake_stats"; done) | sort -n | tr '\n' ' ')
    is "$coord 1: the four holders hold 20, 21, 22 and 23" "$held" "20 21 22 23 "

    # 2: kill -9 of node-a: its id is taken over once its lease expired.
    kill -9 "$PID_NODE_A"
    wait "$PID_NODE_A" 2>/dev/null
    check "$coord 2: node-a killed: a waiting member takes its id" \
        wait_for "takeover" $((TTL * 4)) eval '[ -s "$out/node-b.held" ] || [ -s "$out/py-b.held" ]'
    like "$coord 2: ... the id node-a held" "$(cat "$out"/node-b.held "$out"/py-b.held 2>/dev/null)" "^$(cat "$out/node-a.held")\$"

    # 3: py-a forked after 20 batches (member.py): the child's first call.
    check "$coord 3: py-a forked" wait_for "fork" 30 test -s "$out/py-a.child.first"
    is "$coord 3: the fork child's first call is refused, SF003 (not an id of its parent's lease)" \
        "$(cat "$out/py-a.child.first" 2>/dev/null)" SF003

    # 4: clean close of py-a: the other waiting member takes its id.
    kill -TERM "$PID_PY_A"
    wait "$PID_PY_A"
    is "$coord 4: py-a closed cleanly (exit 0)" "$?" 0
    check "$coord 4: the last waiting member takes py-a's id" \
        wait_for "takeover" $((TTL * 4)) eval '[ -s "$out/node-b.held" ] && [ -s "$out/py-b.held" ]'

    # 5: node-b's clock 3 s back: SF001 until it passes node-b's last id.
    local before after
    before=$(wc -l <"$out/node-b" 2>/dev/null || echo 0)
    echo -3 >"$out/ft.new" && mv "$out/ft.new" "$out/ft"
    check "$coord 5: node-b's clock stepped back 3 s: its calls are refused with SF001" \
        wait_for "SF001" 10 grep -q ' SF001$' "$out/node-b.err"
    after=$(wc -l <"$out/node-b")
    check "$coord 5: ... and it issues ids again once its clock passed its last id" \
        wait_for "ids again" 15 eval '[ "$(wc -l <"$out/node-b")" -gt $((after + 5)) ]'

    # Stop: the members close, the SQL clients end, the nodes stop.
    touch "$out/stop"
    for p in "$PID_NODE_B" "$PID_PY_B"; do kill -TERM "$p" 2>/dev/null; done
    for p in "$PID_NODE_B" "$PID_PY_B" "${SQL_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    MEMBER_PIDS=()
    SQL_PIDS=()
    for n in "${NODES[@]}"; do pg_stop "$n"; done

    # 6: every id of every member.
    local facts
    facts=$(/usr/bin/python3 "$ROOT/test/sdk_fleet/check.py" 20 23 pg1="$out/pg1" pg2="$out/pg2" \
        node-a="$out/node-a" node-b="$out/node-b" py-a="$out/py-a" py-a-child="$out/py-a.child" py-b="$out/py-b" 2>"$out/check.log")
    echo "# $coord: $facts"
    sed 's/^/# /' "$out/check.log"
    like "$coord 6: no id twice" "$facts" ' duplicates=0 '
    like "$coord 6: every id is of 20-23" "$facts" ' outside=0 '
    like "$coord 6: per worker id, an id issued after another is above it (tenures in order)" "$facts" ' disorder=0 '
    like "$coord 6: ids of all four worker ids" "$facts" ' workers=20,21,22,23 '
    # (py-a's fork child issues too when it finds a free id within its wait: either is right.)
    like "$coord 6: ids from the nodes and every member process" "$facts" 'members=node-a,node-b,pg1,pg2,py-a,(py-a-child,)?py-b$'
    if [ "$coord" = zookeeper ]; then zk_stop; else etcd_stop; fi
}

# 7: a js-safe fleet (snowflake.layout, sf_config.layout) on etcd: one node
# and a member of each binding share 20-22; a twitter member is refused.
fleet_js_safe() {
    local out=$WORK/js-safe n facts pid_node pid_py pid_twitter held rc
    mkdir -p "$out"
    chmod 777 "$out"
    echo "# a js-safe fleet on etcd"
    mkdir -p "$WORK/etcd-js-safe"
    etcd_start 1 "$WORK/etcd-js-safe" || tap_abort "an etcd member starts on loopback"
    export SF_ETCD=$ETCD_ENDPOINTS SF_ZK= SF_PREFIX=/fleet-js-safe SF_WORKER_IDS=20-22 SF_LAYOUT=js-safe
    n=$(pg_tmpdir)
    pg_init "$n" "shared_preload_libraries = 'snowflake'" "snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'" \
        "snowflake.lease_ttl = $TTL" "snowflake.lease_prefix = '$SF_PREFIX'" "snowflake.lease_worker_ids = '20-22'" \
        "snowflake.layout = 'js-safe'" "autovacuum = off"
    pg_start "$n" || tap_abort "the js-safe node starts"
    pg_psql "$n" -qc "CREATE EXTENSION snowflake" || tap_abort "the js-safe node: CREATE EXTENSION"
    check "js-safe 7: the node holds a worker id" wait_for "node held" 20 node_held "$n"
    sql_client "$n" "$out/pg1" "$out/stop"
    node "$ROOT/test/sdk_fleet/member.js" "$out/node-js" 2>"$out/node-js.log" &
    pid_node=$!
    PYTHONPATH=$ROOT/sdk/python /usr/bin/python3 "$ROOT/test/sdk_fleet/member.py" "$out/py-js" 2>"$out/py-js.log" &
    pid_py=$!
    MEMBER_PIDS+=("$pid_node" "$pid_py")
    check "js-safe 7: both js-safe members hold an id" \
        wait_for "members held" 30 eval '[ -s "$out/node-js.held" ] && [ -s "$out/py-js.held" ]'
    held=$( (cat "$out/node-js.held" "$out/py-js.held"; pg_val "$n" "SELECT worker_id FROM snowflake_stats") | sort -n | tr '\n' ' ')
    is "js-safe 7: the node and the two members hold 20, 21 and 22" "$held" "20 21 22 "
    # A twitter member under the fleet's prefix (one id of the range is free
    # for it if it leased: SF_WORKER_IDS widened to 20-23).
    SF_LAYOUT= SF_WORKER_IDS=20-23 PYTHONPATH=$ROOT/sdk/python /usr/bin/python3 "$ROOT/test/sdk_fleet/member.py" \
        "$out/py-twitter" 2>"$out/py-twitter.log" &
    pid_twitter=$!
    MEMBER_PIDS+=("$pid_twitter")
    check "js-safe 7: a twitter member under the prefix gives up" wait_for "twitter member refused" 30 \
        test -s "$out/py-twitter.open-error"
    wait "$pid_twitter"
    rc=$?
    [ -e "$out/py-twitter.held" ] && rc="$rc, held $(cat "$out/py-twitter.held")"
    is "js-safe 7: ... without a lease (exit 3, no worker id held)" "$rc" 3
    like "js-safe 7: ... with 55000, naming both layouts" "$(cat "$out/py-twitter.open-error" 2>/dev/null)" \
        "^55000 .*snowflake.layout is twitter, the fleet's .* is js-safe"
    lines() { cat "$out/node-js" "$out/py-js" "$out/pg1" 2>/dev/null | wc -l; }
    check "js-safe 7: ids from every member" wait_for "ids" 20 eval '[ "$(lines)" -ge 30 ] && [ -s "$out/node-js" ] && [ -s "$out/py-js" ] && [ -s "$out/pg1" ]'
    touch "$out/stop"
    for p in "$pid_node" "$pid_py"; do kill -TERM "$p" 2>/dev/null; done
    for p in "$pid_node" "$pid_py" "${SQL_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    MEMBER_PIDS=()
    SQL_PIDS=()
    pg_stop "$n"
    facts=$(/usr/bin/python3 "$ROOT/test/sdk_fleet/check.py" --widths=6/6 20 22 pg1="$out/pg1" \
        node-js="$out/node-js" py-js="$out/py-js" 2>"$out/check.log")
    echo "# js-safe: $facts"
    sed 's/^/# /' "$out/check.log"
    like "js-safe 7: no id twice" "$facts" ' duplicates=0 '
    like "js-safe 7: every id is of 20-22 in bits 6-11" "$facts" ' outside=0 '
    like "js-safe 7: per worker id, an id issued after another is above it" "$facts" ' disorder=0 '
    like "js-safe 7: every id lies below 2^53" "$facts" ' id_bits=(5[0-3]|[1-4][0-9]|[0-9]) '
    like "js-safe 7: ids from the node and both members" "$facts" 'members=node-js,pg1,py-js$'
    etcd_stop
    unset SF_LAYOUT
}

case ${COORDINATOR:-both} in
    etcd) fleet etcd; fleet_js_safe ;;
    zookeeper) fleet zookeeper ;;
    both) fleet etcd; fleet zookeeper; fleet_js_safe ;;
    *) echo "sdk_fleet: COORDINATOR is etcd, zookeeper or both" >&2; exit 2 ;;
esac
pg_cleanup_all
tap_summary
