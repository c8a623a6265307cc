# shellcheck shell=bash
# Cases of the fault suite (sourced by test/fault/run.sh): the storage under
# the mark and the floor that an operator raises by hand.
#  11  fsync slow, failing with EIO, ENOSPC (an LD_PRELOAD shim,
#      storage_shim.c); an idle renewal that failed is retried
#  14  snowflake_advance_floor(): durable, above a restored id, limits

STORAGE_SHIM=
if cc -shared -fPIC -O2 -o "$SHIM_DIR/storage_shim.so" "$FAULT_DIR/storage_shim.c" -ldl 2>"$SHIM_DIR/storage_shim.log"; then
    chmod 755 "$SHIM_DIR" "$SHIM_DIR/storage_shim.so"
    STORAGE_SHIM=$SHIM_DIR/storage_shim.so
fi

# -------------------------------------------------------------------------
# 11: the storage under the mark is slow or fails. Only the mark worker
# writes the mark; backends wait for it in interruptible slices.

# storage_fault DIR WHAT...: sets the fault storage_shim.c applies.
storage_fault() {
    local dir=$1; shift
    printf '%s\n' "$*" >"$dir/storage_fault.tmp"
    mv -f "$dir/storage_fault.tmp" "$dir/storage_fault"
}
# reservation_behind DIR [SECONDS]: the reservation ended more than SECONDS
# (default 0) ago.
reservation_behind() {
    [ "$(pg_val "$1" "SELECT high_water_mark < clock_timestamp() - interval '${2:-0} s' FROM snowflake_stats")" = t ]
}
ids_flow() { [ "$(pg_val "$1" "SELECT state FROM try_nextval()" 2>/dev/null)" = 00000 ]; }
nextval_waiting() {
    [ "$(pg_val "$1" "SELECT count(*) FROM pg_stat_activity WHERE query = '$2' AND wait_event_type = 'Extension'")" -gt 0 ]
}
window_is() { [ "$(stat_val "$1" reservation_window_ms)" = "$2" ]; }

