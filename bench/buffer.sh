#!/bin/bash
# The ID buffer (issue 32): sdk/node/buffer.js and snowflake_ids.buffer
# refilling from real nodes' HTTP endpoints, measured three ways in one run
# on three throwaway nodes (static worker ids 1, 2, 3, snowflake.http_listen
# on free loopback ports, snowflake.http_max_ids_per_second at its default)
# and HAProxy with docs/haproxy/haproxy.cfg in front of them, and a fourth
# node for part 3 only, not behind HAProxy, the same but for its endpoint on
# a worker id of its own (snowflake.worker_id 4, snowflake.http_worker_id
# OWN_HTTP_ID):
#
#   1 latency   the time of one buffered call, `await buf.nextId()` in Node.js
#               (process.hrtime.bigint()) and `buf.next_id()` in Python
#               (time.perf_counter_ns()), LAT_CALLS calls paced at LAT_RATE a
#               second through HAProxy, so that refills run between the calls
#               (bench/buffer/client.* latency): p50, p99, p99.9 per call.
#               Goal (issue 32): p99 <= 2 us in both.
#   2 pull      ids/s of four buffer clients (two Node.js, two Python) each
#               taking ids as fast as they come through HAProxy for PULL_S
#               seconds (bench/buffer/client.* pull), beside four pgbench
#               clients of `SELECT count(*) FROM snowflake_nextval_batch(10000)`
#               on node 1 for as long (the SQL batch rate, as bench/http.sh
#               measures it), alternating over PULL_ROUNDS rounds.
#   3 sql       `SELECT snowflake_nextval()` latency, one statement at a time
#               (bench/lib/sql_latency.sh, as bench/http_ceiling.sh), on node 1
#               (HTTP and SQL share its worker id) and on node 4 (the endpoint
#               on its own worker id), in eight phases alternating within each
#               of SQL_ROUNDS rounds, four on each node: alone; pull: one
#               Node.js buffer client pulling from that node's endpoint as fast
#               as it can (if it outruns the ceiling: a 429, and it waits out
#               Retry-After-Ms); other node: the same client pulling from node 2
#               (the same kind of CPU load on this machine, no HTTP at the SQL
#               node); burn: CPU burners (bench/buffer/burn.py) using as much
#               CPU as that node's pull phase's client and HTTP worker did, no
#               HTTP at all. Besides overflow_waits (the node's: both
#               generators), the highest sequence among the SQL session's ids:
#               on node 4 SQL's generator has no other caller, so below a
#               millisecond's last it shows no overflow wait was SQL's.
#               Goal (issue 32): p99 <= 1.5x idle with the endpoint on its own
#               worker id, read against the control with the same CPU load.
#
# Prints and writes; asserts nothing. Figures are read as ratios within the
# run (the machine's other work moves every absolute figure).
#
#   bench/buffer.sh [OUTDIR]  default bench/results (bench/results/quick with
#                             QUICK=1; BENCH_OUT=DIR as bench/run.sh). Writes
#                             OUTDIR/buffer.md and OUTDIR/data/buffer_*.tsv;
#                             bench/buffer/report.py OUTDIR writes buffer.md
#                             again from them.
#   QUICK=1                   fewer calls and one round of each (about 40 s)
#   KEEP_TMP=1                keep the temporary directory (logs, outputs)
#
# Called by bench/run.sh as suite 11. Needs the extension installed, psql,
# pgbench, haproxy, curl, node and /usr/bin/python3.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/test/lib/pg.sh"
. "$ROOT/bench/lib/http_node.sh"
. "$ROOT/bench/lib/sql_latency.sh"
. "$ROOT/test/lib/haproxy.sh"
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then MODE=quick; else MODE=full; fi
if [ "$MODE" = full ]; then
    DEFAULT_OUT=${BENCH_OUT:-$ROOT/bench/results}
    LAT_CALLS=1000000  # timed calls per language
    PULL_S=5           # seconds of each pull and SQL batch run
    PULL_ROUNDS=3
    SQL_CALLS=200000   # statements per phase: several seconds, many of the pull's 429 cycles
    SQL_ROUNDS=3
