#!/bin/bash
# The nemesis suite (docs/nemesis.md): a 3-member etcd cluster and several
# PostgreSQL nodes leasing worker ids from it, each member and each node in a
# network namespace of its own, clients taking ids on every node (one at a
# time, and in batches of one millisecond's ids from SQL and from the HTTP
# endpoint, 4,096 in the twitter layout, so that milliseconds fill up), and
# faults on a random schedule drawn from a seed
# (test/nemesis/schedule.py): partitions (nftables), the etcd leader killed,
# backends, the lease worker and whole nodes stopped, clock steps
# (libfaketime), kill -9 of nodes; one node runs with
# snowflake.clock_backwards = failover and gets clock steps back beyond the
# tolerance of its own (issue 21's backup worker ids). A recorder
# (test/nemesis/tenures.py) reads the coordinator's revision throughout and
# its history of the worker keys at the end. The checker
# (test/nemesis/check.py; first tested on planted violations,
# check_test.py) then reads every acknowledged id: no duplicate, ids of a
# worker id ordered by tenure, none issued while another node held its
# worker id (from the ids, and from the coordinator's tenures on the boot
# clock), none ahead of its node's clock; and reports each node's
# availability next to the faults. SDK members (NEMESIS_SDK: application
# processes with the embedded generator, sdk/node and sdk/python, each in a
# namespace of its own, test/nemesis/sdk_member.{js,py}) lease from the same
# prefix, from a worker id range the nodes lease from too, take batches of
# ids throughout, and get faults of their own (partitions, SIGSTOP, kill -9,
# clock steps, clean restarts); the checker reads their ids as a node's, each
# process a holder of its own ("sdk<j>.<life>"). COORDINATOR=zookeeper runs the same
# schedule and checker against a 3-server ZooKeeper ensemble instead of etcd
# (a server per namespace, where the etcd members go; the faults on etcd
# become zk_minority and zk_leader_kill). NEMESIS_LAYOUT=js-safe runs the
# nodes in that snowflake.layout (every id below 2^53), and the SDK members
# with the same layout option; the checker reads the ids in it.
#
#   test/nemesis/run.sh                      DURATION=120 s, a random seed
#   DURATION=600 SEED=1234 test/nemesis/run.sh   (make nemesis DURATION=600 SEED=1234)
#   COORDINATOR=zookeeper test/nemesis/run.sh    (make nemesis COORDINATOR=zookeeper)
#   NEMESIS_LAYOUT=js-safe DURATION=300 test/nemesis/run.sh
#
# Settings (environment): COORDINATOR (etcd or zookeeper; etcd), DURATION
# (s, 120), SEED (random when unset; printed
# either way: the same seed gives the same schedule), NEMESIS_LAYOUT (every
# node's snowflake.layout: "twitter", the default, "js-safe", or
# "time T, worker W, sequence S" as the extension accepts it; the checker
# decodes ids with its widths (test/nemesis/layout.py, checked against the
# nodes' own decoders before the clients start) and asserts every id is
# below 2^(T + W + S); the SDK members get the same layout: their
# Generator's layout option), NEMESIS_NODES (the nodes'
# snowflake.worker_id, "any" for unset: "any any 0 0 1 1", each fixed one
# within the layout's worker ids, 0-63 in js-safe; the "any" nodes
# started first, in order, each holding its lease before the next starts,
# then the others together),
# NEMESIS_CLIENTS (single-id clients per node, 2), NEMESIS_PAUSE_MS (pause
# after each id, 2), NEMESIS_BATCH_CLIENTS (the batch clients each node
# also runs: "batch" snowflake_nextval_batch() in SQL, "http" GET
# /v1/ids/batch; "batch http"; "" for none), NEMESIS_BATCH (ids per batch:
# one millisecond of the layout, 2^S, 4096 in twitter, 64 in js-safe; at
# most 10000, the HTTP endpoint's limit), NEMESIS_BATCH_PAUSE_MS (pause after
# each batch, 100),
# NEMESIS_TTL (snowflake.lease_ttl, 5), NEMESIS_FAILOVER (the index
# of the node with snowflake.clock_backwards = failover, 0; "none" for no
# such node), NEMESIS_SDK (the SDK members' runtimes, "node python"; "" for
# none: then neither make sdk nor node is needed), NEMESIS_SDK_WORKER_IDS
# (their workerIds, "0-3": the "any" nodes hold 0 and 1 at the start, the
# fixed nodes ask for 0 and 1), NEMESIS_SDK_BATCH (ids per call, one
# millisecond of the layout: 4096 in twitter, 64 in js-safe),
# NEMESIS_SDK_PAUSE_MS (pause after each call, 100), KEEP_TMP (keep the work directory and the servers' directories).
#
# Needs root (network namespaces), iproute2, nftables, etcd (or zookeeper and
# java), libfaketime, a C compiler and python3-psycopg2 (scripts/deps.sh).
# Exits non-zero on any violation, and prints the seed first and last.
set -uo pipefail
cd "$(dirname "$0")/../.."

. test/lib/suite.sh
. test/lib/zookeeper.sh
NEMESIS_DIR=$PWD/test/nemesis
PY=/usr/bin/python3

DURATION=${DURATION:-120}
SEED=${SEED:-}
[ -n "$SEED" ] || SEED=$(( (RANDOM << 15 | RANDOM) % 1000000 ))
TTL=${NEMESIS_TTL:-5}
read -r -a NODE_IDS <<<"${NEMESIS_NODES:-any any 0 0 1 1}"
# The nodes' snowflake.layout, and its widths T/W/S (layout.py: the fleet
# key's form); LAYOUT_WHY says why it is not a layout a node issues ids in.
LAYOUT=${NEMESIS_LAYOUT:-twitter}
LAYOUT_WHY=
LAYOUT_BITS=$("$PY" "$NEMESIS_DIR/layout.py" "$LAYOUT" 2>&1) || { LAYOUT_WHY=$LAYOUT_BITS; LAYOUT_BITS=41/10/12; }
IFS=/ read -r T_BITS W_BITS S_BITS <<<"$LAYOUT_BITS"
MAX_WORKER=$(( (1 << W_BITS) - 1 ))
IDS_PER_MS=$(( 1 << S_BITS ))
CLIENTS=${NEMESIS_CLIENTS:-2}
read -r -a BATCH_KINDS <<<"${NEMESIS_BATCH_CLIENTS-batch http}"
# A batch fills a millisecond of one worker id (the HTTP endpoint gives at
# most 10000 ids a call).
BATCH=${NEMESIS_BATCH:-$(( IDS_PER_MS < 10000 ? IDS_PER_MS : 10000 ))}
BATCH_PAUSE_MS=${NEMESIS_BATCH_PAUSE_MS:-100}
FAILOVER=${NEMESIS_FAILOVER:-0}
PAUSE_MS=${NEMESIS_PAUSE_MS:-2}
# The SDK members take the fleet's layout (their Generator's layout option:
# a member of another layout would lease nothing, the fleet key names it).
read -r -a SDK_KINDS <<<"${NEMESIS_SDK-node python}"
SDK_WORKER_IDS=${NEMESIS_SDK_WORKER_IDS:-0-3}
SDK_BATCH=${NEMESIS_SDK_BATCH:-$IDS_PER_MS}
SDK_PAUSE_MS=${NEMESIS_SDK_PAUSE_MS:-100}
S=${#SDK_KINDS[@]}
HTTP_PORT=8080   # each node's own loopback, in its namespace
PREFIX=/snowflake   # snowflake.lease_prefix (the default)
N=${#NODE_IDS[@]}
M=3   # etcd members (ZooKeeper servers)
COORDINATOR=${COORDINATOR:-etcd}
case $COORDINATOR in
    etcd) COORD_NAME=etcd ;;
    zookeeper) COORD_NAME=ZooKeeper ;;
    *) echo "not ok - nemesis: COORDINATOR is etcd or zookeeper, not '$COORDINATOR'"; exit 1 ;;
