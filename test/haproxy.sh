#!/bin/bash
# HAProxy in front of three nodes' HTTP endpoints, with the configuration
# the repository ships (docs/haproxy/haproxy.cfg, as it is: its addresses
# come from the environment). Real servers on loopback ports: three
# PostgreSQL nodes (static worker ids 1, 2, 3, snowflake.http_listen and a
# token), Debian's haproxy, and batch clients (test/haproxy/lb.py) that
# refill through it while one node is killed and another stopped.
#
# Prints one line per check, "ok - ..." or "not ok - ...", and ends with
# "N passed, N failed"; exits non-zero on any failure.
#
#   1  every node up in HAProxy's stats socket; a batch through the load
#      balancer; no token: the node's 401 comes through (not retried);
#      /readyz through it
#   2  two batch clients through HAProxy and one SQL client on node 3;
#      kill -9 node 1, then SIGSTOP node 2 (it still accepts connections):
#      HAProxy marks each down (its stats socket), the clients see no
#      error while one node is ready; node 2 continued, node 1 restarted:
#      both up again and handing out ids; no id twice across every client
#      and SQL, every id of one of the three worker ids
#
# Usage: test/haproxy.sh [case number ...]. Needs root, haproxy, curl, jq.
# KEEP_TMP=1 keeps the directories (logs, the clients' ids and errors).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh
. test/lib/time.sh
. test/http/lib.sh

suite_begin haproxy
SHIM_DIR=$SUITE_DIR
LB_PY=$PWD/test/haproxy/lb.py
CFG=$PWD/docs/haproxy/haproxy.cfg
TOKEN=haproxy-suite-token-0123456789abcdef
HAPROXY_PID=
BG_PIDS=()
STOPPED=()
suite_cleanup() {
    local p
    for p in "${STOPPED[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
    for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$HAPROXY_PID" ] && kill "$HAPROXY_PID" 2>/dev/null
    for p in "${BG_PIDS[@]}" $HAPROXY_PID; do wait "$p" 2>/dev/null || true; done
}

require_tools haproxy curl jq

NODES=()
for n in 1 2 3; do
    dir=$(pg_tmpdir)
    NODES+=("$dir")
    http_init "$dir" "snowflake.worker_id = $n" "snowflake.http_token = '$TOKEN'" \
        || tap_abort "node $n initialised"
    http_start "$dir" SNOWFLAKE_SUITE=haproxy || tap_abort "node $n listens (see $dir/server.log)"
    pg_psql "$dir" -qc "CREATE EXTENSION snowflake" || tap_abort "node $n: CREATE EXTENSION"
done

# haproxy_start: HAProxy with the shipped configuration on a free port (three
# attempts with other ports), in the foreground of a background job.
LB_SOCK=$SUITE_DIR/haproxy.sock
haproxy_start() {
    local attempt i
    for attempt in 1 2 3; do
        LB_PORT=$(free_tcp_port)
        SNOWFLAKE_LB_BIND=127.0.0.1:$LB_PORT SNOWFLAKE_LB_STATS=$LB_SOCK \
            SNOWFLAKE_NODE1=127.0.0.1:$(cat "${NODES[0]}/http_port") \
            SNOWFLAKE_NODE2=127.0.0.1:$(cat "${NODES[1]}/http_port") \
            SNOWFLAKE_NODE3=127.0.0.1:$(cat "${NODES[2]}/http_port") \
            haproxy -db -f "$CFG" >"$SUITE_DIR/haproxy.log" 2>&1 &
        HAPROXY_PID=$!
        for i in $(seq 100); do
            if [ -S "$LB_SOCK" ] && curl -s -o /dev/null -m 1 "http://127.0.0.1:$LB_PORT/livez"; then return 0; fi
            kill -0 "$HAPROXY_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill "$HAPROXY_PID" 2>/dev/null; wait "$HAPROXY_PID" 2>/dev/null
        HAPROXY_PID=
    done
    return 1
}
haproxy_start || tap_abort "haproxy started with docs/haproxy/haproxy.cfg (see $SUITE_DIR/haproxy.log)"
LB=http://127.0.0.1:$LB_PORT

# lb_status SERVER: its status in HAProxy's stats socket.
lb_status() { "$LB_PY" status "$LB_SOCK" "$1" 2>/dev/null; }
lb_is() { [ "$(lb_status "$1")" = "$2" ]; }
all_up() { [ "$("$LB_PY" status "$LB_SOCK" node1 node2 node3 2>/dev/null | sort -u)" = UP ]; }