else
    DEFAULT_OUT=${BENCH_OUT:-$ROOT/bench/results/quick}
    LAT_CALLS=200000
    PULL_S=2
    PULL_ROUNDS=1
    SQL_CALLS=20000
    SQL_ROUNDS=1
fi
OUT=${1:-$DEFAULT_OUT}
LAT_RATE=100000        # calls a second in the latency runs
SQL_BATCH=10000        # ids per snowflake_nextval_batch() statement (the buffer's largest batch)
SQL_CLIENTS=4
PULL_CLIENTS=(node1 node2 python1 python2)
# Part 3's phases, alternating in this order: each node's alone, pull,
# other node and burn (own_*: node 4, the endpoint on its own worker id).
SQL_PHASES=(alone own_alone pull own_pull other_node own_other_node burn own_burn)
OWN_HTTP_ID=1000       # node 4's snowflake.http_worker_id, distinct from every worker id here
PY=/usr/bin/python3
CLIENT_JS=$ROOT/bench/buffer/client.js
CLIENT_PY=$ROOT/bench/buffer/client.py
BURN=$ROOT/bench/buffer/burn.py
TICK=$(getconf CLK_TCK)

for tool in haproxy curl node "$PY"; do
    command -v "$tool" >/dev/null || { echo "bench/buffer.sh: $tool not found; run 'make deps'" >&2; exit 1; }
done
[ -x "$PGBIN/pgbench" ] || { echo "bench/buffer.sh: $PGBIN/pgbench not found" >&2; exit 1; }

START_S=$(date +%s)
step() { printf '[bench buffer %3ds] %s\n' $(($(date +%s) - START_S)) "$*"; }
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-bench-buffer.XXXXXX")
chmod 755 "$W"
HAPROXY_PID=
BG_PIDS=()
cleanup() {
    local rc=$? p
    for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$HAPROXY_PID" ]; then kill "$HAPROXY_PID" 2>/dev/null || true; fi
    for p in "${BG_PIDS[@]}" $HAPROXY_PID; do wait "$p" 2>/dev/null || true; done
    pg_cleanup_all
    if [ -n "${KEEP_TMP:-}" ]; then echo "bench/buffer.sh: temporary files kept in $W" >&2; else rm -rf "$W"; fi
    [ $rc = 0 ] || echo "bench/buffer.sh: FAILED (exit $rc); every server it started was stopped" >&2
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT/data"

# --- three nodes and HAProxy ----------------------------------------------------------
NODE_DIRS=()
NODE_PORTS=()
for n in 1 2 3; do
    step "setup: node $n (snowflake.worker_id = $n, the HTTP endpoint on a free loopback port)"
    dir=$(pg_tmpdir)
    http_node_start "$dir" bench/buffer.sh "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = $n" \
        "autovacuum = off" "log_min_messages = info"
    NODE_DIRS+=("$dir")
    NODE_PORTS+=("$PORT")
    pg_psql "$dir" -c "CREATE EXTENSION snowflake"
    # The first id after start waits for a reservation: not part of any run.
    curl -s -o /dev/null "http://127.0.0.1:$PORT/v1/ids/batch?count=1"
done
step "setup: node 4 (snowflake.worker_id = 4, snowflake.http_worker_id = $OWN_HTTP_ID), not behind HAProxy"
D4=$(pg_tmpdir)
http_node_start "$D4" bench/buffer.sh "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 4" \
    "snowflake.http_worker_id = $OWN_HTTP_ID" "autovacuum = off" "log_min_messages = info"
PORT4=$PORT
pg_psql "$D4" -c "CREATE EXTENSION snowflake"
curl -s -o /dev/null "http://127.0.0.1:$PORT4/v1/ids/batch?count=1"
[ "$(pg_val "$D4" "SELECT http_worker_id FROM snowflake_stats")" = "$OWN_HTTP_ID" ] \
    || { echo "bench/buffer.sh: node 4 does not show http_worker_id $OWN_HTTP_ID" >&2; exit 1; }
D1=${NODE_DIRS[0]}
CEILING=$(pg_val "$D1" "SELECT boot_val FROM pg_settings WHERE name = 'snowflake.http_max_ids_per_second'")
step "setup: HAProxy with docs/haproxy/haproxy.cfg before the three nodes"
haproxy_start "$ROOT/docs/haproxy/haproxy.cfg" "$W" "${NODE_PORTS[@]}" \
    || { echo "bench/buffer.sh: haproxy did not start" >&2; cat "$W/haproxy.log" >&2; exit 1; }
LB=http://127.0.0.1:$LB_PORT
for _ in $(seq 100); do
    [ "$("$ROOT/test/haproxy/lb.py" status "$LB_SOCK" node1 node2 node3 2>/dev/null | sort -u)" = UP ] && break
    sleep 0.1
done

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
step "mode $MODE; load average $LOAD_START on $(nproc) cores"

# client_cmd NAME: CMD=(the interpreter and bench/buffer/client.js or .py) for
# a client named node* or python*; run as "${CMD[@]}" ... &, so that $! is the
# client's own pid (its CPU time is read from it, and cleanup stops it).
client_cmd() {
    case $1 in
        node*) CMD=(node "$CLIENT_JS") ;;
        python*) CMD=("$PY" "$CLIENT_PY") ;;
    esac
}
now_ms() { date +%s%3N; }
# cpu_ticks PID...: user + system clock ticks of the processes (every thread).
cpu_ticks() {
    local p t=0 s
    for p in "$@"; do
        s=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)
        t=$((t + s))
    done
    echo "$t"
}
http_worker_pid() { pgrep -P "$(pg_postmaster_pid "$1")" -f 'snowflake HTTP endpoint' | head -1; }
node_ids() { pg_val "$1" "SELECT ids_issued FROM snowflake_stats"; }
# tsv_lines ROUND NAME FILE: FILE's KEY<TAB>VALUE lines with the round and name in front.
tsv_lines() { awk -v r="$1" -v n="$2" -F'\t' 'NF == 2 { print r "\t" n "\t" $1 "\t" $2 }' "$3"; }