esac
is_zk() { [ "$COORDINATOR" = zookeeper ]; }

# The command line that replays this run's schedule.
REPLAY="DURATION=$DURATION SEED=$SEED"
! is_zk || REPLAY="COORDINATOR=zookeeper $REPLAY"
for v in NEMESIS_LAYOUT NEMESIS_NODES NEMESIS_CLIENTS NEMESIS_BATCH_CLIENTS NEMESIS_BATCH NEMESIS_BATCH_PAUSE_MS \
    NEMESIS_PAUSE_MS NEMESIS_TTL NEMESIS_FAILOVER NEMESIS_SDK NEMESIS_SDK_WORKER_IDS NEMESIS_SDK_BATCH \
    NEMESIS_SDK_PAUSE_MS; do
    [ -z "${!v+set}" ] || REPLAY+=" $v='${!v}'"
done
echo "# nemesis: seed $SEED, duration $DURATION s, lease TTL $TTL s, nodes (worker_id): ${NODE_IDS[*]}$(is_zk && echo ", coordinator ZooKeeper")$([ "$FAILOVER" = none ] || echo ", clock failover on node$FAILOVER")"
[ -n "$LAYOUT_WHY" ] || echo "# layout: snowflake.layout = '$LAYOUT' ($LAYOUT_BITS: time, worker id, sequence bits; worker ids 0 to $MAX_WORKER, $IDS_PER_MS ids a millisecond each, every id below 2^$((T_BITS + W_BITS + S_BITS)))"
echo "# clients per node: $CLIENTS of single ids$(for k in "${BATCH_KINDS[@]}"; do printf ', one of %s (%s ids, a %s ms pause)' \
    "$([ "$k" = http ] && echo "GET /v1/ids/batch?count=$BATCH" || echo "snowflake_nextval_batch($BATCH)")" "$BATCH" "$BATCH_PAUSE_MS"; done)"
[ "$S" = 0 ] || echo "# SDK members: $(for ((j = 0; j < S; j++)); do printf 'sdk%d=%s ' "$j" "${SDK_KINDS[$j]}"; done)(workerIds $SDK_WORKER_IDS, nextIds($SDK_BATCH), a $SDK_PAUSE_MS ms pause)"
echo "# replay: make nemesis $REPLAY   (or $REPLAY test/nemesis/run.sh)"

fail_setup() { echo "not ok - nemesis: $*"; echo "# seed $SEED (replay: make nemesis $REPLAY)"; exit 1; }
[ -z "$LAYOUT_WHY" ] || fail_setup "NEMESIS_LAYOUT '$LAYOUT' is not a layout a node issues ids in: $LAYOUT_WHY"
for w in "${NODE_IDS[@]}"; do
    [ "$w" = any ] || { [[ $w =~ ^[0-9]+$ ]] && [ "$w" -le "$MAX_WORKER" ]; } ||
        fail_setup "NEMESIS_NODES: worker id '$w' does not fit NEMESIS_LAYOUT '$LAYOUT' ($W_BITS worker bits:" \
            "a worker id from 0 to $MAX_WORKER, or any)"
done
[ "$(id -u)" = 0 ] || fail_setup "needs root (network namespaces)"
if is_zk; then COORD_TOOLS=("$ZK_JAVA"); else COORD_TOOLS=("$ETCD_BIN"); fi
for tool in ip nft cc "${COORD_TOOLS[@]}" "$PY" "$PGBIN/pg_ctl"; do
    command -v "$tool" >/dev/null || fail_setup "$tool is missing (make deps)"
done
! is_zk || [ -f "$ZK_CLASSPATH" ] || fail_setup "ZooKeeper is missing ($ZK_CLASSPATH; the zookeeper package)"
"$PY" -c 'import psycopg2' 2>/dev/null || fail_setup "python3-psycopg2 is missing (make deps)"
[ -f "$FT_LIB" ] || fail_setup "libfaketime is missing ($FT_LIB; make deps)"
[[ $DURATION =~ ^[0-9]+$ ]] && [ "$DURATION" -ge 40 ] || fail_setup "DURATION must be a number of seconds, at least 40"
[[ $SEED =~ ^[0-9]+$ ]] || fail_setup "SEED must be a non-negative integer"
[ "$FAILOVER" = none ] || { [[ $FAILOVER =~ ^[0-9]+$ ]] && [ "$FAILOVER" -lt "$N" ]; } ||
    fail_setup "NEMESIS_FAILOVER must be a node's index (0 to $((N - 1))) or none"
for k in "${BATCH_KINDS[@]}"; do
    [ "$k" = batch ] || [ "$k" = http ] || fail_setup "NEMESIS_BATCH_CLIENTS lists batch and http clients, not '$k'"
done
[[ $BATCH =~ ^[0-9]+$ ]] && [ "$BATCH" -ge 1 ] && [ "$BATCH" -le 10000 ] || fail_setup "NEMESIS_BATCH must be 1 to 10000"
for k in "${SDK_KINDS[@]}"; do
    [ "$k" = node ] || [ "$k" = python ] || fail_setup "NEMESIS_SDK lists node and python members, not '$k'"
done
[[ $SDK_BATCH =~ ^[0-9]+$ ]] && [ "$SDK_BATCH" -ge 1 ] && [ "$SDK_BATCH" -le 1000000 ] || fail_setup "NEMESIS_SDK_BATCH must be 1 to 1000000"
if [ "$S" -gt 0 ]; then
    [[ " ${SDK_KINDS[*]} " != *" node "* ]] || command -v node >/dev/null || fail_setup "node is missing (NEMESIS_SDK='' runs without SDK members)"
    # The bindings, built in place (sdk/node, sdk/python): before the run,
    # not counted in its duration.
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk >/tmp/nemesis-make-sdk.$$.log 2>&1 ||
        { tail -n 20 /tmp/nemesis-make-sdk.$$.log; rm -f /tmp/nemesis-make-sdk.$$.log; fail_setup "make sdk failed"; }
    rm -f /tmp/nemesis-make-sdk.$$.log