case_11() {
    echo "# case 11: slow and failing storage under the mark"
    local D out v t0 el state msg before after pid markms lastms
    [ -n "$STORAGE_SHIM" ] || { bail "11: test/fault/storage_shim.c compiled" "$(head -3 "$SHIM_DIR/storage_shim.log")"; return; }
    D=$(pg_tmpdir)
    fault_init "$D" "fsync = on" || { bail "11: instance initialised"; return; }
    storage_fault "$D" none
    local denv=("LD_PRELOAD=$STORAGE_SHIM" "SF_STORAGE_FAULT_FILE=$D/storage_fault")
    pg_start "$D" "${denv[@]}" || { bail "11: started with the storage shim" "$(tail -5 "$D/server.log")"; return; }
    helpers_sql "$D" || { bail "11: helpers created"; return; }
    pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c11-start' FROM generate_series(1, 1000)" >/dev/null

    # 11a: every fsync of the mark takes 1.2 s: ids slow down, never stop.
    storage_fault "$D" fsync_delay_ms 1200
    probe_fields "$(PG_TIMEOUT=60 run_probe "$D" step 8 c11a)"
    is "11a: 8 s of ids while every mark fsync takes 1.2 s: no error" "$P_STATE" ""
    cmp_num "11a: ... ids kept flowing ($P_ISSUED)" "${P_ISSUED:-0}" -gt 10000
    is "11a: ... in order" "$P_VIOL" 0
    cmp_num "11a: last_mark_write_ms shows the slow write" "$(stat_val "$D" last_mark_write_ms)" -ge 1200
    cmp_num "11a: reservation_window_ms grew to twice that" "$(stat_val "$D" reservation_window_ms)" -ge 2400

    # 10 s per fsync: the reservation runs out while the worker writes. A call
    # waiting for it ends at statement_timeout, or at a cancel, at once. The
    # reservation must have ended 1.5 s ago: a write begun with the 1.2 s
    # delay would have renewed it by then, so the write in flight is a 10 s
    # one, with at least 7 s of it left.
    storage_fault "$D" fsync_delay_ms 10000
    before=$(pg_val "$D" "SELECT max(id) FROM ids")
    if wait_for "reservation behind" 20 reservation_behind "$D" 1.5; then
        t0=$(real_now)
        v=$(PG_TIMEOUT=40 pg_psql "$D" -A -t -c "SET statement_timeout = '500ms'" -c "SELECT snowflake_nextval()" 2>&1)
        el=$(elapsed_since "$t0")
        like "11a: statement_timeout ends a call waiting for the mark" "$v" 'canceling statement due to statement timeout'
        if fcmp "$el" '<' 1.5; then ok "11a: ... after $el s (timeout 0.5 s)"; else not_ok "11a: ... promptly" "took $el s"; fi
        out="$D/c11_cancel.out"
        PG_TIMEOUT=40 pg_psql "$D" -A -t -c "SELECT snowflake_nextval()" >"$out" 2>&1 &
        pid=$!
        if wait_for "waiting" 5 nextval_waiting "$D" "SELECT snowflake_nextval()"; then
            t0=$(real_now)
            pg_val "$D" "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'SELECT snowflake_nextval()' AND pid <> pg_backend_pid()" >/dev/null
            wait "$pid"
            el=$(elapsed_since "$t0")
            like "11a: pg_cancel_backend() ends a call waiting for the mark" "$(cat "$out")" 'canceling statement due to user request'
            if fcmp "$el" '<' 1; then ok "11a: ... within $el s"; else not_ok "11a: ... within a second" "took $el s"; fi
        else
            kill "$pid" 2>/dev/null; wait "$pid"
            not_ok "11a: a call waits for the mark (wait event Extension)" "$(cat "$out")"
        fi
    else
        not_ok "11a: the reservation runs out while a 10 s write runs" "high_water_mark $(stat_val "$D" high_water_mark)"
    fi
    storage_fault "$D" none
    if wait_for "ids" 20 ids_flow "$D"; then ok "11a: ids flow again once the storage is fast"; else not_ok "11a: ids flow again once the storage is fast"; fi
    pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c11a-after' FROM generate_series(1, 100)" >/dev/null
    after=$(pg_val "$D" "SELECT min(id) FROM ids WHERE phase = 'c11a-after'")
    cmp_num "11a: ... above every id before the cancelled calls" "${after:-0}" -gt "$before"

    wait_for "window back to 1 s" 10 window_is "$D" 1000 || not_ok "11: the window shrinks back with fast writes"

    # 11b, 11c: the mark cannot be written. After a clean restart the first
    # id needs a reservation: it gets the error at once; nothing is issued
    # beyond the mark on disk; ids resume when the fault is gone.
    local entry fault code text label off
    for entry in "11b|fsync_eio|58030|(fsync): Input/output error" \
                 "11c|write_enospc|53100|(write): No space left on device"; do
        IFS='|' read -r label fault code text <<<"$entry"
        pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), '$label-before' FROM generate_series(1, 100)" >/dev/null
        pg_stop "$D"
        storage_fault "$D" "$fault"
        off=$(log_size "$D")
        pg_start "$D" "${denv[@]}" || { bail "$label: restarted" "$(tail -5 "$D/server.log")"; return; }
        t0=$(real_now)
        v=$(PG_TIMEOUT=30 pg_psql "$D" -A -t -F $'\x1f' -c "SELECT state, msg FROM try_nextval()")
        el=$(elapsed_since "$t0")
        IFS=$'\x1f' read -r state msg <<<"$v"
        is "$label: $fault: snowflake_nextval() fails with SQLSTATE $code" "$state" "$code"
        is "$label: ... message" "$msg" "could not write snowflake high-water mark file \"snowflake.mark\" $text"
        if fcmp "$el" '<' 1; then ok "$label: ... at once ($el s)"; else not_ok "$label: ... at once" "took $el s"; fi
        markms=$(mark_ms "$D")
        lastms=$(pg_val "$D" "SELECT id_ms(snowflake_from_timestamp(last_timestamp)) FROM snowflake_stats")
        cmp_num "$label: nothing issued beyond the mark on disk ($lastms <= $markms)" "$lastms" -le "$markms"
        check "$label: the worker logs the failure" log_has "$D" "$off" "could not write snowflake high-water mark file \"snowflake.mark\" ${text%%:*}"
        storage_fault "$D" none
        if wait_for "ids" 5 ids_flow "$D"; then ok "$label: ids resume once the fault is gone"; else not_ok "$label: ids resume once the fault is gone"; fi
    done
    # 11d: a renewal fails while nobody asks for ids, and the clock runs past
    # the reservation: once the fault is gone the worker writes again by
    # itself (the error must not linger until an id request comes: /healthz
    # and snowflake_ready report it).
    pg_val "$D" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c11d' FROM generate_series(1, 100)" >/dev/null
    storage_fault "$D" fsync_eio
    off=$(log_size "$D")
    wait_for "failed renewal" 10 log_has "$D" "$off" "could not write snowflake high-water mark file" ||
        not_ok "11d: an idle renewal fails" "no failure logged"
    sleep 2  # the clock passes the reservation, nobody asks for ids
    markms=$(mark_ms "$D")
    storage_fault "$D" none
    mark_moved() { [ "$(mark_ms "$D")" -gt "$markms" ]; }
    if wait_for "rewritten" 10 mark_moved; then
        ok "11d: the idle worker writes the mark again once the fault is gone"
    else
        not_ok "11d: the idle worker writes the mark again once the fault is gone" "mark still $markms"
    fi
    # The worker logs it after the write the mark file shows: wait for the line.
    check "11d: ... and logs it" wait_for "the log line" 10 log_has "$D" "$off" 'snowflake high-water mark file "snowflake.mark" written again'
    no_duplicates "$D" ids "11: no duplicate id"
    ordered "$D" ids "11: every id above the ones before"
    pg_stop "$D"
}

