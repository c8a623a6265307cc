#!/bin/bash
# Benchmarks of snowflake against PostgreSQL's own id generators, all measured
# side by side in one run on one throwaway instance, so that every figure is
# read as a ratio to a baseline of the same run. Method: docs/benchmarks.md.
#
#   make bench          (= bench/run.sh after build + install) full run, about
#                       8 minutes on 2 cores, suite 10 about 3 more and
#                       suite 11 about 4 more.
#                       Writes bench/results/latest.md, bench/results/*.png,
#                       bench/results/data/*.tsv and the generated results
#                       section of docs/benchmarks.md.
#   QUICK=1 make bench  about 1 minute, smaller sizes, fewer rounds. Writes
#                       bench/results/quick/ only (not committed, docs untouched).
#   BENCH_OUT=DIR       write the results somewhere else (docs untouched).
#   KEEP_TMP=1          keep the instance directory and raw logs.
#
# Suites: 1 calls (one backend), 2 concurrency (pgbench 1-8 clients),
# 3 inserts (PK index several times shared_buffers), 4 range scan by time,
# 5 the core micro-benchmark (build/core_bench) when it builds, 6 sporadic
# calls against a sequence (bench/sporadic.sh, fsync = on), 7 leasing on and
# off, from etcd and from ZooKeeper (bench/lease.sh), 8 ids over HTTP
# against ids over SQL (bench/http.sh, wrk and pgbench), 9 SQL latency beside
# an HTTP client at the HTTP ids ceiling and without it (bench/http_ceiling.sh),
# 10 the embedded generator (libsnowflake_ids and its Node.js and Python
# bindings) beside npm's snowflake packages and a pure-Python one (bench/sdk.sh),
# 11 the ID buffer: a buffered call's latency in Node.js and Python, four
# buffer clients through HAProxy before three nodes beside SQL batches, and
# SQL latency beside a buffer client against controls (bench/buffer.sh).
# The report (tables, plots, the docs section) is bench/lib/report.py.
#
# Needs the extension installed, psql, pgbench, gnuplot, awk and /usr/bin/python3
# (standard library only); g++ and Google Benchmark for suite 5, etcd (and
# ZooKeeper, measured when installed) for suite 7, wrk and curl for suites 8 and 9,
# cc, node and npm (the registry, for three npm packages installed in a
# temporary directory) for suite 10, haproxy, curl and node for suite 11.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
# shellcheck source=../test/lib/pg.sh
. "$ROOT/test/lib/pg.sh"

if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then MODE=quick; else MODE=full; fi

# --- sizes -------------------------------------------------------------------
SHARED_BUFFERS=16MB
SHARED_BUFFERS_BYTES=$((16 * 1024 * 1024))
PY=/usr/bin/python3
CONC_CLIENTS=(1 2 4 8)
CONC_IDS=100000              # ids per pgbench statement (suite 2)
INS_BATCH=1000               # rows per INSERT statement (suite 3)
INS_CLIENTS=2
if [ "$MODE" = full ]; then
    CALL_N=1000000           # ids per statement, suite 1
    CALL_N_SLOW=200000       # ... for gen_random_uuid(), microseconds per call
    CALL_ROUNDS=7
    CONC_SECONDS=5
    INS_ROWS=3000000         # per table
    INS_CHUNKS=6
    INS_BIN=0.5              # seconds per point of the rows/s plot
    SCAN_RUNS=7
    CORE_MIN_TIME=0.3
    OUT=${BENCH_OUT:-$BENCH/results}
else
    CALL_N=200000
    CALL_N_SLOW=50000
    CALL_ROUNDS=3
    CONC_SECONDS=1
    INS_ROWS=600000
    INS_CHUNKS=3
    INS_BIN=0.25
    SCAN_RUNS=3
    CORE_MIN_TIME=0.05
    OUT=${BENCH_OUT:-$BENCH/results/quick}
fi
UPDATE_DOCS=no
if [ "$MODE" = full ] && [ -z "${BENCH_OUT:-}" ]; then UPDATE_DOCS=yes; fi

PSQL=$PGBIN/psql
PGBENCH=$PGBIN/pgbench
command -v gnuplot >/dev/null || { echo "bench: gnuplot not found; run 'make deps' (package gnuplot-nox)" >&2; exit 1; }
[ -x "$PY" ] || { echo "bench: $PY not found; run 'make deps' (package python3)" >&2; exit 1; }
[ -x "$PGBENCH" ] || { echo "bench: $PGBENCH not found" >&2; exit 1; }

# --- progress, work dir, cleanup --------------------------------------------
START_S=$(date +%s)
step() { printf '[bench %3ds] %s\n' $(($(date +%s) - START_S)) "$*"; }

