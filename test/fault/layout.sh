# shellcheck shell=bash
# Fault-injection case of snowflake.layout (issue 31): what a server does at
# start with a layout it cannot issue, a worker id its layout cannot hold,
# and a high-water mark written under another layout. Sourced by run.sh.

# refuses_start DIR DESC TEXT LINE...: with LINE... as fault.conf the server
# does not start, and its log has TEXT after the attempt.
refuses_start() {
    local dir=$1 desc=$2 text=$3 off; shift 3
    fault_conf "$dir" "$@"
    off=$(log_size "$dir")
    if pg_start "$dir"; then
        not_ok "$desc" "it started"
        pg_stop "$dir"
        return
    fi
    pg_reap "$dir"
    if log_has "$dir" "$off" "$text"; then
        ok "$desc"
    else
        not_ok "$desc" "wanted: $text" "$(log_since "$dir" "$off" | grep -E 'FATAL|DETAIL|HINT' | head -4)"
    fi
}

case_18() {
    echo "# case 18: snowflake.layout at start: bad layouts, worker ids it cannot hold, a mark of another layout"
    local Y off js_max tw_min tw_max js2_min
    Y=$(pg_tmpdir)
    fault_init "$Y" "fsync = on" || { bail "18: instance initialised"; return; }

    refuses_start "$Y" "18: sonyflake's order and unit cannot be issued: FATAL naming snowflake.layout" \
        'FATAL:  invalid value for parameter "snowflake.layout": "sonyflake"' "snowflake.layout = 'sonyflake'"
    refuses_start "$Y" "18: ... the detail says why" \
        "this layout's order (time, sequence, worker) is read and built by snowflake_decode_as()" \
        "snowflake.layout = 'sonyflake'"
    refuses_start "$Y" "18: 42 bits of time: refused" \
        "A node's time field has at most 41 bits" "snowflake.layout = 'time 42, worker 9, sequence 12'"
    refuses_start "$Y" "18: two fields: refused" \
        'FATAL:  invalid value for parameter "snowflake.layout": "time 41, worker 22"' \
        "snowflake.layout = 'time 41, worker 22'"
    refuses_start "$Y" "18: worker id 64 in js-safe (0-63): FATAL naming both" \
        "FATAL:  snowflake.worker_id 64 does not fit snowflake.layout 'js-safe'" \
        "snowflake.layout = 'js-safe'" "snowflake.worker_id = 64"
    refuses_start "$Y" "18: ... the hint names the range" "HINT:  Choose snowflake.worker_id from 0 to 63" \
        "snowflake.layout = 'js-safe'" "snowflake.worker_id = 64"

    # js-safe, worker 7: ids below 2^53.
    fault_conf "$Y" "snowflake.layout = 'js-safe'"
    pg_start "$Y" || { bail "18: starts with js-safe" "$(tail -5 "$Y/server.log")"; return; }
    helpers_sql "$Y" || { bail "18: helpers created"; return; }
    pg_val "$Y" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c18-js' FROM generate_series(1, 3000)" >/dev/null
    js_max=$(pg_val "$Y" "SELECT max(id) FROM ids")
    cmp_num "18: js-safe ids are below 2^53" "$js_max" -lt 9007199254740992
    is "18: ... carry worker 7 in bits 11-6" \
        "$(pg_val "$Y" "SELECT count(*) FROM ids WHERE (id >> 6) & 63 <> 7")" 0
    pg_stop "$Y"

    # The same data directory with twitter: the mark says js-safe.
    refuses_start "$Y" "18: a mark of js-safe with snowflake.layout twitter: FATAL naming both" \
        "FATAL:  snowflake.layout is 'twitter', but this data directory issued ids in 'js-safe'" \
        "snowflake.layout = 'twitter'"
    refuses_start "$Y" "18: ... the hint names snowflake.accept_layout_change" \
        "snowflake.accept_layout_change = on" "snowflake.layout = 'twitter'"

    # The explicit step: every twitter id lies above every js-safe one.
    fault_conf "$Y" "snowflake.layout = 'twitter'" "snowflake.accept_layout_change = on"
    off=$(log_size "$Y")
    pg_start "$Y" || { bail "18: starts with accept_layout_change" "$(tail -5 "$Y/server.log")"; return; }
    check "18: accept_layout_change: the change is logged" \
        log_has "$Y" "$off" "snowflake.layout changes from 'js-safe' to 'twitter'"
    check "18: ... with every new id above the old ones" \
        log_has "$Y" "$off" "Every new id lies above this node's ids of the old layout."
    pg_val "$Y" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c18-tw' FROM generate_series(1, 3000)" >/dev/null
    tw_min=$(pg_val "$Y" "SELECT min(id) FROM ids WHERE phase = 'c18-tw'")
    cmp_num "18: ... the first twitter id is above the last js-safe id" "$tw_min" -gt "$js_max"
    no_duplicates "$Y" ids "18: ... no id twice"
    pg_stop "$Y"

    # The clean stop wrote the mark in twitter: no setting needed any more.
    fault_conf "$Y" "snowflake.layout = 'twitter'"
    pg_start "$Y" || { bail "18: twitter starts after the change without the setting" "$(tail -5 "$Y/server.log")"; return; }
    tw_max=$(pg_val "$Y" "SELECT max(snowflake_nextval()) FROM generate_series(1, 10)")
    pg_val "$Y" "INSERT INTO ids(id, phase) VALUES ($tw_max, 'c18-tw2')" >/dev/null
    ok "18: after a clean stop the mark is twitter's: starts without accept_layout_change"

    # Back to js-safe: new ids can equal old ones (smaller shifts), so the
    # change is a WARNING; they still start after the mark's millisecond.
    pg_stop "$Y"
    fault_conf "$Y" "snowflake.layout = 'js-safe'" "snowflake.accept_layout_change = on"
    off=$(log_size "$Y")
    pg_start "$Y" || { bail "18: back to js-safe with accept_layout_change" "$(tail -5 "$Y/server.log")"; return; }
    check "18: twitter to js-safe: a WARNING that new ids can equal old ones" \
        log_has "$Y" "$off" "WARNING:  snowflake.layout changes from 'twitter' to 'js-safe'"
    js2_min=$(pg_val "$Y" "SELECT snowflake_nextval()")
    is "18: ... the first js-safe id's millisecond is past the last twitter id's" \
        "$(pg_val "$Y" "SELECT (snowflake_decode_as($js2_min, 'js-safe', current_setting('snowflake.epoch')::timestamptz)).ts
                        > (snowflake_decode_as($tw_max, 'twitter', current_setting('snowflake.epoch')::timestamptz)).ts")" t
    pg_stop "$Y"
}

