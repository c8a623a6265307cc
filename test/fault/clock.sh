# shellcheck shell=bash
# Cases of the fault suite (sourced by test/fault/run.sh): the clock of a
# running server moved under it with libfaketime, and the kernel's view of
# the clock (timex_shim.c).
#   0  the clock really moves, for backends and for the mark worker
#   1  clock back 1-4 ms under load: waited out
#   2  clock back 10 ms, 1 s, 1 h: SF001, and when ids resume
#   3  clock forward 1 h; clock before the epoch: SF002
#  12  the clock steps back while a call waits for it: SF001 at once
#  15  snowflake.max_clock_error_ms against the kernel's clock state

timex_build_shim "$SHIM_DIR"

# -------------------------------------------------------------------------
# Instance A: cases 0-3. Its clock starts at the real time (+0).
A=
start_a() {
    [ -n "$A" ] && return 0
    A=$(pg_tmpdir)
    fault_init "$A" || { bail "instance A initialised"; return 1; }
    ft_start "$A" || { bail "instance A started under libfaketime"; return 1; }
    helpers_sql "$A" || { bail "helpers created on instance A"; return 1; }
}

# 0: the clock of a running server moves when the file changes.
case_0() {
    echo "# case 0: libfaketime moves the clock of the running server"
    start_a || return
    local pid
    pid=$(pg_postmaster_pid "$A")
    check "0: libfaketime is loaded in the postmaster" grep -q libfaketime "/proc/$pid/maps"
    local off t0 t1 v clock now lo hi
    for off in -3600 -0.25 +0; do
        ft_set "$A" "$off"
        t0=$(real_now)
        v=$(pg_val "$A" "SELECT extract(epoch FROM clock_timestamp()) || ' ' || extract(epoch FROM now())")
        t1=$(real_now)
        read -r clock now <<<"$v"
        lo=$(awk -v t="$t0" -v o="$off" 'BEGIN { printf "%.6f", t + o - 0.002 }')
        hi=$(awk -v t="$t1" -v o="$off" 'BEGIN { printf "%.6f", t + o + 0.002 }')
        if fcmp "$clock" '>=' "$lo" && fcmp "$clock" '<=' "$hi" && fcmp "$now" '>=' "$lo" && fcmp "$now" '<=' "$hi"; then
            ok "0: offset $off s: clock_timestamp() and now() read real time $off s"
        else
            not_ok "0: offset $off s: clock_timestamp() and now() read real time $off s" \
                "clock_timestamp $clock, now $now, expected within [$lo, $hi]"
        fi
    done
    # The mark worker is a background worker, not a backend: it must see the
    # moved clock too (see select_shim.c). With the clock an hour behind, its
    # renewals must stay about a second ahead of the ids, not of real time.
    ft_set "$A" -3600
    probe_fields "$(run_probe "$A" step 1.5 c0)"
    is "0: 1.5 s of ids with the clock an hour behind, no error" "$P_STATE" ""
    # (A worker on the real clock would reserve an hour past the ids.)
    v=$(pg_val "$A" "SELECT reservations || ' ' || extract(epoch FROM high_water_mark - last_timestamp) FROM snowflake_stats")
    local res gap
    read -r res gap <<<"$v"
    if [[ $res =~ ^[0-9]+$ ]] && [ "$res" -gt 1 ] && fcmp "$gap" '>=' 0 && fcmp "$gap" '<' 3; then
        ok "0: the mark worker renews in the moved clock's time (mark $gap s past the last id)"
    else
        not_ok "0: the mark worker renews in the moved clock's time" \
            "reservations $res, mark $gap s past the last id (want > 1 and 0..3 s)"
    fi
    ft_set "$A" 0
}

