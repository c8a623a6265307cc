# shellcheck shell=bash
# Cases of the HTTP endpoint suite (sourced by test/http.sh): HTTP ids under
# a worker id of their own (snowflake.http_worker_id).
#  21  HTTP ids carry snowflake.http_worker_id, SQL ids snowflake.worker_id,
#      none twice under HTTP and SQL load at once; after kill -9 and a
#      restart with the clock 5 s behind, HTTP ids above every earlier one;
#      the same after a clean stop and after snowflake_advance_floor()
#  22  misconfigurations stop the server at start: the same id as
#      snowflake.worker_id, out of range, no worker id, leased worker ids

# http_batch_ok DIR COUNT: a batch of COUNT ids is answered 200 (BODY holds it).
http_batch_ok() {
    req "$1" "/v1/ids/batch?count=$2"
    [ "$CODE" = 200 ]
}

case_21() {
    echo "# case 21: snowflake.http_worker_id: HTTP ids under a worker id of their own"
    local C pgb last first
    C=$(pg_tmpdir)
    # The tolerance waits out the clock set back at the restart below; no
    # ceiling on HTTP ids (429s would be errors here).
    http_init "$C" "snowflake.http_worker_id = 9" "snowflake.clock_tolerance_ms = 10000" \
        "snowflake.http_max_ids_per_second = 0" || { bail "21: initialised"; return; }
    http_start "$C" || { bail "21: started" "$(tail -5 "$C/server.log")"; return; }
    pg_val "$C" "CREATE EXTENSION snowflake" >/dev/null
    is "21: snowflake_stats.http_worker_id is 9" "$(pg_val "$C" "SELECT http_worker_id FROM snowflake_stats")" 9
    is "21: ... worker_id 7" "$(pg_val "$C" "SELECT worker_id FROM snowflake_stats")" 7
    req "$C" /metrics
    like "21: /metrics: snowflake_http_worker_id 9" "$BODY" $'\n''snowflake_http_worker_id 9'$'\n'

    # SQL (pgbench) and HTTP (three keep-alive connections) at once.
    pg_val "$C" "CREATE TABLE mixed (id bigint PRIMARY KEY, src text NOT NULL)" >/dev/null
    echo "INSERT INTO mixed SELECT x, 'sql' FROM snowflake_nextval_batch(100) x;" >"$SHIM_DIR/ins21.sql"
    chmod 644 "$SHIM_DIR/ins21.sql"
    as_pg "$PGBIN/pgbench" -n -h "$C" -p "$PG_PORT" -U postgres -c 2 -j 2 -T 4 -f "$SHIM_DIR/ins21.sql" postgres \
        >"$SHIM_DIR/pgbench21.out" 2>&1 &
    pgb=$!
    curl_batches "$C" http21 40 1000
    wait "${BG_PIDS[@]}"
    BG_PIDS=()
    wait "$pgb"
    is "21: pgbench ran without error" "$?" 0
    batch_ids 21 http21 40 1000
    is "21: the HTTP ids go into the table of the SQL ids: no conflict" \
        "$(pg_psql "$C" -c "\\copy mixed FROM '$SHIM_DIR/http21.tsv'" 2>&1)" ""
    is "21: ... every id there, none twice" \
        "$(pg_val "$C" "SELECT count(*) FILTER (WHERE src = 'http') || ' ' || (count(*) - count(DISTINCT id)) FROM mixed")" \
        "120000 0"
    cmp_num "21: ... and SQL ids" "$(pg_val "$C" "SELECT count(*) FROM mixed WHERE src = 'sql'")" -gt 0
    is "21: every HTTP id has worker id 9" \
        "$(pg_val "$C" "SELECT count(*) FROM mixed WHERE src = 'http' AND snowflake_worker_id(id) <> 9")" 0
    is "21: every SQL id has worker id 7" \
        "$(pg_val "$C" "SELECT count(*) FROM mixed WHERE src = 'sql' AND snowflake_worker_id(id) <> 7")" 0
    # The two generators are apart: HTTP and SQL ids of the same
    # millisecond, each source with its own sequence from 0.
    cmp_num "21: milliseconds with ids of both sources" \
        "$(pg_val "$C" "SELECT count(*) FROM (SELECT id >> 22 FROM mixed GROUP BY 1 HAVING count(DISTINCT src) = 2) x")" -gt 0

    # The highest HTTP id, then kill -9 of the postmaster.
    http_batch_ok "$C" 1000 || { bail "21: a batch before the crash" "$CODE $BODY"; return; }
    last=$(jq -r '.ids[-1]' <<<"$BODY")
    pg_kill9 "$C" && wait_for "gone" 10 pg_gone "$C" || { bail "21: postmaster killed"; return; }
    # Back with the clock 5 s behind the last ids: without the mark, the
    # HTTP generator would issue below them at once; with it, it waits
    # (within the tolerance; each request 503 57014 after 1 s) until the
    # clock passes the mark.
    ft_set_us "$C" -5000000
    http_start "$C" || { bail "21: restarted" "$(tail -5 "$C/server.log")"; return; }
    if wait_for "HTTP ids after the restart" 30 http_batch_ok "$C" 10; then
        first=$(jq -r '.ids[0]' <<<"$BODY")
        is "21: after kill -9 and a restart with the clock 5 s behind: HTTP ids above every earlier one" \
            "$(pg_val "$C" "SELECT $first > $last")" t
        is "21: ... under worker id 9" "$(pg_val "$C" "SELECT snowflake_worker_id($first)")" 9
        cmp_num "21: ... and SQL ids above them too" \
            "$(pg_val "$C" "SELECT (snowflake_nextval() > $last)::int")" -eq 1
    else
        not_ok "21: HTTP ids after kill -9 and a restart" "$CODE $BODY"
    fi

    # A clean stop after HTTP ids (the SQL ids' last millisecond is earlier):
    # the exact mark is the later of the two words'. Back 3 s further behind,
    # the HTTP generator waits for the clock to pass its own last id.
    if http_batch_ok "$C" 1000; then
        last=$(jq -r '.ids[-1]' <<<"$BODY")
        pg_stop "$C"
        ft_set_us "$C" -8000000
        http_start "$C" || { bail "21: started after a clean stop" "$(tail -5 "$C/server.log")"; return; }
        if wait_for "HTTP ids after a clean stop" 30 http_batch_ok "$C" 10; then
            first=$(jq -r '.ids[0]' <<<"$BODY")
            is "21: after a clean stop and a restart with the clock 3 s further behind: HTTP ids above the last" \
                "$(pg_val "$C" "SELECT $first > $last")" t
        else
            not_ok "21: HTTP ids after a clean stop" "$CODE $BODY"
        fi
    else
        not_ok "21: a batch before a clean stop" "$CODE $BODY"
    fi

    # snowflake_advance_floor() raises the HTTP word too: a floor 3 s ahead
    # of the clock (within the tolerance: waited out).
    last=$(pg_val "$C" "SELECT snowflake_compose(now() + interval '3 s', 7, 0)")
    pg_val "$C" "SELECT snowflake_advance_floor($last)" >/dev/null
    if wait_for "HTTP ids after snowflake_advance_floor()" 30 http_batch_ok "$C" 10; then
        first=$(jq -r '.ids[0]' <<<"$BODY")
        is "21: after snowflake_advance_floor(), HTTP ids above the floor" \
            "$(pg_val "$C" "SELECT (snowflake_timestamp($first) > snowflake_timestamp($last))")" t
    else
        not_ok "21: HTTP ids after snowflake_advance_floor()" "$CODE $BODY"
    fi
    ft_set_us "$C" 0
    pg_stop "$C"
}