# ids_mod16 DIR N: N ids, each in a millisecond of its own (a sleep of 1.1 ms
# between two: at low rates, as 10 ids a second are), into ids with phase
# c19; prints the count of each id % 16, 0 to 15, on one line.
ids_mod16() {
    pg_val "$1" "DELETE FROM ids WHERE phase = 'c19'" >/dev/null
    pg_val "$1" "DO \$\$ BEGIN FOR i IN 1..$2 LOOP
                     INSERT INTO ids(id, phase) VALUES (snowflake_nextval(), 'c19');
                     PERFORM pg_sleep(0.0011);
                 END LOOP; END \$\$" >/dev/null
    pg_val "$1" "SELECT string_agg(coalesce(n, 0)::text, ' ' ORDER BY r)
                 FROM generate_series(0, 15) r
                 LEFT JOIN (SELECT id % 16 AS r, count(*) AS n FROM ids WHERE phase = 'c19' GROUP BY 1) c USING (r)"
}

case_19() {
    echo "# case 19: snowflake.sequence_spread evens id % 16 at low rates"
    local Z off counts n low high c
    Z=$(pg_tmpdir)
    fault_init "$Z" || { bail "19: instance initialised"; return; }
    pg_start "$Z" || { bail "19: started" "$(tail -5 "$Z/server.log")"; return; }
    helpers_sql "$Z" || { bail "19: helpers created"; return; }
    n=800
    counts=$(ids_mod16 "$Z" "$n")
    is "19: without the spread, ids one a millisecond all end in sequence 0: id % 16 = 0" "${counts%% *}" "$n"

    fault_conf "$Z" "snowflake.sequence_spread = 16"
    pg_val "$Z" "SELECT pg_reload_conf()" >/dev/null
    wait_for "reload applied" 10 test_show "$Z" snowflake.sequence_spread 16 || not_ok "19: the spread is reloaded"
    counts=$(ids_mod16 "$Z" "$n")
    # Each count is binomial(800, 1/16): 50 +- 6.8. All 16 lie in 10-100
    # but for a chance of 4 in 10^10 (the binomial tails, times 16).
    low=$(tr ' ' '\n' <<<"$counts" | sort -n | head -1)
    high=$(tr ' ' '\n' <<<"$counts" | sort -n | tail -1)
    if [ "$low" -ge 10 ] && [ "$high" -le 100 ] && [ "$(wc -w <<<"$counts")" = 16 ]; then
        ok "19: with sequence_spread = 16 every id % 16 is taken about equally (counts: $counts)"
    else
        not_ok "19: with sequence_spread = 16 every id % 16 is taken about equally" "counts: $counts"
    fi
    is "19: ... ids stay increasing in the order issued" \
        "$(pg_val "$Z" "SELECT count(*) FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS p FROM ids) s WHERE id <= p")" 0
    # A batch still fills each millisecond from its offset to the end.
    is "19: ... a batch of 50,000 is 50,000 distinct increasing ids" \
        "$(pg_val "$Z" "SELECT count(DISTINCT id) = 50000 AND bool_and(id > p) FROM
                         (SELECT id, lag(id, 1, 0::bigint) OVER (ORDER BY o) AS p
                          FROM snowflake_nextval_batch(50000) WITH ORDINALITY AS b(id, o)) s")" t

    for c in 3 2048; do
        fault_conf "$Z" "snowflake.sequence_spread = $c"
        off=$(log_size "$Z")
        pg_val "$Z" "SELECT pg_reload_conf()" >/dev/null
        if wait_for "reload logged" 10 log_has "$Z" "$off" 'invalid value for parameter "snowflake.sequence_spread"'; then
            ok "19: sequence_spread = $c is refused on reload (a power of two up to 1024 for twitter)"
        else
            not_ok "19: sequence_spread = $c is refused on reload" "$(log_since "$Z" "$off" | head -5)"
        fi
        is "19: ... the previous value is kept" "$(pg_val "$Z" "SHOW snowflake.sequence_spread")" 16
    done
    pg_stop "$Z"
    refuses_start "$Z" "19: js-safe's cap is 16 (a quarter of 64): sequence_spread = 32 stops the server" \
        'FATAL:  invalid value for parameter "snowflake.sequence_spread": "32"' \
        "snowflake.layout = 'js-safe'" "snowflake.sequence_spread = 32"
}