# 1: clock steps back within snowflake.clock_tolerance_ms (5 ms) under load.
case_1() {
    echo "# case 1: clock back 1-4 ms while 3 clients issue ids"
    start_a || return
    local script log pid status rows step n_steps
    script=$(load_script "$A")
    log="$A/pgbench_c1.log"
    pg_val "$A" "SELECT snowflake_stats_reset()" >/dev/null
    pgbench_on "$A" -c 3 -j 3 -T 8 -f "$script" -D tbl=load_ids -D phase=c1 >"$log" 2>&1 &
    pid=$!
    if ! wait_for "load started" 20 test_rows_at_least "$A" load_ids 200; then
        kill "$pid" 2>/dev/null; wait "$pid"; bail "1: load started" "$(tail -5 "$log")"; return
    fi
    # Steps 0.3 s apart (the clients issue several hundred ids in between),
    # so that one step is waited out before the next: each is 1-4 ms.
    local steps=(0.001 0.002 0.003 0.004 0.004 0.002)
    for step in "${steps[@]}"; do
        ft_shift "$A" "-$step"
        sleep 0.3
    done
    if kill -0 "$pid" 2>/dev/null; then
        ok "1: the load ran across all ${#steps[@]} steps back"
        n_steps=$(count_where "$A" load_ids true)
    else
        not_ok "1: the load ran across all ${#steps[@]} steps back" "pgbench ended early (slow machine?)"
        n_steps=0
    fi
    wait "$pid"; status=$?
    pgbench_clean "$log" "$status" "1: pgbench: no failed transaction (no error, no duplicate key)"
    rows=$(count_where "$A" load_ids true)
    cmp_num "1: ids issued after the last step ($((rows - n_steps)) of $rows)" "$((rows - n_steps))" -gt 0
    no_duplicates "$A" load_ids "1: no duplicate id"
    ordered "$A" load_ids "1: ids increase per client and exceed every id committed before"
    local ev er mx
    read -r ev er mx <<<"$(pg_val "$A" "SELECT clock_backwards_events || ' ' || clock_backwards_errors || ' ' || clock_backwards_max_ms FROM snowflake_stats")"
    cmp_num "1: clock_backwards_events > 0 ($ev)" "$ev" -gt 0
    is "1: clock_backwards_errors = 0" "$er" 0
    if [[ $mx =~ ^[0-9]+$ ]] && [ "$mx" -ge 1 ] && [ "$mx" -le 5 ]; then
        ok "1: clock_backwards_max_ms within the tolerance ($mx)"
    else
        not_ok "1: clock_backwards_max_ms within the tolerance" "got '$mx', want 1..5"
    fi
}

test_not_running() { ! kill -0 "$1" 2>/dev/null; }
test_rows_at_least() { [ "$(count_where "$1" "$2" true 2>/dev/null || echo 0)" -ge "$3" ]; }

