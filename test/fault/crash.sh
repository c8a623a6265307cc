# shellcheck shell=bash
# Cases of the fault suite (sourced by test/fault/run.sh): crashes and the
# reservation on disk that ids wait out after them.
#   9  a clock glitch far ahead with no id issued in it, then kill -9
#  10  a backend killed with SIGKILL resets shared memory
#  13  a crash, then a clean stop with no id issued
#  16  kill -9 at points of the mark's renewal cycle (issue 22)

# -------------------------------------------------------------------------
# 9: a clock glitch far ahead must not move the durable mark. The operations
# guide promises that after a crash "ids resume once the clock passes the last
# reservation: at most one second after the crash with a correct clock".
case_9() {
    echo "# case 9: clock glitches forward, then a crash: ids resume within a second"
    local C out saved markms idms lastms
    C=$(pg_tmpdir)
    fault_init "$C" "fsync = on" || { bail "9: instance initialised"; return; }
    ft_start "$C" || { bail "9: started under libfaketime"; return; }
    helpers_sql "$C" || { bail "9: helpers created"; return; }

    # 9a: while ids are issued, the clock jumps past the end of the id range
    # (year 2100) for a moment: ids are refused (SF002), none is issued there.
    out="$C/probe_9a.out"
    run_probe "$C" step 20 c9a >"$out" 2>&1 &
    local pid=$!
    wait_for "probe issuing" 10 app_running "$C" probe:issuing || { wait "$pid"; bail "9a: probe started" "$(cat "$out")"; return; }
    sleep 0.3
    ft_get_us "$C"; saved=$REPLY
    ft_set_clock "$C" 4102444800                # 2100-01-01 00:00:00 UTC
    wait_for "probe refused" 10 app_running "$C" probe:refused
    sleep 0.5                                   # several ticks of the mark worker
    markms=$(mark_ms "$C")
    ft_set_us "$C" "$saved"
    wait "$pid"
    probe_fields "$(cat "$out")"
    is "9a: clock past the end of the id range: SQLSTATE SF002" "$P_STATE" SF002
    is "9a: ... message" "$P_MSG" "system clock is past the end of the id range of snowflake.epoch"
    cmp_num "9a: ids resume when the clock is put right" "${P_AFTER:-0}" -gt "$P_BEFORE"
    lastms=$((P_BEFORE >> 22))
    if [ "$markms" -le $((lastms + 2000)) ]; then
        ok "9a: the durable mark stayed near the last id"
    else
        not_ok "9a: the durable mark stayed near the last id" \
            "mark $markms ms, last id at $lastms ms: $(( (markms - lastms) / 86400000 )) days ahead (end of range: $(( (1 << 41) - 1 )))"
    fi
    pg_kill9 "$C" && wait_for "gone" 10 pg_gone "$C" || { bail "9a: postmaster killed"; return; }
    ft_start "$C" || { bail "9a: restarted"; return; }
    probe_fields "$(run_probe "$C" resume 3 c9a-restart)"
    if [ -n "$P_AFTER" ]; then
        ok "9a: after kill -9 and restart with a correct clock, ids within 3 s"
    else
        not_ok "9a: after kill -9 and restart with a correct clock, ids within 3 s" \
            "$P_STATE: $P_MSG" "$P_HINT"
    fi

    # 9b: a plain glitch of +1 day right after some ids (the worker still
    # renews), with no id issued during it.
    pg_stop "$C"
    rm -f "$(mark_file "$C")"                   # the repair of docs/operations.md
    ft_start "$C" || { bail "9b: restarted"; return; }
    pg_val "$C" "SELECT snowflake_advance_floor(max(id)) FROM ids" >/dev/null ||
        not_ok "9b: snowflake_advance_floor() after removing the mark"
    idms=$(pg_val "$C" "SELECT max(id_ms(snowflake_nextval())) FROM generate_series(1, 20000)")
    ft_shift "$C" 86400
    sleep 0.4                                   # several ticks of the mark worker
    ft_shift "$C" -86400
    markms=$(mark_ms "$C")
    # The worker keeps renewing while the server is quiet, a window ahead of
    # the clock: the mark follows the clock, not the glitch.
    nowms=$(pg_val "$C" "SELECT id_ms(snowflake_from_timestamp(clock_timestamp()))")
    if [ "$markms" -le $((nowms + 2000)) ]; then
        ok "9b: a +1 day glitch with no id in it leaves the durable mark near the clock ($((markms - nowms)) ms ahead)"
    else
        not_ok "9b: a +1 day glitch with no id in it leaves the durable mark near the clock" \
            "mark $markms ms, clock at $nowms ms, last id at $idms ms: $(( (markms - nowms) / 1000 )) s ahead"
    fi
    pg_kill9 "$C" && wait_for "gone" 10 pg_gone "$C" || { bail "9b: postmaster killed"; return; }
    ft_start "$C" || { bail "9b: restarted"; return; }
    probe_fields "$(run_probe "$C" resume 3 c9b-restart)"
    if [ -n "$P_AFTER" ]; then
        ok "9b: after kill -9 and restart with a correct clock, ids within 3 s"
    else
        not_ok "9b: after kill -9 and restart with a correct clock, ids within 3 s" \
            "$P_STATE: $P_MSG" "$P_HINT"
    fi
    pg_stop "$C"
}

