#!/bin/bash
# What the configurable layout (snowflake.layout, issue 31) costs the id path:
# one backend's snowflake_nextval() rate
#   base      the extension of BASELINE_REF (default: the commit before the
#             layout, whose layout was compiled in), twitter;
#   twitter   this checkout's extension, snowflake.layout = 'twitter';
#   js-safe   this checkout's extension, snowflake.layout = 'js-safe', whose
#             cap is 64 ids a millisecond: its rate is read against that cap,
# three instances started together and measured in turn, round after round
# (base, twitter, js-safe in each round), so that every figure is read as a
# ratio to the same round's base. Each measurement is one statement,
# SELECT count(snowflake_nextval()) FROM generate_series(1, N), timed by the
# server (clock_timestamp() - now()).
#
# The baseline is built here: a git worktree of BASELINE_REF, installed into a
# copy of this PostgreSQL's tree (a relocatable install under the temporary
# directory), so the system's extension (this checkout's) is left alone.
#
# Usage: bench/layout.sh OUTDIR   (writes OUTDIR/data/layout.tsv and
#        OUTDIR/layout.md; QUICK=1 for a short run). Needs the extension
#        installed (make install), git, make, g++, psql.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/test/lib/pg.sh"
OUT=${1:?usage: bench/layout.sh OUTDIR}
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then
    N=300000; N_JS=64000; ROUNDS=2
else
    N=2000000; N_JS=320000; ROUNDS=7
fi
BASELINE_REF=${BASELINE_REF:-$(git -C "$ROOT" log --format=%H -1 --diff-filter=A -- test/unit/geometry_test.cpp)^}
BASE_COMMIT=$(git -C "$ROOT" rev-parse --short "$BASELINE_REF")
mkdir -p "$OUT/data"

WORK=$(pg_tmpdir)
BASE_SRC=$WORK/src
INSTANCES=()
cleanup() {
    local d
    for d in "${INSTANCES[@]}"; do pg_stop "$d" immediate >/dev/null 2>&1 || true; done
    git -C "$ROOT" worktree remove --force "$BASE_SRC" >/dev/null 2>&1 || true
    if [ -n "${KEEP_TMP:-}" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# --- the baseline's extension, in a copy of PostgreSQL's tree ----------------
echo "layout: building the baseline $BASE_COMMIT"
PGROOT=$WORK/pg
libdir=$("$PG_CONFIG" --pkglibdir) sharedir=$("$PG_CONFIG" --sharedir) bindir=$("$PG_CONFIG" --bindir)
incdir=$("$PG_CONFIG" --includedir)
for d in "$(dirname "$bindir")" "$sharedir" "$incdir"; do
    mkdir -p "$PGROOT$(dirname "$d")"
    cp -a "$d" "$PGROOT$d"
done
[ "$libdir" = "$(dirname "$bindir")/lib" ] || { echo "layout: expected pkglibdir beside bindir" >&2; exit 1; }
BASE_PG_CONFIG=$PGROOT$bindir/pg_config
git -C "$ROOT" worktree add --detach "$BASE_SRC" "$BASELINE_REF" >/dev/null 2>&1
(cd "$BASE_SRC" && make -s -j"$(nproc)" PG_CONFIG="$BASE_PG_CONFIG" snowflake.so >"$WORK/base_build.log" 2>&1) ||
    { tail -20 "$WORK/base_build.log" >&2; exit 1; }
# The library and the scripts are all an instance needs (no snowflake-inspect).
cp "$BASE_SRC/snowflake.so" "$PGROOT$libdir/"
cp "$BASE_SRC"/snowflake.control "$BASE_SRC"/snowflake--*.sql "$PGROOT$sharedir/extension/"
chmod -R a+rX "$WORK"

# --- three instances ---------------------------------------------------------
# start NAME PGBIN LAYOUT: an instance on its own port.
start() {
    local name=$1 bin=$2 layout=$3 dir=$WORK/$1
    mkdir -p "$dir"
    chown postgres: "$dir" 2>/dev/null || true
    PGBIN=$bin pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" \
        "snowflake.layout = '$layout'" "port = $4"
    [ "$name" = base ] && sed -i "/snowflake.layout/d" "$dir/data/postgresql.conf"
    INSTANCES+=("$dir")
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    PG_PORT=$4 pg_psql "$dir" -qc "CREATE EXTENSION snowflake" >/dev/null
}
P_BASE=$(free_tcp_port) P_TW=$(free_tcp_port) P_JS=$(free_tcp_port)
start base "$PGROOT$bindir" twitter "$P_BASE"
start twitter "$PGBIN" twitter "$P_TW"
start js "$PGBIN" js-safe "$P_JS"
# rate NAME PORT COUNT: ids a second of one statement of COUNT calls.
rate() {
    PG_PORT=$2 pg_psql "$WORK/$1" -At -c "SELECT round(count(id) / extract(epoch FROM clock_timestamp() - now()))
                                          FROM (SELECT snowflake_nextval() AS id FROM generate_series(1, $3)) s"
}
for p in base:$P_BASE twitter:$P_TW; do rate "${p%%:*}" "${p#*:}" 100000 >/dev/null; done  # warm up

printf 'round\tbase\ttwitter\tjs_safe\n' >"$OUT/data/layout.tsv"
for r in $(seq 1 "$ROUNDS"); do
    b=$(rate base "$P_BASE" "$N")
    t=$(rate twitter "$P_TW" "$N")
    j=$(rate js "$P_JS" "$N_JS")
    printf '%s\t%s\t%s\t%s\n' "$r" "$b" "$t" "$j" | tee -a "$OUT/data/layout.tsv"
done

/usr/bin/python3 - "$OUT/data/layout.tsv" "$OUT/layout.md" "$BASE_COMMIT" "$N" "$N_JS" <<'PY'
import statistics, sys
tsv, md, base, n, n_js = sys.argv[1:]
rows = [l.split('\t') for l in open(tsv).read().splitlines()[1:]]
b = [float(r[1]) for r in rows]; t = [float(r[2]) for r in rows]; j = [float(r[3]) for r in rows]
ratios = [ti / bi for ti, bi in zip(t, b)]
cap = 64000.0
with open(md, 'w') as f:
    f.write("# The configurable layout's cost (bench/layout.sh)\n\n")
    f.write(f"One backend's `snowflake_nextval()` rate, {len(rows)} rounds of one statement each "
            f"({int(n):,} calls; js-safe {int(n_js):,}), the three instances measured in turn in each round.\n\n")
    f.write("| | median ids/s | ratio |\n|---|---:|---:|\n")
    f.write(f"| base ({base}, layout compiled in) | {statistics.median(b):,.0f} | 1 |\n")
    f.write(f"| twitter (snowflake.layout) | {statistics.median(t):,.0f} | "
            f"{statistics.median(ratios):.3f} (median of the rounds' ratios; lowest {min(ratios):.3f}) |\n")
    f.write(f"| js-safe (cap 64,000 ids/s) | {statistics.median(j):,.0f} | "
            f"{statistics.median(j) / cap:.4f} of its cap |\n")
print(open(md).read())
PY
