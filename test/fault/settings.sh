# shellcheck shell=bash
# Cases of the fault suite (sourced by test/fault/run.sh): a hot standby and
# bad settings.
#   7  hot standby: 25006, decoders work; ids once promoted
#   8  bad settings: FATAL at start naming the setting; a bad reload ignored

# -------------------------------------------------------------------------
case_7() {
    echo "# case 7: hot standby"
    local P S X v state msg hint
    P=$(pg_tmpdir)
    fault_init "$P" "wal_level = replica" "max_wal_senders = 4" "hot_standby = on" \
        || { bail "7: primary initialised"; return; }
    pg_start "$P" || { bail "7: primary started" "$(tail -5 "$P/server.log")"; return; }
    helpers_sql "$P" || { bail "7: helpers on the primary"; return; }
    pg_val "$P" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c7' FROM generate_series(1, 10)" >/dev/null
    X=$(pg_val "$P" "SELECT max(id) FROM ids")
    S=$(pg_tmpdir)
    if ! as_pg "$PGBIN/pg_basebackup" -h "$P" -p "$PG_PORT" -U postgres -D "$S/data" -R -X stream -c fast \
            >"$S/basebackup.log" 2>&1; then
        bail "7: pg_basebackup -R from the primary" "$(tail -5 "$S/basebackup.log")"; return
    fi
    pg_conf "$S" "unix_socket_directories = '$S'"
    pg_start "$S" || { bail "7: standby started" "$(tail -10 "$S/server.log")"; return; }
    is "7: the standby is in recovery" "$(pg_val "$S" "SELECT pg_is_in_recovery()")" t
    wait_for "replay" 20 test_same_count "$P" "$S" \
        || not_ok "7: the standby replays the primary's ids"
    v=$(pg_psql "$S" -A -t -F $'\x1f' -c "SELECT state, msg, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg hint <<<"$v"
    is "7: snowflake_nextval() on the standby: SQLSTATE 25006" "$state" 25006
    is "7: ... message" "$msg" "cannot issue snowflake ids during recovery"
    like "7: ... hint says where to issue ids" "$hint" 'primary'
    is "7: snowflake_nextval_batch() on the standby refused too" \
        "$(pg_psql "$S" -A -t -c "\\set VERBOSITY verbose" -c "SELECT count(*) FROM snowflake_nextval_batch(5)" 2>&1 | grep -c 'ERROR:  25006')" 1
    is "7: snowflake_advance_floor() on the standby refused too" \
        "$(pg_psql "$S" -A -t -c "\\set VERBOSITY verbose" -c "SELECT snowflake_advance_floor($X)" 2>&1 | grep -c 'ERROR:  25006')" 1
    is "7: decoders work on the standby" \
        "$(pg_val "$S" "SELECT snowflake_worker_id($X) || ' ' || snowflake_sequence($X) || ' ' || snowflake_timestamp($X)")" \
        "$(pg_val "$P" "SELECT snowflake_worker_id($X) || ' ' || snowflake_sequence($X) || ' ' || snowflake_timestamp($X)")"
    is "7: snowflake_decode() on the standby" "$(pg_val "$S" "SELECT worker_id FROM snowflake_decode($X)")" 7
    is "7: the primary still issues ids" "$(pg_val "$P" "SELECT state FROM try_nextval()")" 00000
    pg_stop "$P"
    is "7: pg_promote() on the standby" "$(pg_val "$S" "SELECT pg_promote(true, 60)")" t
    read -r v state <<<"$(pg_val "$S" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "7: the promoted standby issues ids" "$state" 00000
    cmp_num "7: ... above the primary's ids it replayed" "${v:-0}" -gt "$X"
    pg_stop "$S"
}

test_same_count() {
    [ "$(pg_val "$1" "SELECT count(*) FROM ids")" = "$(pg_val "$2" "SELECT count(*) FROM ids" 2>/dev/null)" ]
}

# -------------------------------------------------------------------------
case_8() {
    echo "# case 8: bad settings"
    local E line name off
    E=$(pg_tmpdir)
    fault_init "$E" || { bail "8: instance initialised"; return; }
    local bad=(
        "snowflake.worker_id = 1024|snowflake.worker_id"
        "snowflake.worker_id = -2|snowflake.worker_id"
        "snowflake.epoch = 'not a timestamp'|snowflake.epoch"
        "snowflake.epoch = 'now'|snowflake.epoch"
        "snowflake.epoch = '2024-01-01 00:00:00 Foo/Bar'|snowflake.epoch"
        "snowflake.epoch = '2024-01-01'|snowflake.epoch"
        "snowflake.clock_tolerance_ms = -1|snowflake.clock_tolerance_ms"
        "snowflake.clock_tolerance_ms = 'lots'|snowflake.clock_tolerance_ms"
        "snowflake.http_worker_id = 1024|snowflake.http_worker_id"
        "snowflake.http_worker_id = 7|snowflake.http_worker_id"
    )
    for entry in "${bad[@]}"; do
        line=${entry%%|*}
        name=${entry#*|}
        fault_conf "$E" "$line"
        off=$(log_size "$E")
        if pg_start "$E"; then
            not_ok "8: '$line' stops the server from starting" "it started"
            pg_stop "$E"
            continue
        fi
        pg_reap "$E"
        if grep -q "FATAL:  invalid value for parameter \"$name\"" <(log_since "$E" "$off"); then
            ok "8: '$line': no start, FATAL names $name"
        else
            not_ok "8: '$line': no start, FATAL names $name" "$(log_since "$E" "$off" | grep -E 'FATAL|WARNING' | head -3)"
        fi
    done

    fault_conf "$E" "snowflake.clock_tolerance_ms = 7"
    pg_start "$E" || { bail "8: starts with good settings" "$(tail -5 "$E/server.log")"; return; }
    helpers_sql "$E" || { bail "8: helpers created"; return; }
    is "8: clock_tolerance_ms from the configuration" "$(pg_val "$E" "SHOW snowflake.clock_tolerance_ms")" 7ms
    for line in "snowflake.clock_tolerance_ms = -3" "snowflake.clock_tolerance_ms = 20000" \
                "snowflake.clock_tolerance_ms = 'soon'"; do
        fault_conf "$E" "$line"
        off=$(log_size "$E")
        pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
        if wait_for "reload logged" 10 log_has_re "$E" "$off" \
                '(invalid value for parameter|outside the valid range for parameter) "snowflake.clock_tolerance_ms"'; then
            ok "8: reload of '$line' is rejected with a message"
        else
            not_ok "8: reload of '$line' is rejected with a message" "$(log_since "$E" "$off" | head -5)"
        fi
        is "8: ... the previous value is kept" "$(pg_val "$E" "SHOW snowflake.clock_tolerance_ms")" 7ms
    done
    fault_conf "$E" "snowflake.clock_tolerance_ms = 9"
    pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
    if wait_for "reload applied" 10 test_show "$E" snowflake.clock_tolerance_ms 9ms; then
        ok "8: a good reloaded clock_tolerance_ms is applied"
    else
        not_ok "8: a good reloaded clock_tolerance_ms is applied" "SHOW: $(pg_val "$E" "SHOW snowflake.clock_tolerance_ms")"
    fi
    fault_conf "$E" "snowflake.clock_tolerance_ms = 9" "snowflake.worker_id = 8"
    off=$(log_size "$E")
    pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
    if wait_for "reload logged" 10 log_has "$E" "$off" '"snowflake.worker_id" cannot be changed without restarting'; then
        ok "8: a reloaded worker_id is refused with a message"
    else
        not_ok "8: a reloaded worker_id is refused with a message" "$(log_since "$E" "$off" | head -5)"
    fi
    is "8: ... worker_id kept" "$(pg_val "$E" "SHOW snowflake.worker_id")" 7
    is "8: ... ids still carry it" "$(pg_val "$E" "SELECT snowflake_worker_id(snowflake_nextval())")" 7
    # An epoch naming an unknown time zone, reloaded: PostgreSQL 15's own date
    # parser raises an error for those, which in the postmaster's reload would
    # be FATAL; the extension's parser must refuse it quietly instead.
    fault_conf "$E" "snowflake.clock_tolerance_ms = 9" "snowflake.worker_id = 7" \
        "snowflake.epoch = '2024-01-01 00:00:00 Foo/Bar'"
    off=$(log_size "$E")
    pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
    if wait_for "reload logged" 10 log_has_re "$E" "$off" 'invalid value for parameter "snowflake.epoch"'; then
        ok "8: a reloaded epoch with an unknown time zone is refused with a message"
    else
        not_ok "8: a reloaded epoch with an unknown time zone is refused with a message" "$(log_since "$E" "$off" | head -5)"
    fi
    is "8: ... the server is still up and issues ids" \
        "$(pg_val "$E" "SELECT snowflake_worker_id(snowflake_nextval())" 2>&1)" 7
    pg_stop "$E"

    # A clock the epoch does not fit is no bad setting: the server starts,
    # warns once, refuses ids with SF002 while it lasts, and does not warn
    # again in every process at a reload.
    local v state msg label clock epoch
    for entry in "2024-01-01 (before the epoch)|1704067200|2025-01-01 00:00:00+00" \
                 "now (an epoch in 2999)|+0|2999-01-01 00:00:00+00"; do
        IFS='|' read -r label clock epoch <<<"$entry"
        fault_conf "$E" "snowflake.epoch = '$epoch'"
        if [ "$clock" = +0 ]; then ft_set "$E" 0; else ft_set_clock "$E" "$clock"; fi
        off=$(log_size "$E")
        ft_start "$E" || { not_ok "8: clock $label at boot: the server starts"; continue; }
        ok "8: clock $label at boot: the server starts"
        is "8: ... with one WARNING naming the epoch" \
            "$(log_since "$E" "$off" | grep -c 'WARNING:  system clock .* does not fit snowflake.epoch')" 1
        v=$(pg_psql "$E" -A -t -F $'\x1f' -c "SELECT state, msg FROM try_nextval()")
        IFS=$'\x1f' read -r state msg <<<"$v"
        is "8: ... ids refused with SF002" "$state" SF002
        off=$(log_size "$E")
        pg_val "$E" "SELECT pg_reload_conf()" >/dev/null
        sleep 0.5
        pg_val "$E" "SELECT 1" >/dev/null
        sleep 0.5
        is "8: ... a reload warns no more" "$(log_since "$E" "$off" | grep -c 'does not fit snowflake.epoch')" 0
        pg_stop "$E"
    done
    fault_conf "$E"
    ft_set "$E" 0
}

log_has_re() { log_since "$1" "$2" | grep -qE "$3"; }
