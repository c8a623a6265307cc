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
#   3  the same faults with the SDK's ID buffers as the callers: two Node.js
#      (sdk/node/buffer.js) and two Python (snowflake_ids.buffer) IdBuffer
#      clients (test/haproxy/buffer_client.*) refill through HAProxy while
#      SQL runs on every node: no caller error while one node is ready,
#      each faulty node marked down and up in HAProxy, no id twice across
#      the buffers and SQL
#   4  the same without HAProxy: the four buffers are given the three
#      nodes' URLs and balance on their own (power of two choices); they
#      leave the killed and the stopped node out and take them back once
#      their /readyz says 200
#
# Usage: test/haproxy.sh [case number ...]. Needs root, haproxy, curl, jq,
# node.
# KEEP_TMP=1 keeps the directories (logs, the clients' ids and errors).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh
. test/lib/time.sh
. test/http/lib.sh
. test/lib/haproxy.sh

suite_begin haproxy
SHIM_DIR=$SUITE_DIR
LB_PY=$PWD/test/haproxy/lb.py
BUF_JS=$PWD/test/haproxy/buffer_client.js
BUF_PY=$PWD/test/haproxy/buffer_client.py
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

require_tools haproxy curl jq node

NODES=()
for n in 1 2 3; do
    dir=$(pg_tmpdir)
    NODES+=("$dir")
    http_init "$dir" "snowflake.worker_id = $n" "snowflake.http_token = '$TOKEN'" \
        || tap_abort "node $n initialised"
    http_start "$dir" SNOWFLAKE_SUITE=haproxy || tap_abort "node $n listens (see $dir/server.log)"
    pg_psql "$dir" -qc "CREATE EXTENSION snowflake" || tap_abort "node $n: CREATE EXTENSION"
done

# HAProxy with the shipped configuration (test/lib/haproxy.sh); sets LB_PORT,
# LB_SOCK ($SUITE_DIR/haproxy.sock) and HAPROXY_PID.
haproxy_start "$CFG" "$SUITE_DIR" "$(cat "${NODES[0]}/http_port")" "$(cat "${NODES[1]}/http_port")" \
    "$(cat "${NODES[2]}/http_port")" || tap_abort "haproxy started with docs/haproxy/haproxy.cfg (see $SUITE_DIR/haproxy.log)"
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

