# shellcheck shell=bash
# Sourced by the benchmarks that time `SELECT snowflake_nextval()` beside
# other traffic (bench/http_ceiling.sh, bench/buffer.sh): one psql session
# runs the statements one at a time, and psql's \timing of each (the round
# trip included) gives the latency. pgbench's per-transaction log is not used:
# on this machine it logged 0 us for more than half of these ~0.05 ms
# transactions (its average was right), so its percentiles say nothing here.

# sql_latency_script FILE N: writes the psql script of N timed statements.
sql_latency_script() {
    local file=$1 n=$2
    {
        printf '%s\n' '\timing on' '\o /dev/null'
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