fi

WORK=$(suite_workdir nemesis)
mkdir -p "$WORK/etcd" "$WORK/clients"
FAULT_LOG=$WORK/faults.log
CLOCK_LOG=$WORK/clocks.log   # each node's clock offset changes (check.py)
: >"$FAULT_LOG"
: >"$CLOCK_LOG"

# The checker's self-test (check_test.py: synthetic runs with planted
# violations, each of which the checker must report), in the background
# while the fleet is set up; its result is awaited before the clients start.
# A run that finds no violation must have been checked by a checker that
# can fail.
"$PY" "$NEMESIS_DIR/check_test.py" >"$WORK/check_test.out" 2>&1 &
SELFTEST_PID=$!

# --- network ---------------------------------------------------------------
# Namespaces: $P-br holds the bridge; $P-ctl is where the suite talks to
# etcd (ZooKeeper) from; $P-e<i> an etcd member (ZooKeeper server); $P-n<i>
# a node; $P-s<j> an SDK member. Each but the bridge's
# has one end of a veth pair as eth0, the other end in $P-br on the bridge.
# The addresses exist only inside these namespaces.
P=sfn$$
NET=10.231.0
NETNS_MADE=()
BR_NS=$P-br
CTL_NS=$P-ctl
E_NS=(); E_ADDR=(); N_NS=(); N_ADDR=()
for ((i = 0; i < M; i++)); do E_NS+=("$P-e$i"); E_ADDR+=("$NET.$((11 + i))"); done
for ((i = 0; i < N; i++)); do N_NS+=("$P-n$i"); N_ADDR+=("$NET.$((21 + i))"); done
S_NS=(); S_ADDR=()
for ((j = 0; j < S; j++)); do S_NS+=("$P-s$j"); S_ADDR+=("$NET.$((41 + j))"); done

# net_join NS VETH ADDR: namespace NS on the bridge, at ADDR.
net_join() {
    local ns=$1 veth=$2 addr=$3
    ip netns add "$ns" || return 1
    NETNS_MADE+=("$ns")
    ip -n "$ns" link set lo up &&
        ip -n "$BR_NS" link add "$veth" type veth peer name eth0 netns "$ns" &&
        ip -n "$BR_NS" link set "$veth" master br0 up &&
        ip -n "$ns" addr add "$addr/24" dev eth0 &&
        ip -n "$ns" link set eth0 up
}

net_setup() {
    ip netns add "$BR_NS" || return 1
    NETNS_MADE+=("$BR_NS")
    ip -n "$BR_NS" link add br0 type bridge && ip -n "$BR_NS" link set br0 up || return 1
    net_join "$CTL_NS" vc "$NET.2" || return 1
    for ((i = 0; i < M; i++)); do net_join "${E_NS[$i]}" "ve$i" "${E_ADDR[$i]}" || return 1; done
    for ((i = 0; i < N; i++)); do net_join "${N_NS[$i]}" "vn$i" "${N_ADDR[$i]}" || return 1; done
    for ((j = 0; j < S; j++)); do net_join "${S_NS[$j]}" "vs$j" "${S_ADDR[$j]}" || return 1; done
}

# net_cut NS ADDR...: drops, inside NS, every packet to and from the ADDRs
# (table inet nemesis); net_cut_in / net_cut_out only one direction.
nft_rules() {
    local ns=$1 hook=$2 field=$3; shift 3
    local set
    set=$(IFS=,; echo "$*")
    printf 'table inet nemesis {\n chain %s { type filter hook %s priority 0; policy accept; ip %s { %s } drop; }\n}\n' \
        "$hook" "$hook" "$field" "$set" | ip netns exec "$ns" nft -f -
}
net_cut_in() { local ns=$1; shift; nft_rules "$ns" input saddr "$@"; }
net_cut_out() { local ns=$1; shift; nft_rules "$ns" output daddr "$@"; }
net_cut() { net_cut_in "$@" && net_cut_out "$@"; }
net_heal() { ip netns exec "$1" nft delete table inet nemesis 2>/dev/null || true; }

# --- processes the suite stopped (SIGSTOP) and clients ---------------------
STOPPED=()       # pids stopped by a fault, continued at its end or at cleanup
CLIENT_PIDS=()
RECORDER_PID=    # tenures.py poll: the coordinator's revision clock
declare -A FAULT_PIDS   # fault# -> pids it stopped or killed

# recorder_start / recorder_stop: tenures.py reading the coordinator's
# revision (zxid) every 50 ms from the suite's namespace, with the boot
# clock before and after, until stopped (check.py puts the coordinator's
# history on the boot clock with it).
recorder_start() {
    if is_zk; then
        ip netns exec "$CTL_NS" "$PY" "$NEMESIS_DIR/tenures.py" poll zookeeper "$WORK/polls" "$ZK_HOSTS" &
    else
        ip netns exec "$CTL_NS" "$PY" "$NEMESIS_DIR/tenures.py" poll etcd "$WORK/polls" "$ETCD_ENDPOINTS" "$PREFIX" &
    fi
    RECORDER_PID=$!
}
recorder_stop() {
    [ -n "$RECORDER_PID" ] || return 0
    kill -TERM "$RECORDER_PID" 2>/dev/null || true
    wait "$RECORDER_PID" 2>/dev/null || true
    RECORDER_PID=
}