# -------------------------------------------------------------------------
# 10: a backend killed with SIGKILL makes the postmaster reset shared memory
# and start again from the mark on disk: the last reservation, up to a second
# ahead of a correct clock. Ids must wait that out, not fail with SF001.
case_10() {
    echo "# case 10: crash restart of shared memory: ids wait out the reservation"
    local C before victim after errors i
    C=$(pg_tmpdir)
    fault_init "$C" "fsync = on" || { bail "10: instance initialised"; return; }
    pg_start "$C" || { bail "10: started"; return; }
    helpers_sql "$C" || { bail "10: helpers created"; return; }
    before=$(pg_val "$C" "SELECT max(x) FROM (SELECT snowflake_nextval() AS x FROM generate_series(1, 20000)) s")
    pg_psql "$C" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
    victim=""
    for i in $(seq 1 100); do
        victim=$(pg_val "$C" "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' AND pid <> pg_backend_pid()")
        [ -n "$victim" ] && break
        sleep 0.05
    done
    [ -n "$victim" ] || { bail "10: a backend to kill"; return; }
    kill -9 "$victim"
    wait 2>/dev/null
    # The first id after the reset, as soon as connections are accepted.
    after=""
    for i in $(seq 1 200); do
        after=$(pg_val "$C" "SELECT snowflake_nextval()" 2>&1) && break
        case "$after" in *SF001*|*"moved backwards"*) break ;; esac
        sleep 0.05
    done
    case "$after" in
        ''|*[!0-9]*) not_ok "10: the first id after the reset is issued (no clock error)" "$after" ;;
        *) ok "10: the first id after the reset is issued (no clock error)" ;;
    esac
    cmp_num "10: ... and it is above every id before the crash" "${after:-0}" -gt "$before"
    echo "# startup_waits after the reset: $(pg_val "$C" "SELECT startup_waits FROM snowflake_stats")"
    errors=$(pg_val "$C" "SELECT clock_backwards_errors + clock_backwards_events FROM snowflake_stats")
    is "10: no clock step counted for the reservation" "$errors" 0
    pg_stop "$C"
}