# -------------------------------------------------------------------------
# 14: snowflake_advance_floor(), for what PostgreSQL does not carry.
case_14() {
    echo "# case 14: snowflake_advance_floor()"
    local G fut v state msg detail hint fut3 after
    G=$(pg_tmpdir)
    fault_init "$G" "fsync = on" || { bail "14: instance initialised"; return; }
    pg_start "$G" || { bail "14: started"; return; }
    helpers_sql "$G" || { bail "14: helpers created"; return; }
    pg_val "$G" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c14' FROM generate_series(1, 100)" >/dev/null
    # A restored table holds ids of a node whose clock ran 20 minutes ahead.
    fut=$(pg_val "$G" "SELECT snowflake_compose(clock_timestamp() + interval '20 minutes', 3, 17)")
    check "14: snowflake_advance_floor(an id 20 minutes ahead) works" \
        pg_psql "$G" -c "SELECT snowflake_advance_floor($fut)"
    cmp_num "14: ... the mark on disk covers it" "$(mark_ms "$G")" -ge "$((fut >> 22))"
    v=$(pg_psql "$G" -A -t -F $'\x1f' -c "SELECT state, msg, detail, hint FROM try_nextval()")
    IFS=$'\x1f' read -r state msg detail hint <<<"$v"
    is "14: ... ids wait for the clock to pass it: SF001" "$state" SF001
    like "14: ... the detail names the high-water mark" "$detail" 'high-water mark'
    is "14: ... the hint names a time after the id" \
        "$(pg_val "$G" "SELECT resume_at(\$\$$hint\$\$) > snowflake_timestamp($fut)")" t
    pg_kill9 "$G" && wait_for "gone" 10 pg_gone "$G" || { bail "14: postmaster killed"; return; }
    pg_start "$G" || { bail "14: restarted after kill -9"; return; }
    is "14: after kill -9 and a restart the floor holds (SF001)" "$(pg_val "$G" "SELECT state FROM try_nextval()")" SF001
    v=$(pg_psql "$G" -A -t -F $'\x1f' -c "SELECT state FROM (SELECT snowflake_advance_floor(1)) s, try_nextval()" 2>&1)
    is "14: a floor below it changes nothing" "$v" SF001
    # Back to a clock that passes the floor: remove the mark (the repair).
    pg_stop "$G"
    rm -f "$(mark_file "$G")"
    pg_start "$G" || { bail "14: restarted without the mark"; return; }
    v=$(pg_psql "$G" -A -t -c "SELECT snowflake_advance_floor(snowflake_compose(clock_timestamp() + interval '2 hours', 3, 0))" 2>&1)
    like "14: an id two hours ahead is refused" "$v" 'snowflake id [0-9]+ is more than an hour ahead of the clock'
    like "14: a negative id is refused" "$(pg_psql "$G" -A -t -c "SELECT snowflake_advance_floor(-1)" 2>&1)" 'snowflake id -1 is negative'
    fut3=$(pg_val "$G" "SELECT snowflake_compose(clock_timestamp() + interval '1.5 s', 1023, 4095)")
    pg_val "$G" "SELECT snowflake_advance_floor($fut3)" >/dev/null
    probe_fields "$(PG_TIMEOUT=30 run_probe "$G" resume 5 c14)"
    cmp_num "14: ids resume once the clock passes an id 1.5 s ahead, above it" "${P_AFTER:-0}" -gt "$fut3"
    pg_stop "$G"
}