case_1() {
    check "every node is up in HAProxy" wait_for "all up" 10 all_up
    local CODE BODY n
    BODY=$(curl -s -m 10 -w '\n%{http_code}' -H "Authorization: Bearer $TOKEN" "$LB/v1/ids/batch?count=100")
    CODE=${BODY##*$'\n'}; BODY=${BODY%$'\n'*}
    is "a batch through the load balancer: 200" "$CODE" 200
    n=$(jq -r '.ids | length' <<<"$BODY" 2>/dev/null)
    is "... with 100 ids" "$n" 100
    CODE=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "$LB/v1/ids/batch?count=1")
    is "no token: the node's 401 comes through" "$CODE" 401
    CODE=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "$LB/readyz")
    is "/readyz through the load balancer: 200" "$CODE" 200
}

case_2() {
    local out=$SUITE_DIR/c2 i p before pids=()
    mkdir -p "$out"
    : >"$out/sql_errors"
    check "every node is up before the faults" wait_for "all up" 10 all_up
    for i in 1 2; do
        "$LB_PY" client "$LB/v1/ids/batch?count=100" "$TOKEN" "$out/ids$i" "$out/errors$i" "$out/stop" 180 &
        BG_PIDS+=($!)
        pids+=($!)
    done
    (
        deadline=$((SECONDS + 180))
        while [ ! -e "$out/stop" ] && [ $SECONDS -lt $deadline ]; do
            pg_psql "${NODES[2]}" -qAtc "SELECT snowflake_nextval() FROM generate_series(1, 100)" \
                >>"$out/sql_ids" 2>>"$out/sql_errors" || echo "psql failed" >>"$out/sql_errors"
            sleep 0.05
        done
    ) &
    BG_PIDS+=($!)
    pids+=($!)
    # got W: ids of worker W the batch clients received; ids_from W N: at least N.
    got() { "$LB_PY" count "$out/ids1" "$out/ids2" "$1"; }
    ids_from() { [ "$(got "$1")" -ge "$2" ]; }
    check "the clients get ids from every node" \
        wait_for "ids of all three" 30 eval 'ids_from 1 1000 && ids_from 2 1000 && ids_from 3 1000'

    pg_kill9 "${NODES[0]}"
    check "node 1 killed: HAProxy marks it down" wait_for "node1 down" 15 lb_is node1 DOWN
    p=$(pg_postmaster_pid "${NODES[1]}")
    STOPPED=("$p" $(pgrep -P "$p"))
    kill -STOP "${STOPPED[@]}"
    check "node 2 stopped (SIGSTOP): HAProxy marks it down" wait_for "node2 down" 15 lb_is node2 DOWN
    before=$(got 3)
    check "node 3 alone hands out 2,000 more ids" wait_for "ids of node 3" 60 ids_from 3 $((before + 2000))

    kill -CONT "${STOPPED[@]}"
    STOPPED=()
    # On its own port again (HAProxy knows that one): http.conf is kept.
    check "node 1 restarted on its port" eval 'pg_start "${NODES[0]}" SNOWFLAKE_SUITE=haproxy &&
        wait_for listening 10 http_listening "${NODES[0]}"'
    check "node 1 restarted and node 2 continued: both up again" wait_for "all up" 30 all_up
    local n1 n2
    n1=$(got 1)
    n2=$(got 2)
    check "... and both hand out ids again" \
        wait_for "ids of 1 and 2" 60 eval "ids_from 1 $((n1 + 1000)) && ids_from 2 $((n2 + 1000))"
    touch "$out/stop"
    for p in "${pids[@]}"; do wait "$p"; done

    local errors total dups others retries redispatches
    errors=$(cat "$out"/errors[12] 2>/dev/null | wc -l)
    is "no batch client saw an error while a node was ready" "$errors" 0
    [ "$errors" = 0 ] || sed -n '1,5s/^/#   /p' "$out"/errors[12]
    is "no SQL call failed on node 3" "$(wc -l <"$out/sql_errors")" 0
    read -r total dups others < <("$LB_PY" check "$out/ids1" "$out/ids2" "$out/sql_ids")
    cmp_num "the clients and SQL got ids" "${total:-0}" -gt 10000
    is "no id twice among $total ids of the clients and SQL" "$dups" 0
    is "every id carries worker id 1, 2 or 3" "$others" 0
    read -r retries redispatches < <("$LB_PY" counters "$LB_SOCK")
    echo "# HAProxy: $retries retries, $redispatches redispatches; $total ids"
}

run_cases haproxy "$@"
