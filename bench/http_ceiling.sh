#!/bin/bash
# SQL latency beside an HTTP client at the ceiling (issue 19): the latency of
# `SELECT snowflake_nextval()`, one statement at a time from one psql session
# (psql's \timing of each statement)
#   alone                 no HTTP traffic;
#   ceiling               while one HTTP client (wrk, one keep-alive
#                         connection) pulls 10,000-id batches in a loop, with
#                         snowflake.http_max_ids_per_second at its default;
#   no ceiling            the same with the ceiling disabled (0),
# on one instance where HTTP and SQL share worker id 1, and the same three
# (own alone, own ceiling, own no ceiling) on a second instance whose endpoint
# issues under a worker id of its own (snowflake.worker_id 2,
# snowflake.http_worker_id OWN_HTTP_ID; issue 32), the six phases alternating
# within each round (the setting is changed with ALTER SYSTEM and a reload
# between phases), so that every figure is read as a ratio to the same
# instance's "alone" run of the same round. Also counted per phase:
# snowflake_stats.overflow_waits (the node's: both generators) and ids_issued
# over the SQL run, the highest sequence among the SQL session's ids (on the
# second instance it shows whether any overflow wait was SQL's:
# bench/lib/sql_latency.sh), the HTTP requests answered 200 and 429 (wrk runs
# from half a second before the SQL run until it ends).
# Latency comes from psql, not from pgbench's log (bench/lib/sql_latency.sh
# says why).
#
# Usage: bench/http_ceiling.sh OUTDIR   (writes OUTDIR/data/http_ceiling.tsv
#        and OUTDIR/http_ceiling.md; QUICK=1 for a short run). Called by
#        bench/run.sh. Needs the extension installed, wrk, psql, curl.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/test/lib/pg.sh"
. "$ROOT/bench/lib/http_node.sh"
. "$ROOT/bench/lib/sql_latency.sh"
OUT=${1:?usage: bench/http_ceiling.sh OUTDIR}
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then
    CALLS=5000; ROUNDS=1
else
    CALLS=20000; ROUNDS=3
fi
BATCH=10000                  # ids per HTTP request (the endpoint's largest count)
PHASES=(alone own_alone ceiling own_ceiling no_ceiling own_no_ceiling)
OWN_HTTP_ID=1000             # the second instance's snowflake.http_worker_id
command -v wrk >/dev/null || { echo "bench/http_ceiling.sh: wrk not found; run 'make deps' (package wrk)" >&2; exit 1; }
mkdir -p "$OUT/data"
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-http-ceiling.XXXXXX")
chmod 755 "$W"
WRK_PID=""
trap '[ -z "$WRK_PID" ] || kill "$WRK_PID" 2>/dev/null || true; pg_cleanup_all; [ -n "${KEEP_TMP:-}" ] || rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

# Two instances: worker id 1 shared by HTTP and SQL (D1), and worker id 2 with
# the endpoint on OWN_HTTP_ID (D2). snowflake.http_max_ids_per_second is not
# set: its default is the ceiling. sql and val run on the instance $D.
sql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$D" -p "$PG_PORT" -U postgres -d postgres "$@"; }
val() { sql -A -t -c "$1"; }
D1=$(pg_tmpdir)
http_node_start "$D1" bench/http_ceiling.sh "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 1" \
    "autovacuum = off" "log_min_messages = info"
PORT1=$PORT
D2=$(pg_tmpdir)
http_node_start "$D2" bench/http_ceiling.sh "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 2" \
    "snowflake.http_worker_id = $OWN_HTTP_ID" "autovacuum = off" "log_min_messages = info"
PORT2=$PORT
for D in "$D1" "$D2"; do
    sql -c "CREATE EXTENSION snowflake"
    # The first id after start waits for a reservation: not part of any run.
    val "SELECT snowflake_nextval()" >/dev/null
done
for PORT in "$PORT1" "$PORT2"; do curl -s -o /dev/null "http://127.0.0.1:$PORT/v1/ids/batch?count=1"; done
[ "$(D=$D2 val "SELECT http_worker_id FROM snowflake_stats")" = "$OWN_HTTP_ID" ] \
    || { echo "bench/http_ceiling.sh: the second instance does not show http_worker_id $OWN_HTTP_ID" >&2; exit 1; }
D=$D1
CEILING=$(val "SELECT boot_val FROM pg_settings WHERE name = 'snowflake.http_max_ids_per_second'")