# log_has_in DIR TEXT: the server log has TEXT (for wait_for).
log_has_in() { grep -qF "$2" "$1/server.log" 2>/dev/null; }

case_20() {
    echo "# case 20: WAL records of another layout: a standby stops whatever accept_layout_change says; crash recovery under a change replays them"
    local P S C last first
    P=$(pg_tmpdir)
    fault_init "$P" "wal_level = replica" "max_wal_senders = 4" "hot_standby = on" \
        || { bail "20: primary initialised"; return; }
    pg_start "$P" || { bail "20: primary started" "$(tail -5 "$P/server.log")"; return; }
    helpers_sql "$P" || { bail "20: helpers on the primary"; return; }
    S=$(pg_tmpdir)
    if ! as_pg "$PGBIN/pg_basebackup" -h "$P" -p "$PG_PORT" -U postgres -D "$S/data" -R -X stream -c fast \
            >"$S/basebackup.log" 2>&1; then
        bail "20: pg_basebackup -R from the primary" "$(tail -5 "$S/basebackup.log")"; return
    fi
    # A standby set to js-safe, with the setting that a data directory's own
    # change needs: the primary goes on logging twitter reservations.
    pg_conf "$S" "unix_socket_directories = '$S'" "snowflake.layout = 'js-safe'" "snowflake.accept_layout_change = on"
    pg_start "$S" || true
    pg_val "$P" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c20' FROM generate_series(1, 100)" >/dev/null
    pg_val "$P" "SELECT pg_switch_wal()" >/dev/null
    if wait_for "the standby stops" 20 log_has_in "$S" \
            "FATAL:  snowflake WAL records were written under snowflake.layout 'twitter', this server's is 'js-safe'"; then
        ok "20: a js-safe standby of a twitter primary stops at a record: FATAL naming both"
    else
        not_ok "20: a js-safe standby of a twitter primary stops at a record" "$(grep -E 'FATAL|WARNING' "$S/server.log" | tail -4)"
    fi
    check "20: ... accept_layout_change does not apply to a standby (the detail says so)" \
        log_has_in "$S" "snowflake.accept_layout_change does not apply to a standby"
    wait_for "the standby's postmaster gone" 20 pg_gone "$S" || not_ok "20: ... and the standby is down"
    pg_reap "$S"
    pg_stop "$P"

    # Crash recovery of a data directory started in another layout: its own
    # twitter records are replayed, once announced, and the new ids follow.
    C=$(pg_tmpdir)
    fault_init "$C" "fsync = on" || { bail "20: instance initialised"; return; }
    pg_start "$C" || { bail "20: started" "$(tail -5 "$C/server.log")"; return; }
    helpers_sql "$C" || { bail "20: helpers"; return; }
    pg_val "$C" "INSERT INTO ids(id, phase) SELECT snowflake_nextval(), 'c20-tw' FROM generate_series(1, 1000)" >/dev/null
    last=$(pg_val "$C" "SELECT max(id) FROM ids")
    pg_stop "$C" immediate
    pg_reap "$C"
    fault_conf "$C" "snowflake.layout = 'js-safe'" "snowflake.accept_layout_change = on"
    pg_start "$C" || { bail "20: restarted in js-safe after a crash" "$(tail -8 "$C/server.log")"; return; }
    check "20: crash recovery with accept_layout_change replays the twitter records with a WARNING" \
        log_has_in "$C" "WARNING:  snowflake replays WAL records of snowflake.layout 'twitter' under 'js-safe'"
    first=$(pg_val "$C" "SELECT snowflake_nextval()")
    is "20: ... the first js-safe id's millisecond is past the last twitter id's" \
        "$(pg_val "$C" "SELECT (snowflake_decode_as($first, 'js-safe', current_setting('snowflake.epoch')::timestamptz)).ts
                        > (snowflake_decode_as($last, 'twitter', current_setting('snowflake.epoch')::timestamptz)).ts")" t
    pg_stop "$C"
}
