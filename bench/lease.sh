#!/bin/bash
# snowflake_nextval() with worker ids leased from etcd against a static worker
# id, side by side: two instances (one leasing from a one-member etcd on
# loopback), one backend each, statements alternating between them. Leasing
# must cost nothing on the id path (goal: at least 0.98x).
#
# Usage: bench/lease.sh OUTDIR   (writes OUTDIR/data/lease.tsv and
#        OUTDIR/lease.md; QUICK=1 for a short run). Called by bench/run.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/test/lib/pg.sh"
. "$ROOT/test/lib/etcd.sh"
OUT=${1:?usage: bench/lease.sh OUTDIR}
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then ROUNDS=3; N=300000; else ROUNDS=9; N=1000000; fi
mkdir -p "$OUT/data"
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-bench-lease.XXXXXX")
trap 'pg_cleanup_all; etcd_stop; [ -n "${KEEP_TMP:-}" ] || rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

etcd_start 1 "$W" || { echo "bench/lease.sh: etcd did not start" >&2; exit 1; }
S=$(pg_tmpdir); L=$(pg_tmpdir)
pg_init "$S" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 1" "autovacuum = off"
pg_init "$L" "shared_preload_libraries = 'snowflake'" "snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'" "autovacuum = off"
pg_start "$S" && pg_start "$L" || { echo "bench/lease.sh: instances did not start" >&2; exit 1; }
for d in "$S" "$L"; do pg_psql "$d" -c "CREATE EXTENSION snowflake"; done
for _ in $(seq 100); do [ "$(pg_val "$L" "SELECT lease_state FROM snowflake_stats")" = held ] && break; sleep 0.1; done
[ "$(pg_val "$L" "SELECT lease_state FROM snowflake_stats")" = held ] || { echo "bench/lease.sh: no lease" >&2; exit 1; }

stmt="SELECT count(x) FROM (SELECT snowflake_nextval() AS x, generate_series(1, $N)) s"
# rate DIR: ids per second of one statement (psql's \timing).
rate() {
    pg_psql "$1" -c '\timing on' -c "$stmt" | awk -v n="$N" '/^Time:/ { printf "%.0f\n", n / ($2 / 1000) }'
}
rate "$S" >/dev/null; rate "$L" >/dev/null   # warm-up
printf 'round\tstatic_ids_per_s\tleased_ids_per_s\tratio\n' >"$OUT/data/lease.tsv"
for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then a=$(rate "$S"); b=$(rate "$L"); else b=$(rate "$L"); a=$(rate "$S"); fi
    awk -v r="$r" -v a="$a" -v b="$b" 'BEGIN { printf "%d\t%d\t%d\t%.4f\n", r, a, b, b / a }' >>"$OUT/data/lease.tsv"
done
renewals=$(pg_val "$L" "SELECT lease_renewals FROM snowflake_stats")
{
    echo "Two instances, one backend each, \`$stmt\`, $ROUNDS rounds alternating which goes first; the leasing one holds its worker id from a one-member etcd on loopback ($renewals keepalives during the run)."
    echo
    echo "| | median ids/s | median ratio to static |"
    echo "|---|---|---|"
    awk -F'\t' 'NR > 1 { s[NR] = $2; l[NR] = $3; q[NR] = $4; n++ }
        function med(a,   k, i, j, t, v) { k = 0; for (i in a) v[++k] = a[i]; for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }; return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
        END { printf "| static worker id | %.0f | |\n| leased from etcd | %.0f | %.3fx (goal >= 0.98x) |\n", med(s), med(l), med(q) }' "$OUT/data/lease.tsv"
} >"$OUT/lease.md"
cat "$OUT/lease.md"
