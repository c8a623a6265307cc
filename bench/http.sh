#!/bin/bash
# Ids over HTTP against ids over SQL: ids per second and latency of batches
# of 1, 100 and 1,000 ids from the HTTP endpoint (wrk, keep-alive, one
# connection for latency and four for throughput) and from
# snowflake_nextval_batch() (pgbench, the same batch sizes and clients), on
# one throwaway instance, the two alternating.
#
# Goals (issue 12): at count=1,000, HTTP reaches at least 90% of the layout's
# cap (bench/lib/layout.py: 4,096 ids per millisecond); at count=1, p99 latency
# of one client under 1 ms.
#
# Usage: bench/http.sh OUTDIR    (writes OUTDIR/data/http.tsv and
#        OUTDIR/http.md; QUICK=1 for a short run). Called by bench/run.sh.
# Needs the extension installed, wrk, pgbench.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/test/lib/pg.sh"
. "$ROOT/bench/lib/http_node.sh"
OUT=${1:?usage: bench/http.sh OUTDIR}
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then
    RUN_S=2
else
    RUN_S=5
fi
COUNTS=(1 100 1000)
CLIENTS=(1 4)
CAP_PER_S=$(/usr/bin/python3 "$ROOT/bench/lib/layout.py" cap)
command -v wrk >/dev/null || { echo "bench/http.sh: wrk not found; run 'make deps' (package wrk)" >&2; exit 1; }
mkdir -p "$OUT/data"
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-http-bench.XXXXXX")
chmod 755 "$W"
trap 'pg_cleanup_all; [ -n "${KEEP_TMP:-}" ] || rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

D=$(pg_tmpdir)
# No ceiling on HTTP ids (snowflake.http_max_ids_per_second, default half
# the cap): the goal is what the endpoint itself can reach. SQL beside an
# HTTP client at the ceiling: bench/http_ceiling.sh.
http_node_start "$D" bench/http.sh "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 1" \
    "autovacuum = off" "log_min_messages = info" "snowflake.http_max_ids_per_second = 0"
sql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$D" -p "$PG_PORT" -U postgres -d postgres "$@"; }
sql -c "CREATE EXTENSION snowflake"
# The first id after start waits for a reservation: not part of any run.
curl -s -o /dev/null "http://127.0.0.1:$PORT/v1/ids/batch?count=1"

# wrk's Lua script: one line with the run's figures (latency in microseconds).
cat >"$W/report.lua" <<'LUA'
done = function(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("@wrk %d %d %d %d %.1f %.1f %.1f\n", summary.requests, summary.duration,
        e.status, e.connect + e.read + e.write + e.timeout,
        latency:percentile(50), latency:percentile(99), latency.max))
end
LUA
chmod 644 "$W/report.lua"

# http.tsv: via count clients requests seconds ids_per_s p50_ms p99_ms max_ms errors
: >"$W/http.tsv"
for n in "${COUNTS[@]}"; do
    echo "SELECT count(*) FROM snowflake_nextval_batch($n);" >"$W/batch_$n.sql"
    chmod 644 "$W/batch_$n.sql"