W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-bench.XXXXXX")
D=""
BG_PID=""
cleanup() {
    local rc=$?
    if [ -n "$BG_PID" ]; then kill "$BG_PID" 2>/dev/null || true; fi
    pg_cleanup_all
    if [ -n "${KEEP_TMP:-}" ]; then
        echo "bench: raw logs kept in $W" >&2
    else
        rm -rf "$W"
    fi
    [ $rc = 0 ] || echo "bench: FAILED (exit $rc); the instance was stopped" >&2
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sql() { "$PSQL" -X -q -v ON_ERROR_STOP=1 -h "$D" -p "$PG_PORT" -U postgres -d postgres "$@"; }
val() { sql -A -t -c "$1"; }
now_s() { date +%s.%N; }
# report ARGS...: bench/lib/report.py (percentiles, commas, the report).
report() { "$PY" "$BENCH/lib/report.py" "$@"; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a - b }'; }
# sched_snap PID...: "pid on_cpu_ns runqueue_wait_ns" per process still
# there (/proc/PID/schedstat), one per line.
sched_snap() {
    local p
    for p in "$@"; do
        if [ -r "/proc/$p/schedstat" ]; then echo "$p $(cat "/proc/$p/schedstat" 2>/dev/null)"; fi
    done
}
# new_clients: pids of the postmaster ($pm)'s client backends that were not
# there before the run ($old_pids).
new_clients() {
    local p
    for p in $(pgrep -P "$pm" -f '^postgres: postgres postgres \[local\]' || true); do
        case "$old_pids " in *" $p "*) ;; *) printf ' %s' "$p" ;; esac
    done
}
# Waits until no other client backend is connected, so that the statistics
# of pgbench's backends (flushed when they exit) are complete.
wait_clients_gone() {
    local i
    for i in $(seq 1 100); do
        [ "$(val "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" = 0 ] && break
        sleep 0.05
    done
    sleep 0.1
}

mkdir -p "$OUT/data"
rm -f "$OUT"/*.png "$OUT"/data/*.tsv "$OUT"/data/*.csv

step "mode $MODE; results to ${OUT#$ROOT/}"

# --- instance ----------------------------------------------------------------
step "setup: throwaway instance (shared_buffers=$SHARED_BUFFERS, snowflake preloaded, worker_id 1)"
D=$(pg_tmpdir)
pg_init "$D" \
    "shared_preload_libraries = 'snowflake'" \
    "snowflake.worker_id = 1" \
    "shared_buffers = $SHARED_BUFFERS" \
    "max_connections = 40" \
    "autovacuum = off" \
    "log_min_messages = warning"
pg_start "$D" || { cat "$D/server.log" >&2; exit 1; }
sql <<'SQL'
CREATE EXTENSION snowflake;
CREATE SEQUENCE bench_seq_c1 CACHE 1;
CREATE SEQUENCE bench_seq_c100 CACHE 100;
CREATE TABLE bench_ahead (suite text, clients int, lead_us bigint);
SQL

PG_VERSION_STR=$(val "SELECT version()")
SETTINGS=$(val "SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers','max_wal_size','checkpoint_timeout','fsync','synchronous_commit','full_page_writes','autovacuum','wal_level')")
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
if awk -v l="${LOAD_START%% *}" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
    step "warning: load average $LOAD_START on $(nproc) cores: other work shares the CPUs; absolute figures will be low, compare ratios"
fi

# =============================================================================
# Suite 1: calls, one backend.
# =============================================================================
CALL_KEYS=(floor seq1 seq100 v4 sf v7 batch)
declare -A CALL_EXPR=(
    [floor]="now()"
    [seq1]="nextval('bench_seq_c1')"
    [seq100]="nextval('bench_seq_c100')"
    [v4]="gen_random_uuid()"
    [sf]="snowflake_nextval()"
    [v7]="uuidv7()"
    [batch]="snowflake_nextval_batch(N)"
)
declare -A CALL_LABEL=(
    [floor]="now() (executor floor)"
    [seq1]="nextval(), sequence CACHE 1"
    [seq100]="nextval(), sequence CACHE 100"
    [v4]="gen_random_uuid()"
    [sf]="snowflake_nextval()"
    [v7]="uuidv7()"
    [batch]="snowflake_nextval_batch(N)"
)
# PostgreSQL 18's own uuidv7(), measured beside the extension's (pg_init puts
# pg_catalog last on the search path: the unqualified uuidv7() is ours).
if [ "$(val "SHOW server_version_num")" -ge 180000 ]; then
    CALL_KEYS+=(v7core)
    CALL_EXPR[v7core]="pg_catalog.uuidv7()"
    CALL_LABEL[v7core]="PostgreSQL 18's pg_catalog.uuidv7()"
fi
call_n() { if [ "$1" = v4 ]; then echo "$CALL_N_SLOW"; else echo "$CALL_N"; fi; }
# call_sql FORM KEY N: the statement that makes N values.
#   ps:   SELECT count(x) FROM (SELECT EXPR AS x, generate_series(1, N)) s
#         (ProjectSet: the series is produced value per call, nothing stored)
#   from: SELECT count(EXPR) FROM generate_series(1, N)
#         (Function Scan: the series is first materialized in a tuplestore)
call_sql() {
    local form=$1 key=$2 n=$3
    if [ "$key" = batch ]; then
        if [ "$form" = ps ]; then
            echo "SELECT count(x) FROM (SELECT snowflake_nextval_batch($n) AS x) s;"
        else
            echo "SELECT count(x) FROM snowflake_nextval_batch($n) AS x;"
        fi
    elif [ "$form" = ps ]; then
        echo "SELECT count(x) FROM (SELECT ${CALL_EXPR[$key]} AS x, generate_series(1, $n)) s;"
    else
        echo "SELECT count(${CALL_EXPR[$key]}) FROM generate_series(1, $n);"
    fi
}

step "suite 1/5 calls: $CALL_ROUNDS interleaved rounds of ${#CALL_KEYS[@]} expressions x 2 statement forms, one backend"
# Around each timed statement the script records, untimed, the backend's
# /proc/PID/schedstat (nanoseconds on a CPU, nanoseconds waiting on a run
# queue) and, for the snowflake generators, snowflake_stats.overflow_waits.
{
    echo 'SELECT pg_backend_pid() AS bpid \gset'
    echo '\setenv BENCH_BPID :bpid'
    echo '\timing on'
    echo '\o /dev/null'
    for key in "${CALL_KEYS[@]}"; do      # warm-up, not recorded
        echo "\\echo @warmup"; call_sql ps "$key" 10000
        echo "\\echo @warmup"; call_sql from "$key" 10000
    done
    for r in $(seq 1 "$CALL_ROUNDS"); do
        echo "\\warn [bench]        calls round $r/$CALL_ROUNDS"
        for key in "${CALL_KEYS[@]}"; do
            n=$(call_n "$key")
            for form in ps from; do
                echo 'SELECT overflow_waits AS ow FROM snowflake_stats \gset'
                echo '\echo @ow0 :ow'
                echo '\! awk '"'"'{ print "@s0", $1, $2 }'"'"' /proc/$BENCH_BPID/schedstat'
                echo "\\echo @$form $key $r $n"
                call_sql "$form" "$key" "$n"
                echo '\! awk '"'"'{ print "@s1", $1, $2 }'"'"' /proc/$BENCH_BPID/schedstat'
                echo 'SELECT overflow_waits AS ow FROM snowflake_stats \gset'
                echo '\echo @ow1 :ow'
                echo '\echo @end'
            done
        done
    done
} >"$W/calls.sql"
sql -f "$W/calls.sql" >"$W/calls.out"
# calls.tsv: form key round n ms cpu_ns runqueue_wait_ns overflow_waits
awk '/^@(ps|from) / { split($0, a, " "); tag = substr(a[1], 2) "\t" a[2] "\t" a[3] "\t" a[4]; want = 1; next }
     /^@ow0 / { ow0 = $2; next }
     /^@ow1 / { ow1 = $2; next }
     /^@s0 / { c0 = $2; w0 = $3; next }
     /^@s1 / { c1 = $2; w1 = $3; next }
     /^Time:/ && want { ms = $2; want = 0; next }
     /^@end/ && tag != "" { printf "%s\t%s\t%.0f\t%.0f\t%.0f\n", tag, ms, c1 - c0, w1 - w0, ow1 - ow0; tag = "" }' \
    "$W/calls.out" >"$OUT/data/calls.tsv"

# Ids ahead of the clock: the newest id's time minus clock_timestamp() read
# right after the statement made its ids (the outer SELECT runs after the
# aggregate). Snowflake ids carry the start of their millisecond, so any
# positive value means an id from a millisecond the clock had not reached.
step "suite 1/5 calls: ids-ahead-of-clock checks (snowflake_nextval, batch, uuidv7)"
{
    echo '\pset format unaligned'
    echo '\pset tuples_only on'
    for r in $(seq 1 "$CALL_ROUNDS"); do
        echo "SELECT 'sf', extract(epoch FROM snowflake_timestamp(max(x)) - clock_timestamp()) * 1000 FROM (SELECT snowflake_nextval() AS x, generate_series(1, $CALL_N)) s;"
        echo "SELECT 'batch', extract(epoch FROM snowflake_timestamp(max(x)) - clock_timestamp()) * 1000 FROM (SELECT snowflake_nextval_batch($CALL_N) AS x) s;"
        echo "SELECT 'v7', extract(epoch FROM max(uuidv7_timestamp(x)) - clock_timestamp()) * 1000 FROM (SELECT uuidv7() AS x, generate_series(1, $CALL_N)) s;"
    done
} >"$W/lead.sql"
sql -f "$W/lead.sql" | tr '|' '\t' >"$OUT/data/calls_lead.tsv"
# uuidv7() from a fresh backend, one statement: how far ahead one burst gets.
V7_FRESH_LEAD=$(val "SELECT round((extract(epoch FROM max(uuidv7_timestamp(x)) - clock_timestamp()) * 1000)::numeric, 1) FROM (SELECT uuidv7() AS x, generate_series(1, $CALL_N)) s")

# =============================================================================
# Suite 2: concurrency, pgbench.
# =============================================================================
CONC_KEYS=(sf seq1 v4 v7)
declare -A CONC_LABEL=([sf]="snowflake_nextval()" [seq1]="nextval(), CACHE 1" [v4]="gen_random_uuid()" [v7]="uuidv7()")
cat >"$W/conc_sf.sql" <<'SQL'
SELECT count(x) AS n, (extract(epoch FROM snowflake_timestamp(max(x)) - clock_timestamp()) * 1000000)::bigint AS lead_us FROM (SELECT snowflake_nextval() AS x, generate_series(1, :n)) s \gset
\if :lead_us > 0
INSERT INTO bench_ahead VALUES ('concurrency', :clients, :lead_us);
\endif
SQL
echo "SELECT count(x) FROM (SELECT nextval('bench_seq_c1') AS x, generate_series(1, :n)) s;" >"$W/conc_seq1.sql"
echo "SELECT count(x) FROM (SELECT gen_random_uuid() AS x, generate_series(1, :n)) s;" >"$W/conc_v4.sql"
echo "SELECT count(x) FROM (SELECT uuidv7() AS x, generate_series(1, :n)) s;" >"$W/conc_v7.sql"

: >"$OUT/data/concurrency.tsv"
for c in "${CONC_CLIENTS[@]}"; do          # clients outer, generators inner: interleaved
    for key in "${CONC_KEYS[@]}"; do
        step "suite 2/5 concurrency: ${CONC_LABEL[$key]}, $c client(s), ${CONC_SECONDS}s, $CONC_IDS ids per statement"
        wait_clients_gone                 # the previous run's backends have exited
        before=$(val "SELECT ids_issued || ' ' || overflow_waits FROM snowflake_stats")
        pm=$(pg_postmaster_pid "$D")
        # Backends still exiting are not pgbench's new ones.
        old_pids=" $(pgrep -P "$pm" -f '^postgres: postgres postgres \[local\]' | tr '\n' ' ' || true)"
        t0=$(now_s)
        "$PGBENCH" -n -h "$D" -p "$PG_PORT" -U postgres -c "$c" -j "$c" -T "$CONC_SECONDS" \
            -D n="$CONC_IDS" -D clients="$c" -f "$W/conc_$key.sql" \
            --log --log-prefix="$W/conc_${key}_$c" postgres >"$W/conc_${key}_$c.out" 2>&1 &
        BG_PID=$!
        # The backends' schedstat over the run but its first 0.3 s and last 1 s:
        # how much of the time they were on a CPU, and how much they waited
        # for one. The backends are found as the postmaster's children with
        # a client's process title (no query: psql would wait for a CPU too).
        for i in $(seq 1 40); do
            sleep 0.05
            [ "$(new_clients | wc -w)" -ge "$c" ] && break
        done
        sleep 0.3
        pids=$(new_clients)
        sched_snap $pids >"$W/sched0_${key}_$c.txt"; w0=$(now_s)
        # pgbench's -T clock starts before its connections, so clients may
        # finish up to the connection time before t0 + T: stop 1 s early.
        sleep "$(awk -v t0="$t0" -v now="$w0" -v t="$CONC_SECONDS" 'BEGIN { d = t0 + t - (t >= 3 ? 1 : 0.3) - now; print (d > 0 ? d : 0) }')"
        sched_snap $pids >"$W/sched1_${key}_$c.txt"; w1=$(now_s)
        wait "$BG_PID" || { BG_PID=""; cat "$W/conc_${key}_$c.out" >&2; exit 1; }
        BG_PID=""
        t1=$(now_s)
        # Averaged over the backends there at both readings that ran in
        # between (which leaves out pgbench's own short setup connection);
        # "-" unless all C clients are among them (a run too short for the
        # margins, as QUICK's at 4 and 8 clients can be).
        sched=$(awk -v t="$(sub "$w1" "$w0")" -v c="$c" '
            FNR == NR { c0[$1] = $2; q0[$1] = $3; next }
            ($1 in c0) && $2 - c0[$1] > 0.01 * t * 1e9 { n++; dc += $2 - c0[$1]; dq += $3 - q0[$1] }
            END { if (n < c || t <= 0) printf "-\t-"; else printf "%.3f\t%.3f", dc / 1e9 / t / n, dq / 1e9 / t / n }' \
            "$W/sched0_${key}_$c.txt" "$W/sched1_${key}_$c.txt")
        after=$(val "SELECT ids_issued || ' ' || overflow_waits FROM snowflake_stats")
        tps=$(awk '/^tps = / { print $3 }' "$W/conc_${key}_$c.out")
        tx=$(awk -F': ' '/^number of transactions actually processed/ { print $2 }' "$W/conc_${key}_$c.out")
        # Per-transaction latencies (microseconds, field 3) of every thread's log.
        lat=$(cat "$W/conc_${key}_$c".[0-9]* | awk '{ printf "%.3f\n", $3 / 1000 }' | report percentiles 50 99 |
            awk -F'\t' '{ printf "%.3f\t%.3f", $1, $2 }')
        read -r b_ids b_ow <<<"$before"
        read -r a_ids a_ow <<<"$after"
        # concurrency.tsv: key clients statements tps p50_ms p99_ms ids_issued_delta
        # overflow_waits_delta wall_s on_cpu_per_client runqueue_wait_per_client
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$key" "$c" "$tx" "$tps" "$lat" \
            "$((a_ids - b_ids))" "$((a_ow - b_ow))" "$(sub "$t1" "$t0")" "$sched" >>"$OUT/data/concurrency.tsv"
    done
done
CONC_AHEAD=$(val "SELECT count(*) || ' ' || coalesce(max(lead_us), 0) FROM bench_ahead WHERE suite = 'concurrency'")

# =============================================================================
# Suite 3: inserts.
# =============================================================================
INS_KEYS=(bigserial sf v4 v7)
declare -A INS_LABEL=([bigserial]="bigserial" [sf]="snowflake_nextval()" [v4]="gen_random_uuid()" [v7]="uuidv7()")
declare -A INS_COL=(
    [bigserial]="id bigserial PRIMARY KEY"
    [sf]="id bigint PRIMARY KEY DEFAULT snowflake_nextval()"
    [v4]="id uuid PRIMARY KEY DEFAULT gen_random_uuid()"
    [v7]="id uuid PRIMARY KEY DEFAULT uuidv7()"
)
for key in "${INS_KEYS[@]}"; do
    val "CREATE TABLE bench_ins_$key (${INS_COL[$key]}, created_at timestamptz NOT NULL DEFAULT clock_timestamp(), payload int NOT NULL)" >/dev/null
    echo "INSERT INTO bench_ins_$key (payload) SELECT i FROM generate_series(1, $INS_BATCH) i;" >"$W/ins_$key.sql"
done
# The loads are interleaved in chunks (bigserial, snowflake, v4, v7, then
# again), so that drift of the machine hits every key type alike; each chunk
# is one pgbench run, and the tables keep growing across chunks.
INS_TX=$((INS_ROWS / INS_CHUNKS / INS_BATCH / INS_CLIENTS))
INS_ROWS=$((INS_TX * INS_BATCH * INS_CLIENTS * INS_CHUNKS))
INS_CHUNK_ROWS=$((INS_TX * INS_BATCH * INS_CLIENTS))

val "CHECKPOINT" >/dev/null
# Checkpoints so far: PostgreSQL 17 moved the counters to pg_stat_checkpointer.
if [ "$(val "SHOW server_version_num")" -ge 170000 ]; then
    CKPT_SQL="(SELECT num_timed + num_requested FROM pg_stat_checkpointer)"
else
    CKPT_SQL="(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
fi
: >"$OUT/data/insert_chunks.tsv"
declare -A INS_OFFSET
for key in "${INS_KEYS[@]}"; do INS_OFFSET[$key]=0; : >"$OUT/data/insert_progress_$key.tsv"; done
for chunk in $(seq 1 "$INS_CHUNKS"); do
    for key in "${INS_KEYS[@]}"; do
        step "suite 3/5 inserts: chunk $chunk/$INS_CHUNKS, ${INS_LABEL[$key]} key, $(report commas "$INS_CHUNK_ROWS") rows by $INS_CLIENTS clients, $INS_BATCH rows per INSERT"
        start=$(val "SELECT pg_current_wal_lsn() || ' ' || $CKPT_SQL")
        read -r lsn0 ckpt0 <<<"$start"
        "$PGBENCH" -n -h "$D" -p "$PG_PORT" -U postgres -c "$INS_CLIENTS" -j "$INS_CLIENTS" -t "$INS_TX" \
            --log --log-prefix="$W/inslog_${key}_$chunk" -f "$W/ins_$key.sql" postgres >"$W/ins_${key}_$chunk.out" 2>&1 \
            || { cat "$W/ins_${key}_$chunk.out" >&2; exit 1; }
        m=$(val "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn0')::bigint
                     || ' ' || ($CKPT_SQL - $ckpt0)")
        tps=$(awk '/^tps = / { print $3 }' "$W/ins_${key}_$chunk.out")
        secs=$(awk -v rows="$INS_CHUNK_ROWS" -v b="$INS_BATCH" -v tps="$tps" 'BEGIN { printf "%.6f", rows / b / tps }')
        printf '%s\t%s\t%s\t%s\t%s\n' "$key" "$chunk" "$tps" "$secs" "$(echo "$m" | tr ' ' '\t')" >>"$OUT/data/insert_chunks.tsv"
        # Rows per second over time from pgbench's per-transaction log
        # (latency us, end time s + us): rows of the transactions that ended
        # in each bin of INS_BIN seconds, the chunk's last bin cut at its end.
        cat "$W/inslog_${key}_$chunk".[0-9]* | awk -v b="$INS_BATCH" -v off="${INS_OFFSET[$key]}" -v bin="$INS_BIN" '
            { e = $5 + $6 / 1e6; s = e - $3 / 1e6; end[NR] = e
              if (NR == 1 || s < t0) t0 = s
              if (NR == 1 || e > t1) t1 = e }
            END {
                nb = int((t1 - t0) / bin) + 1
                for (i = 1; i <= NR; i++) cnt[int((end[i] - t0) / bin)]++
                for (j = 0; j < nb; j++) {
                    lo = j * bin; hi = (j + 1) * bin; if (hi > t1 - t0) hi = t1 - t0
                    if (hi - lo < bin / 4) continue      # a sliver at the end says nothing
                    printf "%.2f\t%.0f\n", off + (lo + hi) / 2, cnt[j] * b / (hi - lo)
                }
            }' >>"$OUT/data/insert_progress_$key.tsv"
        INS_OFFSET[$key]=$(awk -v a="${INS_OFFSET[$key]}" -v b="$secs" 'BEGIN { printf "%.6f", a + b }')
    done
done
wait_clients_gone
# inserts.tsv: key tps wal_bytes pk_bytes heap_bytes idx_read idx_hit checkpoints rows
: >"$OUT/data/inserts.tsv"
for key in "${INS_KEYS[@]}"; do
    m=$(val "SELECT pg_relation_size('bench_ins_${key}_pkey')
                 || ' ' || pg_relation_size('bench_ins_$key')
                 || ' ' || (SELECT idx_blks_read || ' ' || idx_blks_hit FROM pg_statio_user_indexes WHERE indexrelname = 'bench_ins_${key}_pkey')
                 || ' ' || (SELECT count(*) FROM bench_ins_$key)")
    read -r pk heap rd hit rows <<<"$m"
    awk -F'\t' -v k="$key" -v b="$INS_BATCH" -v pk="$pk" -v heap="$heap" -v rd="$rd" -v hit="$hit" -v rows="$rows" '
        $1 == k { secs += $4; wal += $5; ck += $6 }
        END { printf "%s\t%.3f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\n", k, rows / b / secs, wal, pk, heap, rd, hit, ck, rows }' \
        "$OUT/data/insert_chunks.tsv" >>"$OUT/data/inserts.tsv"
done

# Every row's id must not be later than its created_at (clock_timestamp(),
# evaluated after the id default). For UUIDv7 the same check shows whether
# the sub-millisecond counter ran ahead of the clock during the load.
step "suite 3/5 inserts: checking id time <= created_at on every row"
INS_AHEAD_SF=$(val "SELECT count(*) FILTER (WHERE snowflake_timestamp(id) > created_at) || ' ' || coalesce(round((extract(epoch FROM max(snowflake_timestamp(id) - created_at)) * 1000)::numeric, 3), 0) FROM bench_ins_sf")
INS_AHEAD_V7=$(val "SELECT count(*) FILTER (WHERE uuidv7_timestamp(id) > created_at) || ' ' || coalesce(round((extract(epoch FROM max(uuidv7_timestamp(id) - created_at)) * 1000)::numeric, 3), 0) FROM bench_ins_v7")

# =============================================================================
# Suite 4: range scan by time on the snowflake table.
# =============================================================================
step "suite 4/5 range scan: CREATE INDEX on created_at, ANALYZE"
t0=$(now_s)
val "CREATE INDEX bench_ins_sf_created_at ON bench_ins_sf (created_at)" >/dev/null
t1=$(now_s)
CREATED_AT_INDEX_S=$(sub "$t1" "$t0")
val "VACUUM ANALYZE bench_ins_sf" >/dev/null
CREATED_AT_INDEX_BYTES=$(val "SELECT pg_relation_size('bench_ins_sf_created_at')")
SF_PK_BYTES=$(val "SELECT pg_relation_size('bench_ins_sf_pkey')")

# Two windows of rows, found by position in id order (the load is
# interleaved with the other tables', so its time span has gaps): the 1% of
# rows from the 50th to the 51st percentile (bounded), and the last 1% (the
# open-ended "recent rows" query). t1, t2, t3 are those rows' created_at.
SCAN_Q=(mid_id mid_ts tail_id tail_ts)
declare -A SCAN_SQL=(
    [mid_id]="SELECT count(payload) FROM bench_ins_sf WHERE id >= snowflake_from_timestamp(:'t1') AND id < snowflake_from_timestamp(:'t2')"
    [mid_ts]="SELECT count(payload) FROM bench_ins_sf WHERE created_at >= :'t1' AND created_at < :'t2'"
    [tail_id]="SELECT count(payload) FROM bench_ins_sf WHERE id >= snowflake_from_timestamp(:'t3')"
    [tail_ts]="SELECT count(payload) FROM bench_ins_sf WHERE created_at >= :'t3'"
)
SF_ROWS=$(val "SELECT count(*) FROM bench_ins_sf")
SCAN_WINDOWS="SELECT (SELECT created_at FROM bench_ins_sf ORDER BY id OFFSET $((SF_ROWS * 50 / 100)) LIMIT 1) AS t1,
                     (SELECT created_at FROM bench_ins_sf ORDER BY id OFFSET $((SF_ROWS * 51 / 100)) LIMIT 1) AS t2,
                     (SELECT created_at FROM bench_ins_sf ORDER BY id OFFSET $((SF_ROWS * 99 / 100)) LIMIT 1) AS t3 \\gset"
step "suite 4/5 range scan: plans, row counts, $SCAN_RUNS interleaved timed runs of 4 queries"
{
    echo "$SCAN_WINDOWS"
    echo '\pset format unaligned'
    echo '\pset tuples_only on'
    for q in "${SCAN_Q[@]}"; do
        echo "\\echo @plan $q"
        echo "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) ${SCAN_SQL[$q]};"
        echo "\\echo @rows $q"
        echo "${SCAN_SQL[$q]};"
    done
    echo "\\echo @windows"
    echo "SELECT :'t1', :'t2', :'t3';"
} >"$W/scan_plan.sql"
sql -f "$W/scan_plan.sql" >"$W/scan_plan.out"
{
    echo "$SCAN_WINDOWS"
    echo '\timing on'
    echo '\o /dev/null'
    for q in "${SCAN_Q[@]}"; do echo "\\echo @warmup"; echo "${SCAN_SQL[$q]};"; done
    for r in $(seq 1 "$SCAN_RUNS"); do
        for q in "${SCAN_Q[@]}"; do echo "\\echo @$q $r"; echo "${SCAN_SQL[$q]};"; done
    done
} >"$W/scan_time.sql"
sql -f "$W/scan_time.sql" >"$W/scan_time.out"
awk '/^@/ { tag = $0; next }
     /^Time:/ { if (tag != "@warmup") { split(tag, a, " "); print substr(a[1], 2) "\t" a[2] "\t" $2 } }' \
    "$W/scan_time.out" >"$OUT/data/range_scan.tsv"

step "stopping the instance"
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
pg_cleanup_all

# =============================================================================
# Suite 5: the core micro-benchmark (Google Benchmark), if it builds.
# =============================================================================
CORE_STATUS=""
if [ ! -f "$BENCH/core_bench.cpp" ]; then
    CORE_STATUS="bench/core_bench.cpp does not exist yet: no core figures in this run."
    step "suite 5/5 core: skipped ($CORE_STATUS)"
elif ! make -C "$ROOT" -s build/core_bench >"$W/core_build.log" 2>&1; then
    CORE_STATUS="\`make build/core_bench\` failed: no core figures in this run."
    step "suite 5/5 core: build failed (see below)"
    tail -20 "$W/core_build.log" >&2
else
    step "suite 5/5 core: build/core_bench --benchmark_min_time=$CORE_MIN_TIME"
    if ! "$ROOT/build/core_bench" --benchmark_min_time="$CORE_MIN_TIME" \
            --benchmark_out="$W/core.csv" --benchmark_out_format=csv >"$W/core.out" 2>"$W/core.err"; then
        CORE_STATUS="build/core_bench exited with an error: $(tail -3 "$W/core.err" | tr '\n' ' ')"
    fi
    if [ -f "$W/core.csv" ]; then sed -n '/^name,/,$p' "$W/core.csv" >"$OUT/data/core.csv"; fi
fi

# =============================================================================
# Suite 6: sporadic calls, latency against a sequence (its own instance, fsync on).
# =============================================================================
step "suite 6 sporadic: snowflake_nextval() and nextval() a few times a second (bench/sporadic.sh)"
SPORADIC_STATUS=""
if ! QUICK=$([ "$MODE" = quick ] && echo 1 || echo 0) "$BENCH/sporadic.sh" "$OUT" >"$W/sporadic.out" 2>&1; then
    SPORADIC_STATUS="bench/sporadic.sh failed: $(tail -3 "$W/sporadic.out" | tr '\n' ' ')"
    step "suite 6 sporadic: failed"
fi

# =============================================================================
# Suite 7: leasing on and off (its own instances and etcd).
# =============================================================================
step "suite 7 leasing: snowflake_nextval() with a worker id leased from etcd, from ZooKeeper and a static one (bench/lease.sh)"
LEASE_STATUS=""
if ! QUICK=$([ "$MODE" = quick ] && echo 1 || echo 0) "$BENCH/lease.sh" "$OUT" >"$W/lease.out" 2>&1; then
    LEASE_STATUS="bench/lease.sh failed: $(tail -3 "$W/lease.out" | tr '\n' ' ')"
    step "suite 7 leasing: failed"
fi

# =============================================================================
# Suite 8: ids over HTTP against SQL (its own instance).
# =============================================================================
step "suite 8 http: batches of 1, 100, 1,000 ids over HTTP (wrk) and SQL (pgbench) (bench/http.sh)"
HTTP_STATUS=""
if ! QUICK=$([ "$MODE" = quick ] && echo 1 || echo 0) "$BENCH/http.sh" "$OUT" >"$W/http.out" 2>&1; then
    HTTP_STATUS="bench/http.sh failed: $(tail -3 "$W/http.out" | tr '\n' ' ')"
    step "suite 8 http: failed"
fi

# =============================================================================
# Suite 9: SQL latency beside an HTTP client at the ceiling (its own instance).
# =============================================================================
step "suite 9 http ceiling: SQL latency alone, beside 10,000-id HTTP batches at the ceiling and without it (bench/http_ceiling.sh)"
CEILING_STATUS=""
if ! QUICK=$([ "$MODE" = quick ] && echo 1 || echo 0) "$BENCH/http_ceiling.sh" "$OUT" >"$W/http_ceiling.out" 2>&1; then
    CEILING_STATUS="bench/http_ceiling.sh failed: $(tail -3 "$W/http_ceiling.out" | tr '\n' ' ')"
    step "suite 9 http ceiling: failed"
fi

# =============================================================================
# Suite 10: the embedded generator and its bindings against other generators
# (no instance: processes of their own).
# =============================================================================
step "suite 10 sdk: libsnowflake_ids, its Node.js and Python bindings, npm's snowflake packages and a pure-Python one (bench/sdk.sh)"
SDK_STATUS=""
if ! QUICK=$([ "$MODE" = quick ] && echo 1 || echo 0) "$BENCH/sdk.sh" "$OUT" >"$W/sdk.out" 2>&1; then
    SDK_STATUS="bench/sdk.sh failed: $(tail -3 "$W/sdk.out" | tr '\n' ' ')"
    step "suite 10 sdk: failed"
fi

# =============================================================================
# Suite 11: the ID buffer (three nodes of its own and HAProxy).
# =============================================================================
step "suite 11 buffer: the ID buffer's call latency, four buffers through HAProxy beside SQL batches, SQL latency beside a buffer (bench/buffer.sh)"
BUFFER_STATUS=""
if ! QUICK=$([ "$MODE" = quick ] && echo 1 || echo 0) "$BENCH/buffer.sh" "$OUT" >"$W/buffer.out" 2>&1; then
    BUFFER_STATUS="bench/buffer.sh failed: $(tail -3 "$W/buffer.out" | tr '\n' ' ')"
    step "suite 11 buffer: failed"
fi

# =============================================================================
# Report.
# =============================================================================
step "report: tables, plots"
export LC_ALL=C
# The run's settings for bench/lib/report.py: NAME<TAB>value, lists joined by
# spaces, labels as TABLE.KEY.
{
    for v in MODE ROOT W START_S UPDATE_DOCS PG_VERSION_STR SETTINGS LOAD_START LOAD_END \
             SHARED_BUFFERS SHARED_BUFFERS_BYTES CALL_N CALL_N_SLOW CALL_ROUNDS V7_FRESH_LEAD \
             CONC_IDS CONC_SECONDS CONC_AHEAD INS_BATCH INS_CLIENTS INS_ROWS INS_CHUNKS INS_CHUNK_ROWS \
             INS_AHEAD_SF INS_AHEAD_V7 SCAN_RUNS CREATED_AT_INDEX_S CREATED_AT_INDEX_BYTES SF_PK_BYTES \
             CORE_MIN_TIME CORE_STATUS SPORADIC_STATUS LEASE_STATUS HTTP_STATUS CEILING_STATUS SDK_STATUS \
             BUFFER_STATUS; do
        printf '%s\t%s\n' "$v" "${!v}"
    done
    printf 'CALL_KEYS\t%s\nCONC_KEYS\t%s\nCONC_CLIENTS\t%s\nINS_KEYS\t%s\n' \
        "${CALL_KEYS[*]}" "${CONC_KEYS[*]}" "${CONC_CLIENTS[*]}" "${INS_KEYS[*]}"
    for k in "${CALL_KEYS[@]}"; do printf 'CALL_LABEL.%s\t%s\n' "$k" "${CALL_LABEL[$k]}"; done
    for k in "${CONC_KEYS[@]}"; do printf 'CONC_LABEL.%s\t%s\n' "$k" "${CONC_LABEL[$k]}"; done
    for k in "${INS_KEYS[@]}"; do printf 'INS_LABEL.%s\t%s\n' "$k" "${INS_LABEL[$k]}"; done
} >"$W/meta.tsv"
report full "$OUT" "$W/meta.tsv"
step "done in $(($(date +%s) - START_S)) s: ${OUT#$ROOT/}/latest.md"
