# shellcheck shell=bash
# Sourced by the benchmarks that time `SELECT snowflake_nextval()` beside
# other traffic (bench/http_ceiling.sh, bench/buffer.sh): one psql session
# runs the statements one at a time, and psql's \timing of each (the round
# trip included) gives the latency. pgbench's per-transaction log is not used:
# on this machine it logged 0 us for more than half of these ~0.05 ms
# transactions (its average was right), so its percentiles say nothing here.

# sql_latency_script FILE N [IDS]: writes the psql script of N timed
# statements; their ids go to the file IDS (default /dev/null: not kept), the
# timings to psql's standard output.
sql_latency_script() {
    local file=$1 n=$2 ids=${3:-/dev/null}
    {
        printf '%s\n' '\timing on' "\\o $ids"
        for _ in $(seq 1 "$n"); do echo 'SELECT snowflake_nextval();'; done
    } >"$file"
    chmod 644 "$file"
}

# sql_latency_summary LOG: "statements<TAB>p50_ms<TAB>p99_ms<TAB>mean_ms" of
# psql's "Time: 0.123 ms" lines in LOG (percentiles by nearest rank).
sql_latency_summary() {
    awk '/^Time:/ { print $2 }' "$1" | sort -n | awk '
        { v[NR] = $1; sum += $1 }
        END {
            i50 = int(0.50 * NR + 0.999999); i99 = int(0.99 * NR + 0.999999)
            printf "%d\t%.4f\t%.4f\t%.4f\n", NR, v[i50], v[i99], (NR ? sum / NR : 0) }'
}

SQL_LATENCY_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# sql_ids_max_sequence IDS: the highest sequence (the id's place within its
# millisecond, from 0; the layout's from bench/lib/layout.py) among the ids
# in IDS, as a run of sql_latency_script FILE N IDS wrote them; -1 if none.
# Where SQL's ids have a generator to themselves (snowflake.http_worker_id
# set) and one session issues them, a highest sequence below the last of a
# millisecond means that no SQL call found its millisecond used up: no
# overflow wait was SQL's.
sql_ids_max_sequence() {
    /usr/bin/python3 - "$1" "$SQL_LATENCY_LIB" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import layout
mask = layout.ids_per_ms() - 1
top = -1
with open(sys.argv[1], encoding="ascii") as f:
    for line in f:
        v = line.strip()
        if v.isdigit():
            top = max(top, int(v) & mask)
print(top)
PY
}