cleanup() {
    local p ns
    trap - EXIT INT TERM
    for p in "${CLIENT_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${CLIENT_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    # SDK members still running (a failed run): killed, and reaped.
    for p in "${SDK_PID[@]}"; do [ -z "$p" ] || kill -KILL "$p" 2>/dev/null || true; done
    for p in "${SDK_PID[@]}"; do [ -z "$p" ] || wait "$p" 2>/dev/null || true; done
    recorder_stop
    [ -z "${SELFTEST_PID:-}" ] || { kill -TERM "$SELFTEST_PID" 2>/dev/null; wait "$SELFTEST_PID" 2>/dev/null; } || true
    for p in "${STOPPED[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
    for ((i = 0; i < N; i++)); do
        [ -n "${NODE_DIR[$i]:-}" ] && [ -f "${NODE_DIR[$i]}/stall" ] && stall_write "${NODE_DIR[$i]}" "0 0 0"
    done
    # The nodes stop together, immediately (nothing of them is kept but
    # their logs), then go; the etcd members are killed: their data goes
    # with the work directory, and a leader stopped with its followers would
    # wait 5 s for a leadership transfer that cannot happen.
    local stops=() dir
    for dir in "${PG_INSTANCES[@]}"; do
        if [ -d "$dir" ]; then pg_stop "$dir" immediate & stops+=($!); fi
    done
    for p in "${stops[@]}"; do wait "$p" 2>/dev/null || true; done
    pg_cleanup_all
    for p in "${ETCD_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    for p in "${ETCD_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done   # (quietly: no "Killed")
    etcd_stop
    zk_stop
    for ns in "${NETNS_MADE[@]}"; do
        # Anything still running in a namespace of the suite was started by
        # it (a postmaster's child that outlived it): end it by pid.
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    done
    for ns in "${NETNS_MADE[@]}"; do ip netns del "$ns" 2>/dev/null || echo "# could not remove namespace $ns" >&2; done
    left=$(ip netns list 2>/dev/null | awk -v p="$P-" 'index($1, p) == 1' | wc -l)
    [ "$left" = 0 ] || echo "# $left namespace(s) of the suite left behind" >&2
    [ -n "${KEEP_TMP:-}" ] && echo "# kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
umask 022

# --- nodes -----------------------------------------------------------------
NODE_DIR=()

# stall_write DIR TEXT: the stall request of a node (stall_shim.c), written
# in place: the file is mapped by the servers and must keep its 64 bytes.
stall_write() { printf '%-63s\n' "$2" | dd of="$1/stall" bs=64 count=1 conv=notrunc status=none; }

# node_start I: starts node I in its namespace, under the stall shim and
# libfaketime (the clock offset in its faketime file is kept).
node_start() {
    local i=$1 dir=${NODE_DIR[$1]}
    [ -f "$dir/faketime" ] || ft_set "$dir" 0
    if ! (cd / && ip netns exec "${N_NS[$i]}" runuser -u postgres -- env \
        "LD_PRELOAD=$STALL_SO:$FT_PRELOAD" "SF_STALL_FILE=$dir/stall" \
        "FAKETIME_TIMESTAMP_FILE=$dir/faketime" FAKETIME_NO_CACHE=1 FAKETIME_DONT_RESET=1 \
        FAKETIME_DONT_FAKE_MONOTONIC=1 \
        "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start) >/dev/null 2>&1; then
        echo "# node$i did not start; log tail:"
        tail -n 5 "$dir/server.log" | sed 's/^/#   /'
        return 1
    fi
}

# node_pids I: the postmaster of node I and its children, postmaster first.
node_pids() {
    local pm
    pm=$(pg_postmaster_pid "${NODE_DIR[$1]}") || return 0
    kill -0 "$pm" 2>/dev/null || return 0
    echo "$pm"
    ps -o pid= --ppid "$pm" 2>/dev/null | tr -d ' '
}

# client_backend I K: the pid of a client backend of node I or of its HTTP
# worker (the K-th of them, modulo their number), or nothing.
client_backend() {
    local pids p
    mapfile -t pids < <(PG_TIMEOUT=5 pg_val "${NODE_DIR[$1]}" \
        "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'nemesis-client-%' ORDER BY application_name, pid" 2>/dev/null)
    if [ ${#HTTP_CONF[@]} -gt 0 ] && [ ${#pids[@]} -gt 0 ]; then
        for p in $(node_pids "$1" | tail -n +2); do
            if tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q 'snowflake HTTP endpoint'; then pids+=("$p"); break; fi
        done
    fi
    [ ${#pids[@]} -gt 0 ] && echo "${pids[$(( $2 % ${#pids[@]} ))]}"
}

# lease_worker_pid I: the pid of node I's lease worker (a child of the
# postmaster titled "postgres: snowflake worker id lease"; it has no
# database connection, so pg_stat_activity does not list it).
lease_worker_pid() {
    local p
    for p in $(node_pids "$1" | tail -n +2); do
        if tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q 'snowflake worker id lease'; then
            echo "$p"
            return
        fi
    done
}

# coord_leader: the index of the etcd member (ZooKeeper server) that is
# leader now, or nothing (after trying for about 3 s: there may be an
# election going on).
coord_leader() {
    local url i
    if is_zk; then
        for _ in 1 2 3 4 5 6; do
            for ((i = 0; i < M; i++)); do
                if kill -0 "${ZK_PIDS[$i]}" 2>/dev/null && [ "$(zk_mode "$i")" = leader ]; then echo "$i"; return; fi
            done
            sleep 0.5
        done
        return
    fi
    for _ in 1 2 3 4 5 6; do
        url=$(etcd_ctl endpoint status -w simple 2>/dev/null | awk -F', ' '$5 == "true" { print $1; exit }')
        for ((i = 0; i < M; i++)); do
            if [ "${ETCD_URLS[$i]}" = "$url" ]; then echo "$i"; return; fi
        done
        sleep 0.5
    done
}

# --- SDK members -----------------------------------------------------------
# Member j (sdk<j>) is a Node.js or Python process (NEMESIS_SDK) with an
# embedded generator, in namespace $P-s<j>, under libfaketime (its clock
# file in SDK_DIR[j]), recording to $WORK/clients/sdk<j>. Each process it
# runs is a life of its own, named sdk<j>.<life> in its records and in the
# nodes file (a holder of worker keys of its own: port 0, its runtime and
# pid), started again by a kill9 or restart fault.
SDK_PID=()    # j -> the pid of its process now ("" while none runs)
SDK_LIFE=()   # j -> its number of processes so far
SDK_DIR=()    # j -> its directory (faketime)
sdk_start() {
    local j=$1 life name rt=${SDK_KINDS[$1]} cmd
    SDK_LIFE[$j]=$(( ${SDK_LIFE[$j]:-0} + 1 ))
    life=${SDK_LIFE[$j]}
    name=sdk$j.$life
    if [ "$rt" = node ]; then
        cmd=(node "$NEMESIS_DIR/sdk_member.js")
    else
        cmd=("$PY" "$NEMESIS_DIR/sdk_member.py")
    fi
    # ip netns exec and env exec: $! is the member's pid.
    ip netns exec "${S_NS[$j]}" env "LD_PRELOAD=$FT_LIB" "FAKETIME_TIMESTAMP_FILE=${SDK_DIR[$j]}/faketime" \
        FAKETIME_NO_CACHE=1 FAKETIME_DONT_RESET=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
        "SF_NODE_SDK=$PWD/sdk/node" "PYTHONPATH=$PWD/sdk/python" "SF_PREFIX=$PREFIX" \
        "SF_WORKER_IDS=$SDK_WORKER_IDS" "SF_TTL=$TTL" "SF_ETCD=$SDK_ETCD" "SF_ZK=$SDK_ZK" "SF_LAYOUT=$LAYOUT" \
        "${cmd[@]}" "$name" "sdk-$rt" "$WORK/clients/sdk$j" "$SDK_BATCH" "$SDK_PAUSE_MS" \
        2>>"${SDK_DIR[$j]}/stderr" &
    SDK_PID[$j]=$!
    echo "$name port=0 runtime=$rt pid=$!" >>"$WORK/nodes"
}
# sdk_end J SIGNAL: ends member J's process with SIGNAL and reaps it (after
# SIGTERM, its close(), at most 15 s: then kill -9).
sdk_end() {
    local j=$1 pid=${SDK_PID[$1]} k
    [ -n "$pid" ] || return 0
    kill "-$2" "$pid" 2>/dev/null || true
    if [ "$2" = TERM ]; then
        for ((k = 0; k < 150; k++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null && echo "# sdk$j: pid $pid did not close within 15 s: killed"
    fi
    wait "$pid" 2>/dev/null
    SDK_PID[$j]=
}
sdk_ids() { grep -q ' b[0-9]' "$WORK/clients/sdk$1" 2>/dev/null; }

# --- faults ----------------------------------------------------------------
# fault WHAT NUM KIND TARGET DUR PARAM: applies (start), heals halfway (mid)
# or ends (end) one fault of the schedule; logs it with the time and a note.
STALL_GEN=0
BROKEN=()   # what went wrong applying the faults (a failure of the suite)
nft_broken() { note="NFTABLES FAILED"; BROKEN+=("fault #$num: the nftables rules could not be added"); }
declare -A BUSY      # node -> the fault# on it
declare -A RESOLVED  # fault# -> its node, for "holder" faults
declare -A SKIPPED   # fault# -> 1 when it could not start
# Worker ids some node asks for (and so waits for while another holds them).
CONTESTED=" $(printf '%s\n' "${NODE_IDS[@]}" | grep -v any | sort -u | tr '\n' ' ')"

# pick_holder NUM: a node no fault is on that holds a contested worker id
# now (the NUM-th of them, modulo their number), or nothing.
pick_holder() {
    local i w cands=()
    for ((i = 0; i < N; i++)); do
        [ -z "${BUSY[node$i]:-}" ] || continue
        w=$(PG_TIMEOUT=2 pg_val "${NODE_DIR[$i]}" "SELECT worker_id FROM snowflake_stats" 2>/dev/null)
        [ -n "$w" ] && [[ $CONTESTED == *" $w "* ]] && cands+=("node$i")
    done
    [ ${#cands[@]} -gt 0 ] && echo "${cands[$(($1 % ${#cands[@]}))]}"
}

fault() {
    local what=$1 num=$2 kind=$3 target=$4 dur=$5 par=$6
    local i= j= dir= note= p pid
    if [ "$what" = start ]; then
        # A "holder" fault picks its node now; a fault whose node another
        # fault is on (a "holder" fault picked it) does not start. A
        # clock_back fault is the exception: it overlaps others on its node
        # by design, and leaves the node to them (never marked busy).
        [ "$target" != holder ] || target=$(pick_holder "$num")
        if [ -z "$target" ]; then
            note="no node that no fault is on holds a worker id another node asks for"
        elif [[ $target == node* ]] && [ -n "${BUSY[$target]:-}" ] && [ "$kind" != clock_back ]; then
            note="fault #${BUSY[$target]} is on $target"
        fi
        if [ -n "$note" ]; then
            SKIPPED[$num]=1
            target=${target:-holder}
            echo "$EPOCHREALTIME skip $num $kind $target $dur $par $note" >>"$FAULT_LOG"
            printf '# %6.1f s  skip  #%-3s %-21s %-6s %s\n' "$(awk -v a="$EPOCHREALTIME" -v b="$T0" 'BEGIN { print a - b }')" \
                "$num" "$kind" "$target" "$note"
            return
        fi
        RESOLVED[$num]=$target
        [[ $target != node* ]] || [ "$kind" = clock_back ] || BUSY[$target]=$num
    else
        [ -z "${SKIPPED[$num]:-}" ] || return
        target=${RESOLVED[$num]:-$target}
        [ "$what" != end ] || [[ $target != node* ]] || [ "$kind" = clock_back ] || unset "BUSY[$target]"
    fi
    if [[ $target == node* ]]; then i=${target#node}; dir=${NODE_DIR[$i]}; fi
    if [[ $target == sdk* ]]; then j=${target#sdk}; dir=${SDK_DIR[$j]}; pid=${SDK_PID[$j]}; fi
    case "$what $kind" in
        "start part_both") net_cut "${N_NS[$i]}" "${E_ADDR[@]}" || nft_broken ;;
        "start part_in") net_cut_in "${N_NS[$i]}" "${E_ADDR[@]}" || nft_broken ;;
        "start part_out") net_cut_out "${N_NS[$i]}" "${E_ADDR[@]}" || nft_broken ;;
        "end part_both" | "end part_in" | "end part_out") net_heal "${N_NS[$i]}" ;;
        "start etcd_minority" | "start zk_minority")
            p=${target##*[a-z]}
            local others=()
            for ((j = 0; j < M; j++)); do [ "$j" = "$p" ] || others+=("${E_ADDR[$j]}"); done
            net_cut "${E_NS[$p]}" "${others[@]}" || nft_broken ;;
        "end etcd_minority" | "end zk_minority") net_heal "${E_NS[${target##*[a-z]}]}" ;;
        "start etcd_leader_kill")
            p=$(coord_leader)
            if [ -n "$p" ]; then
                note="killed m$p (pid ${ETCD_PIDS[$p]})"
                FAULT_PIDS[$num]=$p
                etcd_member_kill "$p" KILL
            else
                note="no leader found: nothing killed"
            fi ;;
        "end etcd_leader_kill")
            if [ -n "${FAULT_PIDS[$num]:-}" ]; then
                etcd_member_start "${FAULT_PIDS[$num]}"
                note="restarted m${FAULT_PIDS[$num]} (pid ${ETCD_PIDS[${FAULT_PIDS[$num]}]})"
            fi ;;
        "start zk_leader_kill")
            p=$(coord_leader)
            if [ -n "$p" ]; then
                note="killed s$p (pid ${ZK_PIDS[$p]})"
                FAULT_PIDS[$num]=$p
                zk_server_kill "$p" KILL
            else
                note="no leader found: nothing killed"
            fi ;;
        "end zk_leader_kill")
            if [ -n "${FAULT_PIDS[$num]:-}" ]; then
                zk_server_start "${FAULT_PIDS[$num]}"
                note="restarted s${FAULT_PIDS[$num]} (pid ${ZK_PIDS[${FAULT_PIDS[$num]}]})"
            fi ;;
        "start stall" | "start stall_handover")
            pid=$(client_backend "$i" "${par%%.*}")
            if [ -n "$pid" ]; then
                STALL_GEN=$((STALL_GEN + 1))
                stall_write "$dir" "$pid $(awk -v d="$dur" 'BEGIN { printf "%d", d * 1000 }') $STALL_GEN"
                note="backend $pid"
            else
                note="no client backend found"
            fi
            if [ "$kind" = stall_handover ]; then
                net_cut "${N_NS[$i]}" "${E_ADDR[@]}" || nft_broken
                note+=", node cut from $COORD_NAME"
            fi ;;
        "mid stall_handover") net_heal "${N_NS[$i]}"; note="node reconnected to $COORD_NAME" ;;
        "end stall" | "end stall_handover")
            stall_write "$dir" "0 0 0"
            note="stalls so far on $target: $(grep -c 'nemesis stall shim: pid .* stalls' "$dir/server.log" 2>/dev/null)" ;;
        "start sigstop_backend" | "start sigstop_lease_worker")
            if [ "$kind" = sigstop_backend ]; then pid=$(client_backend "$i" "$par"); else pid=$(lease_worker_pid "$i"); fi
            if [ -n "$pid" ]; then
                kill -STOP "$pid" && STOPPED+=("$pid") && FAULT_PIDS[$num]=$pid
                note="stopped pid $pid"
            else
                note="no process found"
            fi ;;
        "start pause_node")
            mapfile -t pids < <(node_pids "$i")
            for p in "${pids[@]}"; do kill -STOP "$p" 2>/dev/null && STOPPED+=("$p"); done
            FAULT_PIDS[$num]="${pids[*]}"
            note="stopped ${#pids[@]} processes" ;;
        "end sigstop_backend" | "end sigstop_lease_worker" | "end pause_node")
            for p in ${FAULT_PIDS[$num]:-}; do kill -CONT "$p" 2>/dev/null || true; done ;;
        "start clock_step" | "start clock_back") clock_shift "$i" "$par"; note="clock offset now $(cat "$dir/faketime")" ;;
        "end clock_step" | "end clock_back") clock_shift "$i" "$(awk -v d="$par" 'BEGIN { print -d }')"; note="clock offset now $(cat "$dir/faketime")" ;;
        "start kill9")
            mapfile -t pids < <(node_pids "$i")
            for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
            note="killed ${#pids[@]} processes" ;;
        "start restart")
            pg_stop "$dir" fast
            note="stopped cleanly" ;;
        "end kill9" | "end restart")
            if pg_reap "$dir" && node_start "$i"; then
                note="restarted"
            else
                note="RESTART FAILED"
                BROKEN+=("fault #$num: $target did not start again")
            fi ;;
        # The SDK members' faults (schedule.py's SDK_KINDS): one at a time.
        "start sdk_part") net_cut "${S_NS[$j]}" "${E_ADDR[@]}" || nft_broken; note="pid $pid cut from $COORD_NAME" ;;
        "end sdk_part") net_heal "${S_NS[$j]}" ;;
        "start sdk_sigstop")
            if [ -n "$pid" ] && kill -STOP "$pid"; then
                STOPPED+=("$pid"); FAULT_PIDS[$num]=$pid; note="stopped pid $pid"
            else
                note="no process"
            fi ;;
        "end sdk_sigstop") for p in ${FAULT_PIDS[$num]:-}; do kill -CONT "$p" 2>/dev/null || true; done ;;
        "start sdk_kill9") note="killed pid $pid"; sdk_end "$j" KILL ;;
        "start sdk_restart") note="closed pid $pid (SIGTERM)"; sdk_end "$j" TERM ;;
        "end sdk_kill9" | "end sdk_restart") sdk_start "$j"; note="started sdk$j.${SDK_LIFE[$j]} (pid ${SDK_PID[$j]})" ;;
        "start sdk_clock_step") clock_shift_dir "$dir" "sdk$j" "$par"; note="clock offset now $(cat "$dir/faketime")" ;;
        "end sdk_clock_step")
            clock_shift_dir "$dir" "sdk$j" "$(awk -v d="$par" 'BEGIN { print -d }')"
            note="clock offset now $(cat "$dir/faketime")" ;;
        # The kinds of schedule.py's SEPARATE_STREAMS after clock_back
        # (clones with the same name, a standby with another epoch: issue
        # 28) get their arms here, acting on the instances set up for them
        # with the nodes.
        *) note="unknown action" ;;
    esac
    echo "$EPOCHREALTIME $what $num $kind $target $dur $par $note" >>"$FAULT_LOG"
    printf '# %6.1f s  %-5s #%-3s %-21s %-6s %s\n' "$(awk -v a="$EPOCHREALTIME" -v b="$T0" 'BEGIN { print a - b }')" \
        "$what" "$num" "$kind" "$target" "$note"
}