# =============================================================================
# 1: the latency of a buffered call.
# =============================================================================
printf 'round\tclient\tkey\tvalue\n' >"$W/latency.tsv"
for lang in node python; do
    step "1 latency: $lang, $LAT_CALLS calls at $LAT_RATE a second through HAProxy"
    client_cmd "$lang"
    "${CMD[@]}" latency "$LB" "$LAT_CALLS" "$LAT_RATE" >"$W/latency_$lang.out" 2>"$W/latency_$lang.err" \
        || { cat "$W/latency_$lang.err" >&2; exit 1; }
    tsv_lines 1 "$lang" "$W/latency_$lang.out" >>"$W/latency.tsv"
done

# =============================================================================
# 2: four buffer clients through HAProxy, then SQL batches on node 1.
# =============================================================================
echo "SELECT count(*) FROM snowflake_nextval_batch($SQL_BATCH);" >"$W/batch.sql"
chmod 644 "$W/batch.sql"
printf 'round\tclient\tkey\tvalue\n' >"$W/pull.tsv"
for r in $(seq 1 "$PULL_ROUNDS"); do
    step "2 pull: round $r/$PULL_ROUNDS: ${PULL_CLIENTS[*]} through HAProxy, $PULL_S s"
    start=$(($(now_ms) + 2000))      # every client has its first batch by then
    pids=()
    for c in "${PULL_CLIENTS[@]}"; do
        client_cmd "$c"
        "${CMD[@]}" pull "$LB" "$start" $((start + PULL_S * 1000)) "$W/no-stop" >"$W/pull_${r}_$c.out" 2>"$W/pull_${r}_$c.err" &
        pids+=($!)
        BG_PIDS+=($!)
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || { cat "$W/pull_${r}_${PULL_CLIENTS[$i]}.err" >&2; exit 1; }
    done
    BG_PIDS=()
    for c in "${PULL_CLIENTS[@]}"; do tsv_lines "$r" "$c" "$W/pull_${r}_$c.out" >>"$W/pull.tsv"; done
    step "2 pull: round $r/$PULL_ROUNDS: SQL, pgbench -c $SQL_CLIENTS on node 1, snowflake_nextval_batch($SQL_BATCH), $PULL_S s"
    "$PGBIN/pgbench" -n -h "$D1" -p "$PG_PORT" -U postgres -c "$SQL_CLIENTS" -j "$SQL_CLIENTS" -T "$PULL_S" \
        -f "$W/batch.sql" postgres >"$W/pgbench_$r.out" 2>&1 || { cat "$W/pgbench_$r.out" >&2; exit 1; }
    awk -v r="$r" -v b="$SQL_BATCH" '/^tps = / { printf "%s\tsql\tids_per_s\t%.0f\n", r, $3 * b }
        /^number of transactions actually processed/ { printf "%s\tsql\tstatements\t%s\n", r, $NF }' \
        "$W/pgbench_$r.out" >>"$W/pull.tsv"
