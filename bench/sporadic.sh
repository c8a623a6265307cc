#!/bin/bash
# Sporadic calls: the latency of `SELECT snowflake_nextval()` against
# `SELECT nextval('s')` when one client calls a few times a second, as most
# OLTP servers do, on a throwaway instance with fsync = on. The generator
# must not write or fsync its high-water mark on such calls: after the first
# id, reservation_waits stays 0, and p99 latency stays within 1.2x of the
# sequence's (goal of docs/benchmarks.md).
#
# Runs of RUN_S seconds at each rate, the two statements alternating, ROUNDS
# rounds; pgbench --rate with a per-transaction log; latency = time minus
# schedule lag.
#
# Usage: bench/sporadic.sh OUTDIR    (writes OUTDIR/data/sporadic.tsv and
#        OUTDIR/sporadic.md; QUICK=1 for a short run). Called by bench/run.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/test/lib/pg.sh"
OUT=${1:?usage: bench/sporadic.sh OUTDIR}
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then
    RATES=(10); RUN_S=5; ROUNDS=1
else
    RATES=(2 10); RUN_S=20; ROUNDS=2
fi
mkdir -p "$OUT/data"
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-sporadic.XXXXXX")
trap 'pg_cleanup_all; [ -n "${KEEP_TMP:-}" ] || rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

D=$(pg_tmpdir)
pg_init "$D" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 1" \
    "fsync = on" "autovacuum = off" "log_min_messages = warning"
pg_start "$D" || { cat "$D/server.log" >&2; exit 1; }
sql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$D" -p "$PG_PORT" -U postgres -d postgres "$@"; }
val() { sql -A -t -c "$1"; }
sql -c "CREATE EXTENSION snowflake" -c "CREATE SEQUENCE s"
val "SELECT snowflake_nextval()" >/dev/null       # the first id after start waits for a reservation
val "SELECT snowflake_stats_reset()" >/dev/null

echo 'SELECT snowflake_nextval();' >"$W/sf.sql"
echo "SELECT nextval('s');" >"$W/seq.sql"
: >"$W/lat.tsv"
for round in $(seq 1 "$ROUNDS"); do
    for rate in "${RATES[@]}"; do
        for key in sf seq; do
            echo "[sporadic] round $round/$ROUNDS, $key at $rate per second, ${RUN_S} s" >&2
            rm -f "$W"/log_*
            "$PGBIN/pgbench" -n -h "$D" -p "$PG_PORT" -U postgres -c 1 -j 1 -R "$rate" -T "$RUN_S" \
                -f "$W/$key.sql" -l --log-prefix="$W/log_$key" postgres >"$W/pgbench_$key.out" 2>&1
            # client tx time script epoch epoch_us schedule_lag: latency is time - lag.
            cat "$W"/log_"$key"* | awk -v k="$key" -v r="$rate" '{ print k "\t" r "\t" ($3 - $7) }' >>"$W/lat.tsv"
        done
    done
done
waits=$(val "SELECT reservation_waits FROM snowflake_stats")
window=$(val "SELECT reservation_window_ms FROM snowflake_stats")

# p50, p99, max in ms per key and rate.
{
    printf 'key\trate\tsamples\tp50_ms\tp99_ms\tmax_ms\n'
    for rate in "${RATES[@]}"; do
        for key in sf seq; do
            awk -v k="$key" -v r="$rate" '$1 == k && $2 == r { print $3 }' "$W/lat.tsv" | sort -n | awk -v k="$key" -v r="$rate" '
                { v[NR] = $1 }
                END {
                    if (NR == 0) { printf "%s\t%s\t0\t\t\t\n", k, r; exit }
                    i50 = int(0.50 * NR + 0.999999); i99 = int(0.99 * NR + 0.999999)
                    printf "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\n", k, r, NR, v[i50] / 1000, v[i99] / 1000, v[NR] / 1000
                }'
        done
    done
} >"$OUT/data/sporadic.tsv"

{
    echo "One client, \`pgbench --rate\`, $ROUNDS round(s) of $RUN_S s per statement and rate, alternating; fsync = on."
    echo "Latency per call (pgbench's transaction time less its schedule lag), in ms:"
    echo
    echo "| rate (calls/s) | statement | samples | p50 | p99 | max | p99 ratio to nextval() |"
    echo "|---|---|---|---|---|---|---|"
    for rate in "${RATES[@]}"; do
        seq99=$(awk -F'\t' -v r="$rate" '$1 == "seq" && $2 == r { print $5 }' "$OUT/data/sporadic.tsv")
        for key in sf seq; do
            awk -F'\t' -v k="$key" -v r="$rate" -v s="$seq99" '$1 == k && $2 == r {
                name = (k == "sf") ? "`SELECT snowflake_nextval()`" : "`SELECT nextval('"'"'s'"'"')`"
                printf "| %s | %s | %d | %.3f | %.3f | %.3f | %s |\n", r, name, $3, $4, $5, $6, (s > 0 ? sprintf("%.2fx", $5 / s) : "") }' "$OUT/data/sporadic.tsv"
        done
    done
    echo
    echo "reservation_waits after the first id: **$waits** (goal 0); reservation_window_ms at the end: $window."
} >"$OUT/sporadic.md"
cat "$OUT/sporadic.md"
