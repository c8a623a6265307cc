# shellcheck shell=bash
# Helpers of the fault-injection suite (test/fault/run.sh and its case
# files), also used by test/http.sh and test/standby.sh. Source after
# test/lib/tap.sh, test/lib/pg.sh and test/lib/faketime.sh (the clock of a
# server is moved with libfaketime: see there).

FAULT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# timex_build_shim DIR: compiles timex_shim.c (the kernel's view of time
# synchronisation, from a file) into DIR; TIMEX_SHIM is its path, or empty
# if it did not compile. Start a server with "LD_PRELOAD=$TIMEX_SHIM"
# "SF_TIMEX_FILE=DIR2/timex", and set what it answers with timex_set.
timex_build_shim() {
    TIMEX_SHIM=
    if cc -shared -fPIC -O2 -o "$1/timex_shim.so" "$FAULT_DIR/timex_shim.c" -ldl 2>"$1/timex_shim.log"; then
        chmod 755 "$1" "$1/timex_shim.so"
        TIMEX_SHIM=$1/timex_shim.so
    fi
}

# timex_set DIR "STATE STATUS MAXERROR_US ESTERROR_US": what ntp_adjtime()
# answers in the server of DIR from now on (atomically: rename).
timex_set() { printf '%s\n' "$2" >"$1/timex.tmp"; mv -f "$1/timex.tmp" "$1/timex"; }

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

# stat_val DIR COLUMN: one column of snowflake_stats.
stat_val() { pg_val "$1" "SELECT $2 FROM snowflake_stats"; }

# app_running DIR NAME: some session has application_name NAME.
app_running() {
    [ "$(pg_val "$1" "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$2'")" -gt 0 ]
}

# --- helpers of the cases ---------------------------------------------------

# pgbench DIR ARGS...: pgbench as postgres against the instance.
pgbench_on() {
    local dir=$1; shift
    as_pg "$PGBIN/pgbench" -n -h "$dir" -p "$PG_PORT" -U postgres "$@" postgres
}

# load_script DIR: the pgbench script, where the postgres user can read it.
load_script() {
    cp "$FAULT_DIR/load.sql" "$1/load.sql"
    chmod 644 "$1/load.sql"
    echo "$1/load.sql"
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

# count_where DIR TABLE CONDITION
count_where() { pg_val "$1" "SELECT count(*) FROM $2 WHERE $3"; }

# probe_fields: splits a clock_probe result line into P_*.
probe_fields() {
    IFS=$'\x1f' read -r P_BEFORE P_ISSUED P_STATE P_MSG P_DETAIL P_HINT P_REFUSALS P_OTHER P_AFTER P_VIOL <<<"$1"
}

# run_probe DIR MODE TIMEOUT LABEL: clock_probe(...) as one line, fields
# separated by \x1f (not whitespace, so that empty fields stay fields).
run_probe() {
    pg_psql "$1" -A -t -F $'\x1f' -c "SELECT * FROM clock_probe('$2', $3, '$4')"
}

# behind_ms MSG: N of "system clock moved backwards by N ms".
behind_ms() { sed -n 's/^system clock moved backwards by \([0-9]*\) ms$/\1/p' <<<"$1"; }

# no_duplicates DIR TABLE DESC
no_duplicates() {
    is "$3" "$(pg_val "$1" "SELECT count(*) - count(DISTINCT id) FROM $2")" 0
}

# ordered DIR TABLE DESC: per-client insertion order and the seen bound hold.
ordered() {
    is "$3" "$(pg_val "$1" "SELECT order_violations('$2')")" 0
}

# log_has DIR OFFSET TEXT: the server log has TEXT after byte OFFSET.
log_has() { log_since "$1" "$2" | grep -qF "$3"; }

# test_show DIR SETTING VALUE: SHOW SETTING answers VALUE.
test_show() { [ "$(pg_val "$1" "SHOW $2")" = "$3" ]; }