# clock_shift I SECONDS: moves node I's clock (ft_shift) and writes the
# change to the clock log, between the times before and after it;
# clock_shift_dir DIR NAME SECONDS the same for the clock file in DIR of the
# node or SDK member NAME.
clock_shift() { clock_shift_dir "${NODE_DIR[$1]}" "node$1" "$2"; }
clock_shift_dir() {
    local before=$EPOCHREALTIME
    ft_shift "$1" "$3"
    echo "$before $EPOCHREALTIME $2 $(cat "$1/faketime")" >>"$CLOCK_LOG"
}

node_holds() { [ "$(pg_val "${NODE_DIR[$1]}" "SELECT lease_state FROM snowflake_stats" 2>/dev/null)" = held ]; }

# --- setup -----------------------------------------------------------------
t_setup=$(real_now)
net_setup || fail_setup "network namespaces and the bridge could not be set up"
net_cut "$CTL_NS" 192.0.2.1 && net_heal "$CTL_NS" || fail_setup "nftables rules cannot be added in a namespace (nf_tables)"
if is_zk; then
    ZK_NETNS=("${E_NS[@]}")
    ZK_ADDRS=("${E_ADDR[@]}")
    ZK_CTL_NETNS=$CTL_NS
    zk_start "$M" "$WORK/zk" || fail_setup "the 3-server ZooKeeper ensemble did not start"
    SDK_ZK=$ZK_HOSTS SDK_ETCD=
    echo "# ZooKeeper $(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null) at $ZK_HOSTS"
    COORD_CONF="snowflake.zookeeper_hosts = '$ZK_HOSTS'"
