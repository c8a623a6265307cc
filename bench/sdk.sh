#!/bin/bash
# The embedded generator (issue 30) against the usual id generators of its
# languages, side by side in one run: libsnowflake_ids's sf_next_id in C, the
# Node.js binding's nextId() and the Python binding's next_id() (each with a
# static worker id and a mark file in a temporary directory, no coordinator),
# beside @sapphire/snowflake, nodejs-snowflake and flake-idgen from npm (in
# Node.js) and a pure-Python generator written for this benchmark
# (PlainSnowflake in bench/sdk/compare.py) in Python.
#
# For each, in a process of its own: ns per id below the cap (timed batches of
# BATCH calls, each started at a new millisecond, so that the wait for the
# next millisecond is not counted), ids/s in a tight loop for SECONDS (every
# id stored, then the repeats counted: a duplicate is an id issued twice), and
# the ratios to ours. Goals (docs/sdk.md): C <= 60 ns, Node.js <= 100 ns,
# Python <= 200 ns an id below the cap; a tight loop at >= 99% of the cap
# (4,096 ids a millisecond). Prints and writes; asserts nothing.
#
#   bench/sdk.sh [OUTDIR]   default bench/results (bench/results/quick with
#                           QUICK=1; BENCH_OUT=DIR as bench/run.sh). Writes
#                           OUTDIR/sdk.md, OUTDIR/data/sdk.tsv (the raw figures)
#                           and OUTDIR/data/sdk_meta.tsv (the run's settings)
#                           only: bench/sdk/report.py OUTDIR OUTDIR/data/sdk_meta.tsv
#                           writes sdk.md again from them.
#   QUICK=1                 one round of short runs (about half a minute)
#   KEEP_TMP=1              keep the temporary directory (npm packages, logs)
#
# Builds what it needs (make sdk: the library and both bindings; make
# build/sdk_c_bench: the C library's own benchmark, bench/sdk_c_bench.c, whose
# lines this script reads; it times its own 2,000 bursts). The npm packages, at the exact versions below, are installed
# with npm install --no-save into the temporary directory, never into the
# checkout; if npm or a package fails, the report says so and measures the
# rest. Called by bench/run.sh as suite 10. Needs cc, c++, node, npm and
# /usr/bin/python3.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then MODE=quick; else MODE=full; fi
if [ "$MODE" = full ]; then
    DEFAULT_OUT=${BENCH_OUT:-$ROOT/bench/results}
    ROUNDS=3           # each generator once per round, the order rotating
    BATCH_ROUNDS=2000  # timed batches below the cap, per generator and round
    SECONDS_TIGHT=1.5  # tight loop, per generator and round
else
    DEFAULT_OUT=${BENCH_OUT:-$ROOT/bench/results/quick}
    ROUNDS=1
    BATCH_ROUNDS=300
    SECONDS_TIGHT=0.5
fi
OUT=${1:-$DEFAULT_OUT}
BATCH=1000             # calls a batch: below every generator's ids a millisecond
PY=/usr/bin/python3
# The npm baselines, exact versions (npm view NAME version, 2026-12-05).
NPM_PKGS=(@sapphire/snowflake@3.5.5 nodejs-snowflake@2.0.1 flake-idgen@1.4.0)
IMPLS=(c node sapphire nodejs-snowflake flake-idgen python python-baseline)