done
for c in "${CLIENTS[@]}"; do
    for n in "${COUNTS[@]}"; do
        echo "[http] count=$n, $c connection(s), ${RUN_S} s: HTTP (wrk)" >&2
        wrk -t1 -c"$c" -d"${RUN_S}s" -s "$W/report.lua" "http://127.0.0.1:$PORT/v1/ids/batch?count=$n" >"$W/wrk_${n}_$c.out" 2>&1
        awk -v n="$n" -v c="$c" '$1 == "@wrk" {
            s = $3 / 1e6
            printf "http\t%d\t%d\t%d\t%.3f\t%.0f\t%.3f\t%.3f\t%.3f\t%d\n", n, c, $2, s, $2 * n / s, $6 / 1000, $7 / 1000, $8 / 1000, $4 + $5 }' \
            "$W/wrk_${n}_$c.out" >>"$W/http.tsv"
        echo "[http] count=$n, $c client(s), ${RUN_S} s: SQL (pgbench)" >&2
        rm -f "$W"/pgb_log*
        "$PGBIN/pgbench" -n -h "$D" -p "$PG_PORT" -U postgres -c "$c" -j "$c" -T "$RUN_S" \
            -f "$W/batch_$n.sql" --log --log-prefix="$W/pgb_log" postgres >"$W/pgb_${n}_$c.out" 2>&1
        # Log: client tx time_us script epoch epoch_us; latency percentiles
        # from every transaction, rate from pgbench's tps.
        tps=$(awk '/^tps = / { print $3 }' "$W/pgb_${n}_$c.out")
        failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$W/pgb_${n}_$c.out")
        cat "$W"/pgb_log* | awk '{ print $3 }' | sort -n | awk -v n="$n" -v c="$c" -v tps="$tps" -v f="${failed:-0}" '
            { v[NR] = $1 }
            END {
                i50 = int(0.50 * NR + 0.999999); i99 = int(0.99 * NR + 0.999999)
                printf "sql\t%d\t%d\t%d\t%.3f\t%.0f\t%.3f\t%.3f\t%.3f\t%d\n", n, c, NR, NR / tps, tps * n, v[i50] / 1000, v[i99] / 1000, v[NR] / 1000, f }' \
            >>"$W/http.tsv"
    done
done
{
    printf 'via\tcount\tclients\trequests\tseconds\tids_per_s\tp50_ms\tp99_ms\tmax_ms\terrors\n'
    cat "$W/http.tsv"
} >"$OUT/data/http.tsv"
ids_issued=$(sql -A -t -c "SELECT ids_issued FROM snowflake_stats")

# Report.
field() { awk -F'\t' -v v="$1" -v n="$2" -v c="$3" -v f="$4" 'NR > 1 && $1 == v && $2 == n && $3 == c { print $f }' "$OUT/data/http.tsv"; }
{
    echo "HTTP: \`wrk -t1 -c C\` with keep-alive, \`GET /v1/ids/batch?count=N\`; SQL: \`pgbench -c C -j C\`, \`SELECT count(*) FROM snowflake_nextval_batch(N)\` over a Unix socket. ${RUN_S} s per run, the two alternating, one instance."
    echo "Latency is per request (HTTP) or per statement (SQL), in ms; ids/s counts ids handed out."
    echo
    echo "| ids per request | clients | HTTP M ids/s | SQL M ids/s | HTTP / SQL | HTTP % of cap | HTTP p50 | HTTP p99 | SQL p50 | SQL p99 | HTTP errors |"
    echo "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    for c in "${CLIENTS[@]}"; do
        for n in "${COUNTS[@]}"; do
            awk -v n="$n" -v c="$c" -v cap="$CAP_PER_S" \
                -v hr="$(field http "$n" "$c" 6)" -v sr="$(field sql "$n" "$c" 6)" \
                -v h50="$(field http "$n" "$c" 7)" -v h99="$(field http "$n" "$c" 8)" \
                -v s50="$(field sql "$n" "$c" 7)" -v s99="$(field sql "$n" "$c" 8)" -v he="$(field http "$n" "$c" 10)" \
                'BEGIN { printf "| %s | %s | %.3f | %.3f | %.2f | %.1f%% | %.3f | %.3f | %.3f | %.3f | %s |\n",
                         n, c, hr / 1e6, sr / 1e6, (sr > 0 ? hr / sr : 0), 100 * hr / cap, h50, h99, s50, s99, he }'
        done
    done
    echo
    best=$(awk -F'\t' -v cap="$CAP_PER_S" 'NR > 1 && $1 == "http" && $2 == 1000 && $6 > b { b = $6 } END { printf "%.1f", 100 * b / cap }' "$OUT/data/http.tsv")
    p99=$(field http 1 1 8)
    echo "Goals: count=1,000 over HTTP at **${best}%** of the cap (goal at least 90%: $(awk -v b="$best" 'BEGIN { print (b >= 90 ? "met" : "**not met**") }')); count=1, one connection, p99 **${p99} ms** (goal under 1 ms: $(awk -v p="$p99" 'BEGIN { print (p < 1 ? "met" : "**not met**") }'))."
    echo "ids_issued at the end: $ids_issued. Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (wrk, the worker and pgbench share them)."
} >"$OUT/http.md"
cat "$OUT/http.md"