else
    ETCD_NETNS=("${E_NS[@]}")
    ETCD_HOSTS=("${E_ADDR[@]}")
    ETCD_CTL_NETNS=$CTL_NS
    etcd_start "$M" "$WORK/etcd" || fail_setup "the 3-member etcd cluster did not start"
    SDK_ETCD=$ETCD_ENDPOINTS SDK_ZK=
    echo "# etcd $("$ETCD_BIN" --version | head -1 | awk '{print $3}') at $ETCD_ENDPOINTS"
    COORD_CONF="snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'"
fi

ft_build_shim "$WORK" || fail_setup "test/fault/select_shim.c did not compile"
cc -shared -fPIC -O2 -Wall -o "$WORK/stall_shim.so" "$NEMESIS_DIR/stall_shim.c" -ldl 2>"$WORK/stall_shim.log" \
    || { cat "$WORK/stall_shim.log"; fail_setup "stall_shim.c did not compile"; }
chmod 755 "$WORK/stall_shim.so"
STALL_SO=$WORK/stall_shim.so

# The HTTP endpoint (when an http client runs): on each node's loopback, in
# its namespace, with a token in a file only the server's user reads
# (docs/reference.md, "Access"); the http clients send it as a bearer token.
HTTP_CONF=()
if [[ " ${BATCH_KINDS[*]} " == *" http "* ]]; then
    TOKEN_FILE=$WORK/http_token
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN_FILE"
    chown postgres "$TOKEN_FILE" && chmod 600 "$TOKEN_FILE" || fail_setup "the HTTP token file could not be made"
    HTTP_CONF=("snowflake.http_listen = '127.0.0.1:$HTTP_PORT'" "snowflake.http_token_file = '$TOKEN_FILE'")
