# shellcheck shell=bash
# Helpers of the fault-injection suite's cases (test/fault/run.sh and its
# case files) only. Source after test/lib/suite.sh and test/lib/fault.sh
# (the instances and checks this suite shares with test/standby.sh) and
# test/lib/timex.sh (the kernel's clock state, shared with test/http.sh).

# stat_val DIR COLUMN: one column of snowflake_stats.
stat_val() { pg_val "$1" "SELECT $2 FROM snowflake_stats"; }

# app_running DIR NAME: some session has application_name NAME.
app_running() {
    [ "$(pg_val "$1" "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$2'")" -gt 0 ]
}

# load_script DIR: the pgbench script, where the postgres user can read it.
load_script() {
    cp "$FAULT_DIR/load.sql" "$1/load.sql"
    chmod 644 "$1/load.sql"
    echo "$1/load.sql"
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

# ordered DIR TABLE DESC: per-client insertion order and the seen bound hold.
ordered() {
    is "$3" "$(pg_val "$1" "SELECT order_violations('$2')")" 0
}

# test_show DIR SETTING VALUE: SHOW SETTING answers VALUE.
test_show() { [ "$(pg_val "$1" "SHOW $2")" = "$3" ]; }
