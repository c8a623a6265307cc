#!/bin/bash
# snowflake_nextval() with worker ids leased from etcd and from ZooKeeper
# against a static worker id, side by side: three instances (one leasing from
# a one-member etcd on loopback, one from a standalone ZooKeeper server on
# loopback), one backend each, statements taking turns between them. Leasing
# must cost nothing on the id path (goal: at least 0.98x, for each
# coordinator). Without ZooKeeper installed (Java and Debian's zookeeper
# package), only etcd is measured, and the report says so.
#
# Usage: bench/lease.sh OUTDIR   (writes OUTDIR/data/lease.tsv and
#        OUTDIR/lease.md, nothing else; QUICK=1 for a short run). Called by
#        bench/run.sh.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/test/lib/pg.sh"
. "$ROOT/test/lib/etcd.sh"
. "$ROOT/test/lib/zookeeper.sh"
OUT=${1:?usage: bench/lease.sh OUTDIR}
if [ -n "${QUICK:-}" ] && [ "${QUICK}" != 0 ]; then ROUNDS=3; N=300000; else ROUNDS=9; N=1000000; fi
mkdir -p "$OUT/data"
W=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-bench-lease.XXXXXX")
trap 'pg_cleanup_all; etcd_stop; zk_stop; [ -n "${KEEP_TMP:-}" ] || rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

ZK=yes
if ! [ -x "$ZK_JAVA" ] || ! [ -r "$ZK_CLASSPATH" ]; then
    ZK=no
    echo "bench/lease.sh: ZooKeeper is not installed ($ZK_JAVA, $ZK_CLASSPATH): measuring etcd only" >&2
fi

etcd_start 1 "$W" || { echo "bench/lease.sh: etcd did not start" >&2; exit 1; }
if [ "$ZK" = yes ]; then
    zk_start 1 "$W/zk" || { echo "bench/lease.sh: ZooKeeper did not start" >&2; exit 1; }
fi
S=$(pg_tmpdir); L=$(pg_tmpdir)
pg_init "$S" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 1" "autovacuum = off"
pg_init "$L" "shared_preload_libraries = 'snowflake'" "snowflake.etcd_endpoints = '$ETCD_ENDPOINTS'" "autovacuum = off"
NODES=("$S" "$L")
if [ "$ZK" = yes ]; then
    Z=$(pg_tmpdir)
    pg_init "$Z" "shared_preload_libraries = 'snowflake'" "snowflake.zookeeper_hosts = '$ZK_HOSTS'" "autovacuum = off"
    NODES+=("$Z")
fi
for d in "${NODES[@]}"; do pg_start "$d" || { echo "bench/lease.sh: instances did not start" >&2; exit 1; }; done
for d in "${NODES[@]}"; do pg_psql "$d" -c "CREATE EXTENSION snowflake"; done
held() { [ "$(pg_val "$1" "SELECT lease_state FROM snowflake_stats")" = held ]; }
for d in "${NODES[@]:1}"; do
    for _ in $(seq 300); do held "$d" && break; sleep 0.1; done
    held "$d" || { echo "bench/lease.sh: no lease ($(pg_val "$d" "SELECT coordinator FROM snowflake_stats"))" >&2; exit 1; }
done

stmt="SELECT count(x) FROM (SELECT snowflake_nextval() AS x, generate_series(1, $N)) s"
# rate DIR: ids per second of one statement (psql's \timing).
rate() {
    pg_psql "$1" -c '\timing on' -c "$stmt" | awk -v n="$N" '/^Time:/ { printf "%.0f\n", n / ($2 / 1000) }'
}
for d in "${NODES[@]}"; do rate "$d" >/dev/null; done   # warm-up
# Each round runs every instance once; the order rotates, so that each goes
# first, second (and third) equally often over the rounds.
printf 'round\tstatic_ids_per_s\tetcd_ids_per_s\tetcd_ratio\tzookeeper_ids_per_s\tzookeeper_ratio\n' >"$OUT/data/lease.tsv"
n=${#NODES[@]}
for r in $(seq 1 "$ROUNDS"); do
    declare -A got=()
    for ((k = 0; k < n; k++)); do
        i=$(((r - 1 + k) % n))
        got[$i]=$(rate "${NODES[$i]}")
    done
    awk -v r="$r" -v a="${got[0]}" -v b="${got[1]}" -v c="${got[2]:-}" 'BEGIN {
        printf "%d\t%d\t%d\t%.4f\t", r, a, b, b / a
        if (c != "") printf "%d\t%.4f\n", c, c / a; else printf "\t\n" }' >>"$OUT/data/lease.tsv"
    unset got
done
renewals() { pg_val "$1" "SELECT lease_renewals FROM snowflake_stats"; }
{
    if [ "$ZK" = yes ]; then
        echo "Three instances, one backend each, \`$stmt\`, $ROUNDS rounds, each round running every instance once in an order that rotates; one holds its worker id from a one-member etcd on loopback ($(renewals "$L") keepalives during the run), one from a standalone ZooKeeper server on loopback ($(renewals "$Z") session renewals, session timeout $(pg_val "$Z" "SELECT lease_granted_ttl_ms FROM snowflake_stats") ms)."
    else
        echo "Two instances, one backend each, \`$stmt\`, $ROUNDS rounds alternating which goes first; the leasing one holds its worker id from a one-member etcd on loopback ($(renewals "$L") keepalives during the run). ZooKeeper is not installed here: not measured."
    fi
    echo
    echo "| | median ids/s | median ratio to static |"
    echo "|---|---|---|"
    awk -F'\t' 'NR > 1 { s[NR] = $2; l[NR] = $3; q[NR] = $4; if ($5 != "") { z[NR] = $5; zq[NR] = $6; nz++ } }
        function med(a,   k, i, j, t, v) { k = 0; for (i in a) v[++k] = a[i]; for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }; return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
        END { printf "| static worker id | %.0f | |\n| leased from etcd | %.0f | %.3fx (goal >= 0.98x) |\n", med(s), med(l), med(q)
              if (nz) printf "| leased from ZooKeeper | %.0f | %.3fx (goal >= 0.98x) |\n", med(z), med(zq) }' "$OUT/data/lease.tsv"
} >"$OUT/lease.md"
cat "$OUT/lease.md"