# buffer_faults OUT URLS TIMEOUT_MS WITH_LB: cases 3 and 4. Two Node.js and
# two Python ID buffer clients refilling from URLS, SQL on every node (only
# node 3's must never fail: 1 and 2 are killed and stopped); kill -9 node 1,
# SIGSTOP node 2, then node 2 continued and node 1 restarted. WITH_LB=1:
# HAProxy's stats socket must show each faulty node down, then up.
buffer_faults() {
    local out=$1 urls=$2 timeout_ms=$3 with_lb=$4 i p n before pids=() clients=(js1 js2 py1 py2)
    mkdir -p "$out"
    check "every node is up before the faults" wait_for "all up" 10 all_up
    for i in "${clients[@]}"; do
        case $i in
            js*) node "$BUF_JS" "$urls" "$TOKEN" "$out/ids_$i" "$out/errors_$i" "$out/stop" 120 "$timeout_ms" &;;
            py*) /usr/bin/python3 "$BUF_PY" "$urls" "$TOKEN" "$out/ids_$i" "$out/errors_$i" "$out/stop" 120 \
                "$timeout_ms" &;;
        esac
        BG_PIDS+=($!)
        pids+=($!)
    done
    for n in 1 2 3; do
        (
            deadline=$((SECONDS + 120))
            while [ ! -e "$out/stop" ] && [ $SECONDS -lt $deadline ]; do
                pg_psql "${NODES[n - 1]}" -qAtc "SELECT snowflake_nextval() FROM generate_series(1, 100)" \
                    >>"$out/sql_ids$n" 2>>"$out/sql_errors$n" || echo "psql failed" >>"$out/sql_errors$n"
                sleep 0.1
            done
        ) &
        BG_PIDS+=($!)
        pids+=($!)
    done
    : >"$out/sql_errors3"
    local files=("${clients[@]/#/$out/ids_}")
    got() { "$LB_PY" count "${files[@]}" "$1"; }
    ids_from() { [ "$(got "$1")" -ge "$2" ]; }
    # every client has ids of worker W
    each_from() { local c; for c in "${files[@]}"; do [ "$("$LB_PY" count "$c" "$1")" -ge 1 ] || return 1; done; }
    # some client's buffer left URL N (1-based) out, after a failure
    left_out() { awk -v n="$1" 'FNR == n && $3 > 0 { f = 1 } END { exit !f }' "${files[@]/%/.nodes}" 2>/dev/null; }
    # every client's buffer has every URL in use again
    all_in_use() { local c; for c in "${files[@]}"; do ! grep -q ' out ' "$c.nodes" || return 1; done; }
    check "the four buffers get ids, from every node" \
        wait_for "ids of all three" 30 eval 'each_from 1 && each_from 2 && each_from 3 &&
            ids_from 1 1000 && ids_from 2 1000 && ids_from 3 1000'

    pg_kill9 "${NODES[0]}"
    if [ "$with_lb" = 1 ]; then
        check "node 1 killed: HAProxy marks it down" wait_for "node1 down" 15 lb_is node1 DOWN
    else
        check "node 1 killed: a buffer leaves it out" wait_for "node 1 left out" 15 left_out 1
    fi
    p=$(pg_postmaster_pid "${NODES[1]}")
    STOPPED=("$p" $(pgrep -P "$p"))
    kill -STOP "${STOPPED[@]}"
    if [ "$with_lb" = 1 ]; then
        check "node 2 stopped (SIGSTOP): HAProxy marks it down" wait_for "node2 down" 15 lb_is node2 DOWN
    else
        check "node 2 stopped (SIGSTOP): a buffer leaves it out" wait_for "node 2 left out" 15 left_out 2
    fi
    before=$(got 3)
    check "node 3 alone hands out 4,000 more ids to the buffers" wait_for "ids of node 3" 60 ids_from 3 $((before + 4000))

    kill -CONT "${STOPPED[@]}"
    STOPPED=()
    check "node 1 restarted on its port" eval 'pg_start "${NODES[0]}" SNOWFLAKE_SUITE=haproxy &&
        wait_for listening 10 http_listening "${NODES[0]}"'
    if [ "$with_lb" = 1 ]; then
        check "node 1 restarted and node 2 continued: both up again in HAProxy" wait_for "all up" 30 all_up
    else
        check "node 1 restarted and node 2 continued: every buffer uses all three again" \
            wait_for "all in use" 30 all_in_use
    fi
    local n1 n2
    n1=$(got 1)
    n2=$(got 2)
    check "... and both hand out ids to the buffers again" \
        wait_for "ids of 1 and 2" 60 eval "ids_from 1 $((n1 + 1000)) && ids_from 2 $((n2 + 1000))"
    touch "$out/stop"
    local rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    is "every client ended cleanly" "$rc" 0

    local errors total dups others
    errors=$(cat "${clients[@]/#/$out/errors_}" 2>/dev/null | wc -l)
    is "no buffer client saw an error while a node was ready" "$errors" 0
    [ "$errors" = 0 ] || sed -n '1,5s/^/#   /p' "${clients[@]/#/$out/errors_}"
    is "no SQL call failed on node 3" "$(wc -l <"$out/sql_errors3")" 0
    read -r total dups others < <("$LB_PY" check "${files[@]}" "$out"/sql_ids[123])
    cmp_num "the buffers and SQL got ids" "${total:-0}" -gt 20000
    is "no id twice among $total ids of the four buffers and SQL on the three nodes" "$dups" 0
    is "every id carries worker id 1, 2 or 3" "$others" 0
    echo "# $total ids; SQL on nodes 1, 2, 3: $(cat "$out/sql_ids1" 2>/dev/null | wc -l), \
$(cat "$out/sql_ids2" 2>/dev/null | wc -l), $(wc -l <"$out/sql_ids3")"
}

case_3() {
    buffer_faults "$SUITE_DIR/c3" "$LB" 5000 1
    local retries redispatches
    read -r retries redispatches < <("$LB_PY" counters "$LB_SOCK")
    echo "# HAProxy: $retries retries, $redispatches redispatches"
}

case_4() {
    local urls
    urls=$(for d in "${NODES[@]}"; do printf 'http://127.0.0.1:%s,' "$(cat "$d/http_port")"; done)
    buffer_faults "$SUITE_DIR/c4" "${urls%,}" 1000 0
}

run_cases haproxy "$@"