# refused_at_start DESC DIR REGEX [conf lines...]: with these lines in
# DIR/data/http.conf the server does not start, and its FATAL (with DETAIL
# and HINT) matches REGEX.
refused_at_start() {
    local desc=$1 dir=$2 want=$3 log
    shift 3
    printf '%s\n' "$@" | as_pg tee "$dir/data/http.conf" >/dev/null
    if pg_start "$dir"; then
        not_ok "$desc: the server refuses to start"
        pg_stop "$dir"
        return
    fi
    log=$(grep -A3 FATAL "$dir/server.log" | tail -4 | tr '\n' ' ')
    like "$desc: the server refuses to start" "$log" "$want"
    like "$desc: ... with a hint" "$log" 'HINT: +[A-Z]'
    : | as_pg tee "$dir/server.log" >/dev/null
}

case_22() {
    echo "# case 22: snowflake.http_worker_id misconfigured: the server does not start"
    local C
    C=$(pg_tmpdir)
    pg_init "$C" "shared_preload_libraries = 'snowflake'" "include_if_exists = 'http.conf'" \
        || { bail "22: initialised"; return; }
    refused_at_start "22: http_worker_id = worker_id" "$C" \
        'invalid value for parameter "snowflake.http_worker_id": "7".*DETAIL: +snowflake.http_worker_id is snowflake.worker_id' \
        "snowflake.worker_id = 7" "snowflake.http_worker_id = 7"
    refused_at_start "22: http_worker_id = 1024" "$C" \
        'invalid value for parameter "snowflake.http_worker_id": "1024"' \
        "snowflake.worker_id = 7" "snowflake.http_worker_id = 1024"
    refused_at_start "22: http_worker_id without worker_id" "$C" \
        'invalid value for parameter "snowflake.http_worker_id": "9".*DETAIL: +snowflake.http_worker_id needs snowflake.worker_id' \
        "snowflake.http_worker_id = 9"
    refused_at_start "22: http_worker_id with etcd" "$C" \
        'invalid value for parameter "snowflake.http_worker_id": "9".*DETAIL: +snowflake.http_worker_id needs a static worker id' \
        "snowflake.worker_id = 7" "snowflake.etcd_endpoints = 'http://127.0.0.1:1'" "snowflake.http_worker_id = 9"
    refused_at_start "22: http_worker_id with ZooKeeper" "$C" \
        'invalid value for parameter "snowflake.http_worker_id": "9".*DETAIL: +snowflake.http_worker_id needs a static worker id' \
        "snowflake.zookeeper_hosts = '127.0.0.1:1'" "snowflake.http_worker_id = 9"
    # -1 (the default) is off: the server starts.
    printf '%s\n' "snowflake.worker_id = 7" "snowflake.http_worker_id = -1" | as_pg tee "$C/data/http.conf" >/dev/null
    if pg_start "$C"; then
        ok "22: http_worker_id = -1: the server starts"
        pg_stop "$C"
    else
        not_ok "22: http_worker_id = -1: the server starts" "$(tail -3 "$C/server.log")"
    fi
}