fi
http_listening() { grep -q "snowflake HTTP endpoint listening on 127.0.0.1:$HTTP_PORT" "${NODE_DIR[$1]}/server.log" 2>/dev/null; }

# The coordinator's revision clock runs from before the first node claims a
# worker id until the history is read after the run.
recorder_start

kinds=()
init_pids=()
for ((i = 0; i < N; i++)); do
    NODE_DIR[$i]=$(pg_tmpdir)
    PG_INSTANCES+=("${NODE_DIR[$i]}")
    conf=("shared_preload_libraries = 'snowflake'" "$COORD_CONF"
          "snowflake.lease_ttl = $TTL" "snowflake.layout = '$LAYOUT'"
          "autovacuum = off" "synchronous_commit = off" "shared_buffers = 16MB"
          ${HTTP_CONF[@]+"${HTTP_CONF[@]}"})
    if [ "${NODE_IDS[$i]}" = any ]; then kinds+=(any); else kinds+=(fixed); conf+=("snowflake.worker_id = ${NODE_IDS[$i]}"); fi
    [ "$FAILOVER" != "$i" ] || conf+=("snowflake.clock_backwards = failover")
    pg_init "${NODE_DIR[$i]}" "${conf[@]}" &
    init_pids+=($!)
done
for p in "${init_pids[@]}"; do wait "$p" || true; done
# node_setup I: starts node I and creates the extension and the table.
node_setup() {
    node_start "$1" || { echo "# node$1 did not start"; return 1; }
    pg_psql "${NODE_DIR[$1]}" -c "SET client_min_messages = warning" -c "CREATE EXTENSION snowflake" \
        -c "CREATE TABLE nemesis_ids (id bigint, at timestamptz DEFAULT clock_timestamp())" \
        || { echo "# node$1: the extension or the table could not be created"; return 1; }
}
# An "any" node takes the lowest free id: the "any" nodes start first, each
# holding one before the next starts, so that the nodes asking for fixed ids
# start out waiting for ids the "any" nodes hold. Those then start together.
setup_pids=()
for ((i = 0; i < N; i++)); do
    [ -f "${NODE_DIR[$i]}/data/PG_VERSION" ] || fail_setup "initdb of node$i failed"
    stall_write "${NODE_DIR[$i]}" "0 0 0"
    chmod 644 "${NODE_DIR[$i]}/stall"
    [ "${NODE_IDS[$i]}" = any ] || continue
    node_setup "$i" || fail_setup "node$i could not be set up"
    wait_for "held" 20 node_holds "$i" || fail_setup "node$i holds no lease 20 s after its start"
done
for ((i = 0; i < N; i++)); do
    [ "${NODE_IDS[$i]}" != any ] || continue
    node_setup "$i" &
    setup_pids+=("$!:$i")