# set_ceiling default|0: the setting for the next phase; the HTTP worker
# reads it at the reload (its wait wakes on the signal).
set_ceiling() {
    if [ "$1" = default ]; then
        val "ALTER SYSTEM RESET snowflake.http_max_ids_per_second" >/dev/null
    else
        val "ALTER SYSTEM SET snowflake.http_max_ids_per_second = $1" >/dev/null
    fi
    val "SELECT pg_reload_conf()" >/dev/null
    sleep 1
}

# wrk's Lua script: requests, non-2xx answers, socket errors.
cat >"$W/report.lua" <<'LUA'
done = function(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("@wrk %d %d %d %d\n", summary.requests, summary.duration,
        e.status, e.connect + e.read + e.write + e.timeout))
end
LUA
IDS=$W/sql_ids.txt           # the SQL session's ids of the last run (psql writes it as postgres)
: >"$IDS"
chmod 666 "$IDS"
sql_latency_script "$W/calls.sql" "$CALLS" "$IDS"
chmod 644 "$W/report.lua"

stats() { val "SELECT overflow_waits || ' ' || ids_issued FROM snowflake_stats"; }

# http_ceiling.tsv: round phase setting statements p50_ms p99_ms mean_ms
#   overflow_waits ids_issued seconds http_requests http_seconds http_non_2xx
#   http_socket_errors sql_max_sequence (the HTTP figures over wrk's run, which
#   spans the SQL run)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
printf 'round\tphase\tsetting\tstatements\tp50_ms\tp99_ms\tmean_ms\toverflow_waits\tids_issued\tseconds\thttp_requests\thttp_seconds\thttp_non_2xx\thttp_socket_errors\tsql_max_sequence\n' >"$W/ceiling.tsv"
for r in $(seq 1 "$ROUNDS"); do
    for phase in "${PHASES[@]}"; do
        case $phase in
            own_*) D=$D2; PORT=$PORT2 ;;
            *)     D=$D1; PORT=$PORT1 ;;
        esac
        case ${phase#own_} in
            alone|ceiling) setting=default ;;
            no_ceiling)    setting=0 ;;
        esac
        set_ceiling "$setting"
        shown=$(val "SHOW snowflake.http_max_ids_per_second")
        echo "[http_ceiling] round $r/$ROUNDS, $phase (http_max_ids_per_second = $shown), $CALLS statements on $([ "$D" = "$D1" ] && echo "worker id 1, shared" || echo "worker id 2, the endpoint on $OWN_HTTP_ID")" >&2
        WRK_PID=""
        if [ "${phase#own_}" != alone ]; then
            # Until it is interrupted after the SQL run (wrk reports on SIGINT).
            wrk -t1 -c1 -d600s -s "$W/report.lua" \
                "http://127.0.0.1:$PORT/v1/ids/batch?count=$BATCH" >"$W/wrk_${r}_$phase.out" 2>&1 &
            WRK_PID=$!
            sleep 0.5               # the client is pulling before the SQL run starts
        fi
        read -r ow0 ids0 <<<"$(stats)"
        t0=$(date +%s.%N)
        sql -f "$W/calls.sql" >"$W/sql_${r}_$phase.out"
        t1=$(date +%s.%N)
        read -r ow1 ids1 <<<"$(stats)"
        req=- hsec=- non2xx=- sockerr=-
        if [ -n "$WRK_PID" ]; then
            kill -INT "$WRK_PID"
            wait "$WRK_PID" || true
            WRK_PID=""
            read -r _ req hsec non2xx sockerr <<<"$(grep '^@wrk' "$W/wrk_${r}_$phase.out" || echo "@wrk - - - -")"
            [ "$hsec" = - ] || hsec=$(awk -v us="$hsec" 'BEGIN { printf "%.3f", us / 1e6 }')
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$phase" "$shown" \
            "$(sql_latency_summary "$W/sql_${r}_$phase.out")" $((ow1 - ow0)) $((ids1 - ids0)) \
            "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$req" "$hsec" "$non2xx" "$sockerr" \
            "$(sql_ids_max_sequence "$IDS")" >>"$W/ceiling.tsv"
    done
done
cp "$W/ceiling.tsv" "$OUT/data/http_ceiling.tsv"
printf 'ceiling\t%s\nbatch\t%s\ncalls\t%s\nrounds\t%s\nown_http_id\t%s\nload_start\t%s\nload_end\t%s\n' \
    "$CEILING" "$BATCH" "$CALLS" "$ROUNDS" "$OWN_HTTP_ID" "$LOAD_START" "$(cut -d' ' -f1-3 /proc/loadavg)" \
    >"$OUT/data/http_ceiling_meta.tsv"
/usr/bin/python3 "$ROOT/bench/lib/report.py" http-ceiling "$OUT" >"$OUT/http_ceiling.md"
cat "$OUT/http_ceiling.md"