done

# =============================================================================
# 3: SQL latency beside a buffer client, and the controls: on node 1 (HTTP and
# SQL share its worker id) and on node 4 (the endpoint on its own worker id).
# =============================================================================
IDS=$W/sql_ids.txt                   # the SQL session's ids of the last run (psql writes it as postgres)
: >"$IDS"
chmod 666 "$IDS"
sql_latency_script "$W/calls.sql" "$SQL_CALLS" "$IDS"
STOP=$W/stop
declare -A PULL_CORES                # a node's pull phase's load in this round, for its burn phase
printf 'round\tphase\tsql_node\tstatements\tp50_ms\tp99_ms\tmean_ms\toverflow_waits\tsql_max_sequence\tids_sql_node\tids_pulled_node\tseconds\tload_cores\tload_pids\tclient_ids_per_s\tclient_429\n' \
    >"$W/sql.tsv"
for r in $(seq 1 "$SQL_ROUNDS"); do
    for phase in "${SQL_PHASES[@]}"; do
        # The SQL node (1 or 4) and, for a client phase, the node it pulls from.
        case $phase in
            own_*) sql_node=4; sql_dir=$D4 ;;
            *)     sql_node=1; sql_dir=$D1 ;;
        esac
        rm -f "$STOP"
        load_pids=()
        pulled_dir=
        case ${phase#own_} in
            pull|other_node)
                if [ "${phase#own_}" = other_node ]; then
                    pulled_dir=${NODE_DIRS[1]}; port=${NODE_PORTS[1]}
                elif [ "$sql_node" = 4 ]; then
                    pulled_dir=$D4; port=$PORT4
                else
                    pulled_dir=$D1; port=${NODE_PORTS[0]}
                fi
                client_cmd node
                "${CMD[@]}" pull "http://127.0.0.1:$port" "$(now_ms)" $(($(now_ms) + 600000)) "$STOP" \
                    >"$W/sql_client_${r}_$phase.out" 2>"$W/sql_client_${r}_$phase.err" &
                BG_PIDS+=($!)
                load_pids=($! "$(http_worker_pid "$pulled_dir")")
                [ -n "${load_pids[1]}" ] || { echo "bench/buffer.sh: no HTTP worker in $pulled_dir" >&2; exit 1; }
                sleep 1                   # the client is pulling before the SQL run starts
                ;;
            burn)
                # As many burners as the same node's pull phase of this round
                # used cores (its client and that node's HTTP worker), each
                # busy that share.
                read -r k duty <<<"$(awk -v c="${PULL_CORES[$sql_node]}" 'BEGIN { k = int(c) + (c > int(c)); if (k < 1) k = 1; printf "%d %.3f", k, c / k }')"
                for _ in $(seq 1 "$k"); do
                    "$PY" "$BURN" "$duty" "$STOP" &
                    load_pids+=($!)
                    BG_PIDS+=($!)
                done
                sleep 0.5
                ;;
        esac
        step "3 sql: round $r/$SQL_ROUNDS, $phase: $SQL_CALLS statements on node $sql_node"
        c0=$(cpu_ticks "${load_pids[@]}")
        idsa=$(node_ids "$sql_dir"); idpa=-
        [ -z "$pulled_dir" ] || [ "$pulled_dir" = "$sql_dir" ] || idpa=$(node_ids "$pulled_dir")
        ow0=$(pg_val "$sql_dir" "SELECT overflow_waits FROM snowflake_stats")
        t0=$(date +%s.%N)
        pg_psql "$sql_dir" -f "$W/calls.sql" >"$W/sql_${r}_$phase.out"
        t1=$(date +%s.%N)
        ow1=$(pg_val "$sql_dir" "SELECT overflow_waits FROM snowflake_stats")
        idsb=$(node_ids "$sql_dir"); ids_pulled=-
        [ "$idpa" = - ] || ids_pulled=$(($(node_ids "$pulled_dir") - idpa))
        [ "$pulled_dir" != "$sql_dir" ] || ids_pulled=$((idsb - idsa))
        c1=$(cpu_ticks "${load_pids[@]}")
        touch "$STOP"
        for p in "${BG_PIDS[@]}"; do wait "$p" || { echo "bench/buffer.sh: a load process of phase $phase failed" >&2; cat "$W"/sql_client_*.err >&2; exit 1; }; done
        BG_PIDS=()
        cores=$(awk -v c=$((c1 - c0)) -v t="$TICK" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", c / t / (b - a) }')
        [ "${phase#own_}" != pull ] || PULL_CORES[$sql_node]=$cores
        client_rate=- client_429=-
        if [ -f "$W/sql_client_${r}_$phase.out" ]; then
            client_rate=$(awk -F'\t' '$1 == "ids_per_s" { print $2 }' "$W/sql_client_${r}_$phase.out")
            client_429=$(awk -F'\t' '$1 == "last_error" { print ($2 ~ /429/ ? "yes" : "no") }' "$W/sql_client_${r}_$phase.out")
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$phase" "$sql_node" \
            "$(sql_latency_summary "$W/sql_${r}_$phase.out")" $((ow1 - ow0)) "$(sql_ids_max_sequence "$IDS")" \
            $((idsb - idsa)) "$ids_pulled" \
            "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$cores" "${#load_pids[@]}" "$client_rate" "$client_429" \
            >>"$W/sql.tsv"
    done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the report ----------------------------------------------------------------------
cp "$W/latency.tsv" "$OUT/data/buffer_latency.tsv"
cp "$W/pull.tsv" "$OUT/data/buffer_pull.tsv"
cp "$W/sql.tsv" "$OUT/data/buffer_sql.tsv"
{
    printf 'MODE\t%s\nLAT_CALLS\t%s\nLAT_RATE\t%s\nPULL_S\t%s\nPULL_ROUNDS\t%s\n' \
        "$MODE" "$LAT_CALLS" "$LAT_RATE" "$PULL_S" "$PULL_ROUNDS"
    printf 'SQL_CALLS\t%s\nSQL_ROUNDS\t%s\nSQL_BATCH\t%s\nSQL_CLIENTS\t%s\nCEILING\t%s\n' \
        "$SQL_CALLS" "$SQL_ROUNDS" "$SQL_BATCH" "$SQL_CLIENTS" "$CEILING"
    printf 'OWN_HTTP_ID\t%s\n' "$OWN_HTTP_ID"
    printf 'LOAD_START\t%s\nLOAD_END\t%s\nELAPSED_S\t%s\n' "$LOAD_START" "$LOAD_END" $(($(date +%s) - START_S))
    printf 'DATE_UTC\t%s\n' "$(date -u -d "@$START_S" '+%Y-%m-%d %H:%M UTC')"
    printf 'COMMIT\t%s\n' "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    printf 'DIRTY\t%s\n' "$(git -C "$ROOT" status --porcelain -- sdk bench/buffer bench/buffer.sh bench/lib 2>/dev/null | wc -l)"
    printf 'NODE\t%s\nPYTHON\t%s\n' "$(node --version)" "$("$PY" --version 2>&1)"
    printf 'HAPROXY\t%s\n' "$(haproxy -v 2>/dev/null | head -1)"
    printf 'PG_VERSION\t%s\n' "$(pg_val "$D1" "SHOW server_version")"
} >"$OUT/data/buffer_meta.tsv"
"$PY" "$ROOT/bench/buffer/report.py" "$OUT"
step "done in $(($(date +%s) - START_S)) s: ${OUT#"$ROOT"/}/buffer.md; load average $LOAD_END"