done
for p in "${setup_pids[@]}"; do wait "${p%%:*}" || fail_setup "node${p#*:} could not be set up"; done
if [ ${#HTTP_CONF[@]} -gt 0 ]; then
    for ((i = 0; i < N; i++)); do
        wait_for "listening" 10 http_listening "$i" || fail_setup "node$i: the HTTP endpoint does not listen"
    done
fi
# Instances beyond the N nodes (a clone of a node, a standby of one) would be
# set up here: a namespace each (net_join), a line in the nodes file below,
# their clients started with the others (their records go to the checker
# like any client's).
# Who a worker key names, and the id space's epoch, for the checker: a line
# per instance, "<node> <field>=<value>" of the identity its worker keys
# hold (the data directory tells these nodes apart; an instance that shares
# it with another, a clone, would be told by a field of its own).
for ((i = 0; i < N; i++)); do echo "node$i data_directory=${NODE_DIR[$i]}/data"; done >"$WORK/nodes"
EPOCH_MS=$(pg_val "${NODE_DIR[0]}" "SELECT (extract(epoch FROM epoch) * 1000)::bigint FROM snowflake_stats")
[[ $EPOCH_MS =~ ^[0-9]+$ ]] || fail_setup "snowflake.epoch could not be read from node0"
# The widths the checker decodes ids with, against each node's own
# decoders: the layout's last id, 2^(T+W+S) - 1, is the last worker id,
# sequence and millisecond there, and the node's lifetime is 2^T ms.
LAST_ID=$(( T_BITS + W_BITS + S_BITS == 63 ? 9223372036854775807 : (1 << (T_BITS + W_BITS + S_BITS)) - 1 ))
for ((i = 0; i < N; i++)); do
    got=$(pg_val "${NODE_DIR[$i]}" "SELECT layout || ': ' || (snowflake_worker_id($LAST_ID) = $MAX_WORKER
        AND snowflake_sequence($LAST_ID) = $((IDS_PER_MS - 1))
        AND snowflake_timestamp($LAST_ID) = epoch + interval '1 millisecond' * $(( (1 << T_BITS) - 1 ))
        AND lifetime_end = epoch + interval '1 millisecond' * $(( 1 << T_BITS )) AND ids_per_ms = $IDS_PER_MS)
        FROM snowflake_stats" 2>&1)
    [[ $got == *": true" ]] || fail_setup "node$i does not decode ids in the widths $LAYOUT_BITS the checker would read" \
        "them in (NEMESIS_LAYOUT '$LAYOUT', test/nemesis/layout.py): snowflake_stats.layout and the probe: $got"
done
echo "# worker ids held at the start: $(for ((i = 0; i < N; i++)); do printf 'node%d:%s ' "$i" \
    "$(pg_val "${NODE_DIR[$i]}" "SELECT coalesce(worker_id::text, lease_state) FROM snowflake_stats")"; done)"
KINDS=$(IFS=,; echo "${kinds[*]}")
echo "# nodes: $(for ((i = 0; i < N; i++)); do printf 'node%d=%s(worker_id %s) ' "$i" "${N_ADDR[$i]}" "${NODE_IDS[$i]}"; done)"
# The SDK members, once the nodes hold their ids: they lease from the same
# prefix, the lowest free id of SDK_WORKER_IDS.
for ((j = 0; j < S; j++)); do
    SDK_DIR[$j]=$WORK/sdk$j
    mkdir -p "${SDK_DIR[$j]}"
    ft_set "${SDK_DIR[$j]}" 0
    sdk_start "$j"
    wait_for "ids" 30 sdk_ids "$j" || { tail -n 5 "${SDK_DIR[$j]}/stderr" | sed 's/^/#   /'
        fail_setup "SDK member sdk$j (${SDK_KINDS[$j]}) has issued no id 30 s after its start"; }
done
[ "$S" = 0 ] || echo "# SDK members' worker ids at the start: $(for ((j = 0; j < S; j++)); do
    printf 'sdk%d:%s ' "$j" "$("$PY" -c 'import sys
for line in open(sys.argv[1]):
    r = line.split()[5]
    if r[:1] == "b" and r[1:2].isdigit():
        print(int(r[1:].split("+")[0]) >> int(sys.argv[2]) & int(sys.argv[3]))
        break' "$WORK/clients/sdk$j" "$S_BITS" "$MAX_WORKER")"; done)"
echo "# setup took $(elapsed_since "$t_setup") s"

TIMELINE=$WORK/timeline
FAILOVER_ARG=$FAILOVER; [ "$FAILOVER" != none ] || FAILOVER_ARG=-
SDK_ARG=-; [ "$S" = 0 ] || SDK_ARG=$(for ((j = 0; j < S; j++)); do printf 'sdk%d\n' "$j"; done | paste -sd,)
"$PY" "$NEMESIS_DIR/schedule.py" "$SEED" "$DURATION" "$TTL" "$KINDS" "$M" "$COORDINATOR" "$FAILOVER_ARG" "$SDK_ARG" >"$TIMELINE" \
    || fail_setup "schedule.py failed"
echo "# fault schedule (seed $SEED; s after the clients start):"
awk '$2 == "start" { printf "#   #%-3s at %6.1f s for %5.1f s  %-21s %-6s %s\n", $3, $1, $6, $4, $5, ($7 == "-" ? "" : "param " $7) }' "$TIMELINE"

wait "$SELFTEST_PID"
selftest_rc=$?
SELFTEST_PID=
cat "$WORK/check_test.out"
[ "$selftest_rc" = 0 ] || fail_setup "the checker's self-test failed (test/nemesis/check_test.py)"

# --- run -------------------------------------------------------------------
T0=$EPOCHREALTIME
for ((i = 0; i < N; i++)); do
    for ((k = 1; k <= CLIENTS; k++)); do
        "$PY" "$NEMESIS_DIR/client.py" "node$i" "$k" single "$WORK/clients/node$i.$k" "$PAUSE_MS" \
            "${NODE_DIR[$i]}" "$PG_PORT" &
        CLIENT_PIDS+=($!)
    done
    for k in "${BATCH_KINDS[@]}"; do
        if [ "$k" = http ]; then
            # In the node's namespace, where its endpoint listens (ip netns
            # exec execs the client: $! is its pid).
            ip netns exec "${N_NS[$i]}" "$PY" "$NEMESIS_DIR/client.py" "node$i" http1 http \
                "$WORK/clients/node$i.http1" "$BATCH_PAUSE_MS" 127.0.0.1 "$HTTP_PORT" "$BATCH" "$TOKEN_FILE" &
        else
            "$PY" "$NEMESIS_DIR/client.py" "node$i" batch1 batch "$WORK/clients/node$i.batch1" "$BATCH_PAUSE_MS" \
                "${NODE_DIR[$i]}" "$PG_PORT" "$BATCH" &
        fi
        CLIENT_PIDS+=($!)
    done
done

# sleep_until S: sleeps until S seconds after T0.
sleep_until() {
    local d
    d=$(awk -v t="$1" -v t0="$T0" -v now="$EPOCHREALTIME" 'BEGIN { d = t0 + t - now; if (d > 0) printf "%.3f", d }')
    [ -z "$d" ] || sleep "$d"
}

# The timeline on fd 3: nothing a fault runs may read it from stdin.
while read -r t what num kind target dur par <&3; do
    sleep_until "$t"
    fault "$what" "$num" "$kind" "$target" "$dur" "$par"
done 3<"$TIMELINE"
sleep_until "$DURATION"

for p in "${CLIENT_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${CLIENT_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
CLIENT_PIDS=()
for ((j = 0; j < S; j++)); do sdk_end "$j" TERM; done
echo "# run took $(elapsed_since "$T0") s"
# The failover node's clock failovers: snowflake_stats counts them since the
# server started (a kill9 or restart fault starts it again), its log since
# the run began.
if [ "$FAILOVER" != none ]; then
    d=${NODE_DIR[$FAILOVER]}
    FO_STATS=$(PG_TIMEOUT=5 pg_val "$d" "SELECT clock_failovers || ' (now on backup worker id ' || coalesce(backup_worker_id::text, 'none') || ')' FROM snowflake_stats" 2>&1 | head -1)
    FO_LOG=$(grep -c 'snowflake clock stepped back: issuing ids under backup worker id' "$d/server.log")
    FO_BACK=$(grep -c 'snowflake back on worker id [0-9]*: released backup worker id' "$d/server.log")
    FO_STEPS=$(grep -c ' start [0-9]* clock_back ' "$FAULT_LOG")
fi

# --- check -----------------------------------------------------------------
# The coordinator's history of the worker keys, now that every fault has
# ended (every member or server is up again).
recorder_stop
if is_zk; then
    zk_dirs=(); for ((i = 0; i < M; i++)); do zk_dirs+=("$WORK/zk/s$i/data"); done
    n_events=$("$PY" "$NEMESIS_DIR/tenures.py" history zookeeper "$WORK/events" "$PREFIX" "$ZK_JAVA" "$ZK_CLASSPATH" \
        "${zk_dirs[@]}")
else
    n_events=$(ip netns exec "$CTL_NS" "$PY" "$NEMESIS_DIR/tenures.py" history etcd "$WORK/events" "$ETCD_ENDPOINTS" "$PREFIX")
fi || BROKEN+=("the coordinator's history of the worker keys could not be read")
echo "# the coordinator's history: ${n_events:-no} changes of worker keys, $(wc -l <"$WORK/polls" 2>/dev/null || echo 0) reads of its revision (zxid)"
# (The command is kept in the work directory: with KEEP_TMP=1, sh check.sh
# there runs the checker again.)
check=("$PY" "$NEMESIS_DIR/check.py" --t0 "$T0" --faults "$FAULT_LOG" --clocks "$CLOCK_LOG"
       --polls "$WORK/polls" --events "$WORK/events" --coordinator "$COORDINATOR" --nodes "$WORK/nodes"
       --epoch-ms "$EPOCH_MS" --layout "$LAYOUT_BITS" "$WORK"/clients/*)
printf '%q ' "${check[@]}" >"$WORK/check.sh"
"${check[@]}"
rc=$?
for b in "${BROKEN[@]}"; do echo "not ok - $b"; rc=1; done
if [ "$FAILOVER" != none ]; then
    echo "# clock failovers on node$FAILOVER (snowflake.clock_backwards = failover): $FO_LOG in its log" \
        "($FO_BACK back on its own worker id), snowflake_stats.clock_failovers at the end: $FO_STATS;" \
        "$FO_STEPS clock_back fault(s) applied"
fi
if [ $rc != 0 ]; then
    echo "# server logs: $(for ((i = 0; i < N; i++)); do printf '%s ' "${NODE_DIR[$i]}/server.log"; done)(KEEP_TMP=1 keeps them)"
fi
echo "# seed $SEED (replay: make nemesis $REPLAY)"
exit $rc