START_S=$(date +%s)
step() { printf '[bench sdk %3ds] %s\n' $(($(date +%s) - START_S)) "$*"; }
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-bench-sdk.XXXXXX")
cleanup() {
    local rc=$?
    if [ -n "${KEEP_TMP:-}" ]; then echo "bench/sdk.sh: temporary files kept in $W" >&2; else rm -rf "$W"; fi
    [ $rc = 0 ] || echo "bench/sdk.sh: FAILED (exit $rc)" >&2
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT/data"

for tool in cc c++ node "$PY"; do
    command -v "$tool" >/dev/null || { echo "bench/sdk.sh: $tool not found" >&2; exit 1; }
done

# --- build ---------------------------------------------------------------------
step "build: make sdk (libsnowflake_ids and the Node.js and Python bindings)"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s sdk
step "build: make build/sdk_c_bench (bench/sdk_c_bench.c)"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s build/sdk_c_bench
SDK_VERSION=$(sed -n 's/^#define SF_IDS_VERSION "\(.*\)"/\1/p' sdk/c/include/snowflake_ids.h)

# --- the npm baselines, in the temporary directory ---------------------------------
NPM_STATUS=""
step "npm: ${NPM_PKGS[*]} into a temporary directory (--no-save)"
mkdir -p "$W/npm"
if ! command -v npm >/dev/null; then
    NPM_STATUS="npm not found: the npm baselines were not measured"
elif ! (cd "$W/npm" && npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$W/npm" "${NPM_PKGS[@]}") >"$W/npm.log" 2>&1; then
    NPM_STATUS="npm install failed: $(tail -3 "$W/npm.log" | tr '\n' ' ')"
fi
[ -z "$NPM_STATUS" ] || step "warning: $NPM_STATUS"

# --- the runs ------------------------------------------------------------------------
# run_impl ROUND IMPL WORKER: one generator in a process of its own; its
# lines go to the raw TSV with the round in front.
run_impl() {
    local round=$1 impl=$2 worker=$3 log="$W/$2.$1.log" rc=0
    case "$impl" in
    c)  # build/sdk_c_bench's lines, as IMPL<TAB>KEY<TAB>VALUE
        build/sdk_c_bench "$SECONDS_TIGHT" >"$log.txt" 2>"$log.err" || rc=$?
        awk -v v="libsnowflake_ids $SDK_VERSION, sf_next_id (build/sdk_c_bench)" '
            BEGIN { print "c\tversion\t" v }
            /^below the cap: / { print "c\tns_below_cap_mean\t" $4; b = $0; sub(/.*\(/, "", b); split(b, x, " ");
                                 print "c\trounds\t" x[1]; print "c\tbatch\t" x[4] }
            /^below the cap, median burst: / { print "c\tns_below_cap\t" $6 }
            /^tight loop: / { print "c\tids_per_s\t" $3; b = $0; sub(/.*\(/, "", b); split(b, x, " ");
                              print "c\tids\t" x[1]; print "c\tseconds\t" x[4] }
            /^tight loop ids: / { print "c\tdups\t" $4; print "c\tdup_values\t" $4; print "c\tascending\t" ($4 == 0 ? "yes" : "no");
                                  print "c\tmax_ids_one_ms\t" $12; print "c\toverflow_waits\t" $14 }
            /^tight loop scheduling: / { print "c\ttight_cpu_ms\t" $4; print "c\ttight_wait_ms\t" $9 }' "$log.txt" >"$log" ;;
    node|sapphire|nodejs-snowflake|flake-idgen)
        if [ "$impl" != node ] && [ -n "$NPM_STATUS" ]; then
            printf '%s\tstatus\tnot measured: %s\n' "$impl" "$NPM_STATUS" >"$log"
        else
            node bench/sdk/compare.js "$impl" "$W/npm" "$ROOT/sdk/node" "$W/node.mark" "$worker" \
                "$BATCH" "$BATCH_ROUNDS" "$SECONDS_TIGHT" >"$log" 2>"$log.err" || rc=$?
        fi ;;
    python|python-baseline)
        "$PY" bench/sdk/compare.py "$impl" "$ROOT/sdk/python" "$W/python.mark" "$worker" \
            "$BATCH" "$BATCH_ROUNDS" "$SECONDS_TIGHT" >"$log" 2>"$log.err" || rc=$? ;;
    esac
    if [ $rc != 0 ]; then
        printf '%s\tstatus\tfailed (exit %s): %s\n' "$impl" "$rc" "$(tail -3 "$log.err" | tr '\t\n' '  ')" >>"$log"
        step "round $round: $impl failed (exit $rc)"
    fi
    awk -v r="$round" '{ print r "\t" $0 }' "$log" >>"$W/sdk.tsv"
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
step "mode $MODE: $ROUNDS round(s) of ${#IMPLS[@]} generators; load average $LOAD_START on $(nproc) cores"
printf 'round\timpl\tkey\tvalue\n' >"$W/sdk.tsv"
for round in $(seq 1 "$ROUNDS"); do
    # The order rotates by one each round, so that no generator always goes first.
    for k in $(seq 0 $((${#IMPLS[@]} - 1))); do
        i=$(((k + round - 1) % ${#IMPLS[@]}))
        step "round $round/$ROUNDS: ${IMPLS[$i]}"
        run_impl "$round" "${IMPLS[$i]}" $((i + 1))
    done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the report ----------------------------------------------------------------------
{
    printf 'MODE\t%s\nROUNDS\t%s\nBATCH\t%s\nBATCH_ROUNDS\t%s\nSECONDS_TIGHT\t%s\n' \
        "$MODE" "$ROUNDS" "$BATCH" "$BATCH_ROUNDS" "$SECONDS_TIGHT"
    printf 'LOAD_START\t%s\nLOAD_END\t%s\nELAPSED_S\t%s\n' "$LOAD_START" "$LOAD_END" $(($(date +%s) - START_S))
    printf 'DATE_UTC\t%s\n' "$(date -u -d "@$START_S" '+%Y-%m-%d %H:%M UTC')"
    printf 'COMMIT\t%s\n' "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    printf 'DIRTY\t%s\n' "$(git -C "$ROOT" status --porcelain -- sdk bench/sdk_c_bench.c bench/sdk 2>/dev/null | wc -l)"
    printf 'CC\t%s\n' "$(cc --version | head -1)"
    printf 'NODE\t%s\n' "$(node --version)"
    printf 'NPM\t%s\n' "$(npm --version 2>/dev/null || echo none)"
    printf 'PYTHON\t%s\n' "$("$PY" --version 2>&1)"
    printf 'NPM_PKGS\t%s\n' "${NPM_PKGS[*]}"
    printf 'NPM_STATUS\t%s\n' "$NPM_STATUS"
} >"$OUT/data/sdk_meta.tsv"
cp "$W/sdk.tsv" "$OUT/data/sdk.tsv"
"$PY" bench/sdk/report.py "$OUT" "$OUT/data/sdk_meta.tsv"
step "done in $(($(date +%s) - START_S)) s: ${OUT#"$ROOT"/}/sdk.md; load average $LOAD_END"
