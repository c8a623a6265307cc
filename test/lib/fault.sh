# shellcheck shell=bash
# Instances for fault injection and the checks on what they issued: used by
# the fault-injection suite (test/fault/run.sh) and the standby suite
# (test/standby.sh). Source after test/lib/suite.sh (tap.sh, pg.sh,
# faketime.sh: the clock of a server is moved with libfaketime, see there).
# The SQL they load (helpers.sql, load.sql) is the fault suite's, in
# test/fault/ (FAULT_DIR).

FAULT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fault" && pwd)

# fault_init DIR [conf lines...]: an instance with snowflake preloaded
# (worker 7) whose configuration includes DIR/data/fault.conf (see
# fault_conf).
fault_init() {
    local dir=$1; shift
    pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" \
        "autovacuum = off" "log_min_messages = info" "include_if_exists = 'fault.conf'" "$@"
}

# fault_conf DIR [lines...]: replaces DIR/data/fault.conf.
fault_conf() {
    local dir=$1; shift
    printf '%s\n' "$@" | as_pg tee "$dir/data/fault.conf" >/dev/null
}

# helpers_sql DIR: creates the extension and the SQL helpers of the suite.
helpers_sql() {
    # Fed on standard input: the postgres user may not be able to read the
    # checkout (a clone under /root, say).
    pg_psql "$1" <"$FAULT_DIR/helpers.sql" >/dev/null
}

# pgbench_on DIR ARGS...: pgbench as postgres against the instance.
pgbench_on() {
    local dir=$1; shift
    as_pg "$PGBIN/pgbench" -n -h "$dir" -p "$PG_PORT" -U postgres "$@" postgres
}

# pgbench_clean LOG STATUS DESC: pgbench finished with status 0 and reported
# no failed transaction.
pgbench_clean() {
    local log=$1 status=$2 desc=$3 failed
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$log")
    if [ "$status" = 0 ] && [ "${failed:-0}" = 0 ] && grep -q '^number of transactions actually processed' "$log"; then
        ok "$desc"
    else
        not_ok "$desc" "pgbench exit status $status, failed transactions '${failed:-?}'" \
            "$(grep -E 'error|ERROR|abort|failed' "$log" | head -5)"
    fi
}

# no_duplicates DIR TABLE DESC
no_duplicates() {
    is "$3" "$(pg_val "$1" "SELECT count(*) - count(DISTINCT id) FROM $2")" 0
}

# log_has DIR OFFSET TEXT: the server log has TEXT after byte OFFSET.
log_has() { log_since "$1" "$2" | grep -qF "$3"; }