# 2: clock steps back beyond the tolerance.
case_2() {
    echo "# case 2: clock back 10 ms, 1 s, 1 h: SF001, then ids resume"
    start_a || return
    local d label out pid errs0 errs1 n dms
    for d in 0.010 1 3600; do
        label="c2-${d}s"
        dms=$(awk -v d="$d" 'BEGIN { printf "%d", d * 1000 + 0.5 }')
        errs0=$(stat_val "$A" clock_backwards_errors)
        out="$A/probe_$label.out"
        run_probe "$A" step 20 "$label" >"$out" 2>&1 &
        pid=$!
        if ! wait_for "probe issuing" 10 app_running "$A" probe:issuing; then
            wait "$pid"; bail "2 ($d s): probe started" "$(cat "$out")"; continue
        fi
        if [ "$d" = 0.010 ]; then
            # The probe's last id is fresh only if it was running when the
            # clock moved: a probe descheduled for over 5 ms at that moment
            # sees a smaller step and (rightly) waits. Step again then.
            for attempt in 1 2 3 4 5 6 7 8 9 10 11 12; do
                ft_shift "$A" "-$d"
                wait_for "probe done" 0.5 test_not_running "$pid" && break
            done
            echo "# 10 ms steps made until refused: $attempt"
        else
            ft_shift "$A" "-$d"
        fi
        if [ "$d" = 3600 ]; then
            # Refused now; put the clock right again.
            if wait_for "probe refused" 10 app_running "$A" probe:refused; then
                ok "2 ($d s): refused while the clock is an hour behind"
            else
                not_ok "2 ($d s): refused while the clock is an hour behind"
            fi
            ft_shift "$A" "+$d"
        fi
        wait "$pid"
        probe_fields "$(cat "$out")"
        is "2 ($d s): snowflake_nextval() fails with SQLSTATE SF001" "$P_STATE" SF001
        n=$(behind_ms "$P_MSG")
        if [[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt 5 ] && [ "$n" -le "$dms" ] && [ "$n" -ge $((dms - 100)) ]; then
            ok "2 ($d s): message: $P_MSG"
        else
            not_ok "2 ($d s): message says how far the clock moved back" "got: '$P_MSG'" "want: 'system clock moved backwards by N ms' with 5 < N <= $dms"
        fi
        like "2 ($d s): hint says when ids resume" "$P_HINT" 'ids resume when the clock (passes|reaches) [0-9]{4}-'
        like "2 ($d s): detail names the last issued time and the tolerance" "$P_DETAIL" '^Ids have been issued up to .*snowflake.clock_tolerance_ms is 5\.$'
        if [ -n "$P_AFTER" ]; then
            ok "2 ($d s): ids resume (after $P_REFUSALS refused calls)"
            is "2 ($d s): the resume time of the hint is the last id's millisecond or the next" \
                "$(pg_val "$A" "SELECT resume_at(\$\$$P_HINT\$\$) - snowflake_timestamp($P_BEFORE) IN ('0', '1 ms')")" t
            is "2 ($d s): the first id after it is not earlier than the hint said" \
                "$(pg_val "$A" "SELECT snowflake_timestamp($P_AFTER) >= resume_at(\$\$$P_HINT\$\$)")" t
            cmp_num "2 ($d s): the first id after it is above the last before" "$P_AFTER" -gt "$P_BEFORE"
        else
            not_ok "2 ($d s): ids resume" "no id within 20 s; probe: $(cat "$out")"
        fi
        is "2 ($d s): only SF001 while waiting" "$P_OTHER" ""
        is "2 ($d s): ids strictly increasing in the session ($P_ISSUED before the step)" "$P_VIOL" 0
        errs1=$(stat_val "$A" clock_backwards_errors)
        cmp_num "2 ($d s): clock_backwards_errors counted (+$((errs1 - errs0)))" "$((errs1 - errs0))" -gt 0
    done
    no_duplicates "$A" ids "2: no duplicate id"
    ordered "$A" ids "2: every id above the ones before"
}

# 3: the clock jumps forward an hour.
case_3() {
    echo "# case 3: clock forward 1 h: ids follow"
    start_a || return
    local max0 t0 v id state ahead
    pg_val "$A" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c3-before' FROM generate_series(1, 100)" >/dev/null
    max0=$(pg_val "$A" "SELECT max(id) FROM ids")
    ft_shift "$A" +3600
    local off t1 lo hi
    ft_get_us "$A"; us_to_s "$REPLY"; off=$REPLY     # an hour, plus the earlier steps back
    t0=$(real_now)
    v=$(pg_val "$A" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")
    t1=$(real_now)
    read -r id state <<<"$v"
    is "3: snowflake_nextval() works after the jump" "$state" 00000
    [[ $id =~ ^[0-9]+$ ]] || { bail "3: an id after the jump" "got '$v'"; return; }
    pg_val "$A" "INSERT INTO ids(id, phase) VALUES ($id, 'c3-after')" >/dev/null
    ahead=$(pg_val "$A" "SELECT id_unix($id)")
    lo=$(awk -v t="$t0" -v o="$off" 'BEGIN { printf "%.3f", t + o - 0.002 }')
    hi=$(awk -v t="$t1" -v o="$off" 'BEGIN { printf "%.3f", t + o + 0.002 }')
    if fcmp "$off" '>=' 3598 && fcmp "$off" '<=' 3600 && fcmp "$ahead" '>=' "$lo" && fcmp "$ahead" '<=' "$hi"; then
        ok "3: the new id's time is the real time plus the offset ($off s)"
    else
        not_ok "3: the new id's time is the real time plus the offset ($off s)" "id time $ahead, want [$lo, $hi]"
    fi
    cmp_num "3: the new id is above every id before" "$id" -gt "$max0"
    pg_val "$A" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c3-more' FROM generate_series(1, 1000)" >/dev/null

    # A clock before snowflake.epoch (2025-01-01): SF002, then back.
    local saved v msg
    ft_get_us "$A"; saved=$REPLY
    ft_set_clock "$A" 1704067200                # 2024-01-01 00:00:00 UTC
    v=$(pg_psql "$A" -A -t -F $'\x1f' -c "SELECT state, msg FROM try_nextval()")
    IFS=$'\x1f' read -r state msg <<<"$v"
    is "3: clock before the epoch: SQLSTATE SF002" "$state" SF002
    is "3: ... message" "$msg" "system clock is before the id range of snowflake.epoch"
    ft_set_us "$A" "$saved"
    read -r id state <<<"$(pg_val "$A" "SELECT coalesce(id::text, 'none') || ' ' || state FROM try_nextval()")"
    is "3: ids again once the clock is back" "$state" 00000
    # uuidv7(interval) with a clock past 2262, where nanoseconds since 1970
    # no longer fit 64 bits.
    ft_set_clock "$A" 10413792000               # 2300-01-01 00:00:00 UTC
    is "3: uuidv7(interval) with the clock in 2300" \
        "$(pg_val "$A" "SELECT uuidv7_timestamp(uuidv7('1 hour')) - '2300-01-01 01:00:00+00' BETWEEN '0' AND '10 s'")" t
    ft_set_us "$A" "$saved"
    [[ $id =~ ^[0-9]+$ ]] && pg_val "$A" "INSERT INTO ids(id, phase) VALUES ($id, 'c3-epoch')" >/dev/null
    no_duplicates "$A" ids "3: no duplicate id"
    ordered "$A" ids "3: every id above the ones before"
}

# -------------------------------------------------------------------------
# 12: a call waiting for the clock re-reads it: a further step back while it
# waits is an error at once, not a wait of the new distance.
call_waiting() {
    [ "$(pg_val "$1" "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%$2%' AND state = 'active' AND pid <> pg_backend_pid()")" -gt 0 ]
}
case_12() {
    echo "# case 12: the clock steps back while a call waits for it"
    start_a || return
    local out pid t1 el state msg errs0
    fault_conf "$A" "snowflake.clock_tolerance_ms = 10000"
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    wait_for "reload" 10 test_show "$A" snowflake.clock_tolerance_ms 10s || { bail "12: tolerance 10 s"; return; }
    pg_val "$A" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c12' FROM generate_series(1, 10)" >/dev/null
    errs0=$(stat_val "$A" clock_backwards_errors)
    ft_shift "$A" -5                            # the next call waits about 5 s
    out="$A/c12.out"
    PG_TIMEOUT=30 pg_psql "$A" -A -t -F $'\x1f' -c "SELECT state, msg, 'c12-wait' FROM try_nextval()" >"$out" 2>&1 &
    pid=$!
    wait_for "waiting" 5 call_waiting "$A" c12-wait || not_ok "12: a call waits for the clock"
    sleep 0.5
    ft_shift "$A" -3600
    t1=$(real_now)
    wait "$pid"
    el=$(elapsed_since "$t1")
    IFS=$'\x1f' read -r state msg _ <"$out"
    is "12: the waiting call fails with SF001" "$state" SF001
    like "12: ... naming the whole step" "$msg" '^system clock moved backwards by 36[0-9]{5} ms$'
    if fcmp "$el" '<' 1; then ok "12: ... within $el s of the step"; else not_ok "12: ... within a second of the step" "took $el s"; fi
    cmp_num "12: clock_backwards_errors counted" "$(stat_val "$A" clock_backwards_errors)" -gt "$errs0"

    # A cancel ends a wait for the clock at once too.
    ft_shift "$A" +3600                         # 5 s behind again
    PG_TIMEOUT=30 pg_psql "$A" -A -t -c "SELECT 'c12-cancel', snowflake_nextval()" >"$out" 2>&1 &
    pid=$!
    if wait_for "waiting" 5 call_waiting "$A" c12-cancel; then
        t1=$(real_now)
        pg_val "$A" "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%c12-cancel%' AND pid <> pg_backend_pid()" >/dev/null
        wait "$pid"
        el=$(elapsed_since "$t1")
        like "12: pg_cancel_backend() ends a wait for the clock" "$(cat "$out")" 'canceling statement due to user request'
        if fcmp "$el" '<' 1; then ok "12: ... within $el s"; else not_ok "12: ... within a second" "took $el s"; fi
    else
        kill "$pid" 2>/dev/null; wait "$pid"
        not_ok "12: a second call waits for the clock" "$(cat "$out")"
    fi
    ft_shift "$A" +5
    fault_conf "$A"
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    wait_for "reload" 10 test_show "$A" snowflake.clock_tolerance_ms 5ms || not_ok "12: tolerance back to 5 ms"
    no_duplicates "$A" ids "12: no duplicate id"
}

# -------------------------------------------------------------------------
# 15: snowflake.max_clock_error_ms against what the kernel says of the clock
# (timex_shim.c answers ntp_adjtime() from a file: this machine's own clock
# state is whatever it is).
case_15() {
    echo "# case 15: clock health: snowflake.max_clock_error_ms"
    local H v state msg detail hint
    [ -n "$TIMEX_SHIM" ] || { bail "15: test/fault/timex_shim.c compiled"; return; }
    H=$(pg_tmpdir)
    fault_init "$H" || { bail "15: instance initialised"; return; }
    timex_set "$H" "0 0 3000 1000"              # synchronised, 3 ms maximum error
    pg_start "$H" "LD_PRELOAD=$TIMEX_SHIM" "SF_TIMEX_FILE=$H/timex" || { bail "15: started"; return; }
    helpers_sql "$H" || { bail "15: helpers created"; return; }
    is "15: the stats show the kernel's view" \
        "$(pg_val "$H" "SELECT clock_synchronized || ' ' || clock_max_error_ms || ' ' || clock_est_error_ms FROM snowflake_stats")" "true 3 1"
    is "15: with the check off (0), ids whatever the kernel says" "$(pg_val "$H" "SELECT state FROM try_nextval()")" 00000
    fault_conf "$H" "snowflake.max_clock_error_ms = 10"
    pg_val "$H" "SELECT pg_reload_conf()" >/dev/null
    wait_for "reload" 10 test_show "$H" snowflake.max_clock_error_ms 10ms || not_ok "15: max_clock_error_ms reloaded"
    is "15: synchronised, 3 ms maximum error, limit 10 ms: ids" "$(pg_val "$H" "SELECT state FROM try_nextval()")" 00000
    timex_set "$H" "0 0 25000 2000"
    sleep 0.2                                   # each backend asks the kernel at most every 100 ms
    v=$(pg_psql "$H" -A -t -F $'\x1f' -c "SELECT state, msg, detail, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg detail hint <<<"$v"
    is "15: maximum error 25 ms above the limit: SF004" "$state" SF004
    is "15: ... message" "$msg" "system clock error is too large"
    like "15: ... detail names the error and the limit" "$detail" '25.*10'
    like "15: ... hint names chrony or ntpd" "$hint" 'chrony'
    timex_set "$H" "5 64 16000000 16000000"
    v=$(pg_psql "$H" -A -t -F $'\x1f' -c "SELECT state, msg, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg hint <<<"$v"
    is "15: kernel says unsynchronised: SF004" "$state" SF004
    is "15: ... message" "$msg" "system clock is not synchronised"
    like "15: ... hint names chrony" "$hint" 'chrony'
    cmp_num "15: refusals counted" "$(stat_val "$H" clock_health_refusals)" -ge 2
    is "15: the stats show it" "$(stat_val "$H" clock_synchronized)" f
    timex_set "$H" "0 0 2000 500"
    sleep 0.2
    is "15: synchronised again: ids" "$(pg_val "$H" "SELECT state FROM try_nextval()")" 00000
    pg_stop "$H"
}
