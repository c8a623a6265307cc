# Helpers of the fault-injection suite (test/fault/run.sh), also used by
# test/http.sh and test/standby.sh. Source after
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