# -------------------------------------------------------------------------
# 13: a clean stop that issued nothing after a crash keeps the crash
# reservation as it is: the start after it still waits it out.
case_13() {
    echo "# case 13: crash, restart, clean stop with no id: the reservation keeps its kind"
    local F M markms markunix
    F=$(pg_tmpdir)
    fault_init "$F" "fsync = on" || { bail "13: instance initialised"; return; }
    ft_start "$F" || { bail "13: started"; return; }
    helpers_sql "$F" || { bail "13: helpers created"; return; }
    pg_val "$F" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c13' FROM generate_series(1, 5000)" >/dev/null
    M=$(pg_val "$F" "SELECT max(id) FROM ids")
    pg_kill9 "$F" && wait_for "gone" 10 pg_gone "$F" || { bail "13: postmaster killed"; return; }
    markms=$(mark_ms "$F")
    is "13: the mark after the crash is a reservation" "$(mark_flags "$F")" 0
    ft_start "$F" || { bail "13: restarted"; return; }
    pg_stop "$F"
    is "13: a clean stop with no id issued keeps it a reservation" "$(mark_flags "$F")" 0
    is "13: ... at the same millisecond" "$(mark_ms "$F")" "$markms"
    ft_start "$F" || { bail "13: started again"; return; }
    markunix=$(awk -v m="$markms" 'BEGIN { printf "%.3f", (1735689600000 + m) / 1000 }')
    ft_set_clock "$F" "$(awk -v m="$markunix" 'BEGIN { printf "%.6f", m - 0.5 }')"
    probe_fields "$(PG_TIMEOUT=30 run_probe "$F" resume 5 c13)"
    is "13: the clock half a second behind it is waited out, not refused" "$P_STATE" ""
    cmp_num "13: ... the first id is above every id before the crash" "${P_AFTER:-0}" -gt "$M"
    cmp_num "13: ... and beyond the reservation" "$(( ${P_AFTER:-0} >> 22 ))" -gt "$markms"
    ft_set "$F" 0
    pg_stop "$F"
}

# -------------------------------------------------------------------------
# 16: a crash with a correct clock, wherever the mark stands in its renewal
# cycle. The mark worker renews with less than half a window left, from the
# old end: the mark is 0.5 to 1.5 windows ahead of the clock.

# crash_at_leads DIR LABEL LEAD_MS...: for each LEAD_MS, waits until DIR's
# mark file reaches that far (+-50 ms) past the clock, kills the postmaster
# with SIGKILL, starts it again and checks that the first id waits instead
# of failing with SF001.
crash_at_leads() {
    local C=$1 label=$2 epoch_ms lead_ms want lo hi before after t i
    shift 2
    epoch_ms=$(pg_val "$C" "SELECT (extract(epoch FROM current_setting('snowflake.epoch')::timestamptz) * 1000)::bigint")
    mark_lead() { now_us; lead_ms=$(( $(mark_ms "$C") - (REPLY / 1000 - epoch_ms) )); }
    lead_at() { mark_lead; [ "$lead_ms" -ge "$lo" ] && [ "$lead_ms" -lt "$hi" ]; }
    for want in "$@"; do
        lo=$((want - 50)); hi=$((want + 50))
        before=$(pg_val "$C" "SELECT max(x) FROM (SELECT snowflake_nextval() AS x FROM generate_series(1, 1000)) s")
        if ! wait_for "lead $want" 20 lead_at; then
            not_ok "16 ($label): the mark reaches ${want} ms past the clock at some point" "last seen: $lead_ms ms"
            continue
        fi
        kill -9 "$(pg_postmaster_pid "$C")"
        t=$lead_ms
        pg_reap "$C"
        pg_start "$C" || { bail "16 ($label): restarted after the crash"; return 1; }
        after=""
        for i in $(seq 1 300); do
            after=$(pg_val "$C" "SELECT snowflake_nextval()" 2>&1) && break
            case "$after" in *SF001*|*"moved backwards"*) break ;; esac
            sleep 0.05
        done
        case "$after" in
            ''|*[!0-9]*) not_ok "16 ($label): mark ${t} ms ahead at the crash: the first id waits, no clock error" "$after" ;;
            *) ok "16 ($label): mark ${t} ms ahead at the crash: the first id waits, no clock error" ;;
        esac
        cmp_num "16 ($label): ... above every id before the crash" "${after:-0}" -gt "$before"
    done
}

case_16() {
    echo "# case 16: a crash with a correct clock at points of the renewal cycle"
    local C
    C=$(pg_tmpdir)
    fault_init "$C" "fsync = on" || { bail "16: instance initialised"; return; }
    pg_start "$C" || { bail "16: started"; return; }
    helpers_sql "$C" || { bail "16: helpers created"; return; }
    # A 1 s window: the mark is 0.5 to 1.5 s ahead.
    crash_at_leads "$C" "1 s window" 700 1000 1300 1450 || return
    is "16: no clock step counted" "$(pg_val "$C" "SELECT clock_backwards_errors FROM snowflake_stats")" 0
    pg_stop "$C"
}
