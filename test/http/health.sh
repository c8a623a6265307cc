# shellcheck shell=bash
# Cases of the HTTP endpoint suite (sourced by test/http.sh): health, and
# when ids cannot be issued: the clock, a hot standby, no worker id, a floor
# ahead; a fast shutdown.
#   6  the clock behind the last id: 503 SF001; recovers
#   7  a hot standby: 503 25006, decoding works; 200 once promoted
#   8  fast shutdown with open keep-alive connections and load
#   9  no worker id: 503 55000; a bad snowflake.http_listen: FATAL
#  11  the kernel's clock unsynchronised or its error too large: 503 SF004
#  12  a floor 3 s ahead: 503 57014 after at most 1 s of waiting
#  13  /livez, /readyz; the reason without the token reveals no etcd URL
#  19  a lost mark file: 503 58P01 until snowflake_advance_floor()

case_6() {
    echo "# case 6: the clock behind the last id (libfaketime)"
    start_a || return
    req "$A" '/v1/ids/batch?count=10'
    local last
    last=$(jq -r '.ids[-1]' <<<"$BODY")
    ft_shift "$A" -5
    req "$A" /healthz
    is "6: clock 5 s back: /healthz 503" "$CODE" 503
    json_is "6: ... code SF001" .code SF001
    like "6: ... the reason names the distance" "$(jq -r .reason <<<"$BODY")" 'system clock is [0-9]+ ms behind the last id'
    req "$A" '/v1/ids/batch?count=10'
    error_shape "6: /v1/ids/batch: 503, code SF001" 503 SF001
    like "6: ... the SQL error's message" "$(jq -r .message <<<"$BODY")" '^system clock moved backwards by [0-9]+ ms$'
    like "6: ... and its hint" "$(jq -r .hint <<<"$BODY")" 'ids resume when the clock reaches'
    like "6: ... and its detail" "$(jq -r .detail <<<"$BODY")" 'snowflake.clock_tolerance_ms is 5'
    req "$A" /metrics
    like "6: /metrics: snowflake_ready 0" "$BODY" $'\n''snowflake_ready 0'$'\n'
    like "6: ... clock behind the last id, in seconds" "$BODY" $'\n''snowflake_clock_behind_last_id_seconds [1-5](\.[0-9]+)?'$'\n'
    is "6: SQL refuses too" "$(pg_psql "$A" -A -t -c "\\set VERBOSITY verbose" -c "SELECT snowflake_nextval()" 2>&1 | grep -c 'ERROR:  SF001')" 1
    ft_set "$A" 0
    wait_for "ready" 5 sh -c "curl -s -o /dev/null -w '%{http_code}' '$(url "$A" /healthz)' | grep -q 200"
    req "$A" /healthz
    is "6: the clock back: /healthz 200" "$CODE" 200
    req "$A" '/v1/ids/batch?count=10'
    is "6: ... ids again" "$CODE" 200
    cmp_num "6: ... above the last one before" "$(jq -r '.ids[0]' <<<"$BODY")" -gt "$last"
}

case_7() {
    echo "# case 7: hot standby"
    start_a || return
    local S
    S=$(pg_tmpdir)
    if ! as_pg "$PGBIN/pg_basebackup" -h "$A" -p "$PG_PORT" -U postgres -D "$S/data" -R -X stream -c fast \
            >"$S/basebackup.log" 2>&1; then
        bail "7: pg_basebackup -R" "$(tail -5 "$S/basebackup.log")"; return
    fi
    pg_conf "$S" "unix_socket_directories = '$S'"
    ft_set "$S" 0
    http_start "$S" || { bail "7: standby started with the HTTP endpoint" "$(tail -10 "$S/server.log")"; return; }
    is "7: the standby is in recovery" "$(pg_val "$S" "SELECT pg_is_in_recovery()")" t
    req "$S" /healthz
    is "7: standby: /healthz 503" "$CODE" 503
    json_is "7: ... code 25006, recovery" '.code + " " + .reason' "25006 cannot issue snowflake ids during recovery"
    req "$S" '/v1/ids/batch?count=5'
    error_shape "7: standby: /v1/ids/batch 503, code 25006" 503 25006
    like "7: ... the SQL error's hint" "$(jq -r .hint <<<"$BODY")" 'Issue ids on the primary'
    req "$S" /v1/ids/252752938651381760
    is "7: standby: decoding works" "$CODE" 200
    req "$S" '/v1/uuids/batch?count=2'
    is "7: standby: UUIDs work" "$CODE" 200
    req "$S" /metrics
    like "7: standby: /metrics, snowflake_ready 0" "$BODY" $'\n''snowflake_ready 0'$'\n'
    is "7: pg_promote()" "$(pg_val "$S" "SELECT pg_promote(true, 60)")" t
    req "$S" /healthz
    is "7: promoted: /healthz 200" "$CODE" 200
    # The first ids wait out the reservations the standby replayed (the
    # primary's clock ran ahead of nothing here, but its reservation reaches
    # up to 1.5 s past it): a request waits at most 1 s, then 503 57014 with
    # Retry-After, and a client that retries gets ids.
    local tries=0 codes=""
    while :; do
        req "$S" '/v1/ids/batch?count=5'
        [ "$CODE" = 200 ] && break
        codes+=" $CODE/$(jq -r .code <<<"$BODY" 2>/dev/null)"
        tries=$((tries + 1))
        [ "$tries" -lt 20 ] || break
        sleep 0.5
    done
    is "7: promoted: ids (after retries:${codes:- none})" "$CODE" 200
    is "7: ... any 503 on the way was the 1 s wait limit" "$(tr ' ' '\n' <<<"$codes" | grep -v '^$' | grep -vc '^503/57014$')" 0
    pg_stop "$S"
}

case_8() {
    echo "# case 8: fast shutdown with open keep-alive connections"
    local B i t0 took
    B=$(pg_tmpdir)
    http_init "$B" || { bail "8: initialised"; return; }
    http_start "$B" || { bail "8: started" "$(tail -5 "$B/server.log")"; return; }
    # Ten connections kept alive after one request each, and wrk's load.
    for i in $(seq 1 10); do
        (
            exec 3<>"/dev/tcp/127.0.0.1/$(cat "$B/http_port")" || exit 0
            printf 'GET /v1/ids/batch?count=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&3
            sleep 30
        ) &
        BG_PIDS+=($!)
    done
    wrk -t1 -c4 -d20s "$(url "$B" '/v1/ids/batch?count=100')" >/dev/null 2>&1 &
    BG_PIDS+=($!)
    sleep 1.5
    cmp_num "8: connections open" "$(ss -Htn state established "( sport = :$(cat "$B/http_port") )" | wc -l)" -ge 10
    # The log from here on: a start that had to try another port logged
    # that worker's exit before.
    local logged
    logged=$(wc -l <"$B/server.log")
    t0=$(real_now)
    as_pg "$PGBIN/pg_ctl" -D "$B/data" -m fast -w -t 60 stop >/dev/null 2>&1
    took=$(elapsed_since "$t0")
    check "8: pg_ctl stop -m fast returned within 5 s (took ${took} s)" fcmp "$took" '<' 5
    is "8: the HTTP worker exited quietly (no error, no exit code 1)" \
        "$(tail -n +$((logged + 1)) "$B/server.log" | grep -cE 'snowflake HTTP endpoint.*exited with exit code|ERROR|FATAL')" 0
    local p
    for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait "${BG_PIDS[@]}" 2>/dev/null
    BG_PIDS=()
    pg_reap "$B"
}

case_9() {
    echo "# case 9: no worker id; a bad snowflake.http_listen"
    local C v
    C=$(pg_tmpdir)
    pg_init "$C" "shared_preload_libraries = 'snowflake'" "include_if_exists = 'http.conf'" \
        || { bail "9: initialised"; return; }
    http_start "$C" || { bail "9: started" "$(tail -5 "$C/server.log")"; return; }
    req "$C" /healthz
    is "9: no worker id: /healthz 503" "$CODE" 503
    json_is "9: ... 55000, the SQL error's message" '.code + " " + .reason' "55000 snowflake.worker_id is not set"
    req "$C" /metrics
    like "9: /metrics: worker_id label empty" "$BODY" 'snowflake_info\{worker_id="",'
    like "9: ... snowflake_worker_id -1" "$BODY" $'\n''snowflake_worker_id -1'$'\n'
    pg_stop "$C"
    for v in '127.0.0.1:0' 'example.com:80' '::1:80'; do
        printf "snowflake.http_listen = '%s'\n" "$v" | as_pg tee "$C/data/http.conf" >/dev/null
        if pg_start "$C"; then
            not_ok "9: http_listen '$v': the server refuses to start"
            pg_stop "$C"
        else
            like "9: http_listen '$v': the server refuses to start, naming the setting" \
                "$(grep FATAL "$C/server.log" | tail -1)" 'invalid value for parameter "snowflake.http_listen"'
        fi
    done
}

case_11() {
    echo "# case 11: clock health (snowflake.max_clock_error_ms): /healthz and ids 503 with SF004"
    local C
    [ -n "$TIMEX_SHIM" ] || { bail "11: test/fault/timex_shim.c compiled"; return; }
    C=$(pg_tmpdir)
    http_init "$C" "snowflake.max_clock_error_ms = 10" || { bail "11: initialised"; return; }
    timex_set "$C" "5 64 16000000 16000000"     # the kernel: not synchronised
    http_start "$C" "LD_PRELOAD=$TIMEX_SHIM" "SF_TIMEX_FILE=$C/timex" \
        || { bail "11: started" "$(tail -5 "$C/server.log")"; return; }
    req "$C" /healthz
    is "11: clock not synchronised: /healthz 503" "$CODE" 503
    json_is "11: ... code SF004" .code SF004
    like "11: ... the reason says why" "$(jq -r .reason <<<"$BODY")" 'not synchronised'
    req "$C" '/v1/ids/batch?count=5'
    error_shape "11: /v1/ids/batch: 503, code SF004" 503 SF004
    is "11: ... the SQL error's message" "$(jq -r .message <<<"$BODY")" "system clock is not synchronised"
    req "$C" /metrics
    like "11: /metrics: snowflake_ready 0" "$BODY" $'\n''snowflake_ready 0'$'\n'
    timex_set "$C" "0 0 25000 2000"             # synchronised, 25 ms maximum error: above 10
    sleep 0.2                                   # the kernel is asked at most every 100 ms
    req "$C" /healthz
    is "11: maximum error 25 ms, limit 10: still 503 SF004" "$CODE $(jq -r .code <<<"$BODY")" "503 SF004"
    timex_set "$C" "0 0 3000 1000"              # synchronised, 3 ms
    sleep 0.2
    req "$C" /healthz
    is "11: synchronised within the limit: /healthz 200" "$CODE" 200
    req "$C" '/v1/ids/batch?count=5'
    is "11: ... ids again" "$CODE $(jq -r '.ids | length' <<<"$BODY")" "200 5"
    pg_stop "$C"
}

case_12() {
    echo "# case 12: a request waits for ids at most a second"
    start_a || return
    local floor
    # A clock tolerance of 10 s: a floor 3 s ahead is waited out, not refused.
    pg_val "$A" "ALTER SYSTEM SET snowflake.clock_tolerance_ms = 10000" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    floor=$(pg_val "$A" "SELECT snowflake_nextval() + (3000::bigint << 22)")
    pg_val "$A" "SELECT snowflake_advance_floor($floor)" >/dev/null
    req "$A" '/v1/ids/batch?count=10'
    error_shape "12: ids behind a floor 3 s ahead: 503, code 57014" 503 57014
    like "12: ... with Retry-After" "$HDRS" $'(^|\n)Retry-After: 1(\n|$)'
    like "12: ... the message says the ids were not ready in time" "$(jq -r .message <<<"$BODY")" '^ids were not ready within 1000 ms$'
    req "$A" /healthz
    is "12: /healthz meanwhile: 200 (the floor is waited out, not an error)" "$CODE" 200
    wait_for "floor passed" 10 sh -c "curl -s -o /dev/null -w '%{http_code}' '$(url "$A" '/v1/ids/batch?count=1')' | grep -q 200"
    req "$A" '/v1/ids/batch?count=10'
    is "12: once the clock passes the floor: 200" "$CODE" 200
    cmp_num "12: ... ids above the floor" "$(jq -r '.ids[0]' <<<"$BODY")" -gt "$floor"
    pg_val "$A" "ALTER SYSTEM RESET snowflake.clock_tolerance_ms" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
}

case_13() {
    echo "# case 13: /livez, /readyz (= /healthz); unauthenticated health reveals no etcd URL or holder"
    local C dead
    C=$(pg_tmpdir)
    dead=$(free_tcp_port)   # nothing listens there: the lease worker fails
    http_init "$C" "snowflake.etcd_endpoints = 'http://127.0.0.1:$dead'" "snowflake.worker_id = -1" \
        || { bail "13: initialised"; return; }
    http_start "$C" || { bail "13: started" "$(tail -5 "$C/server.log")"; return; }
    req "$C" /livez
    is "13: /livez while ids cannot be issued: 200" "$CODE" 200
    json_is "13: ... says ok" .status ok
    req "$C" /readyz
    is "13: /readyz: 503 SF003" "$CODE $(jq -r .code <<<"$BODY")" "503 SF003"
    local short=$BODY
    req "$C" /healthz
    is "13: /healthz is /readyz" "$CODE $BODY" "503 $short"
    is "13: ... a short reason without a token" "$(jq -r .reason <<<"$short")" "no worker id lease is held"
    unlike "13: ... no etcd URL in it" "$short" "http://|127\.0\.0\.1|$dead"
    pg_val "$C" "ALTER SYSTEM SET snowflake.http_token = 'tok-13'" >/dev/null
    pg_val "$C" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$C" /readyz
    is "13: token set, not sent: still the short reason" "$(jq -r .reason <<<"$BODY")" "no worker id lease is held"
    req "$C" /readyz -H 'Authorization: Bearer wrong'
    is "13: a wrong token: the short reason (not 401)" "$CODE $(jq -r .reason <<<"$BODY")" "503 no worker id lease is held"
    req "$C" /readyz -H 'Authorization: Bearer tok-13'
    like "13: the token: the full reason, with the etcd error" "$(jq -r .reason <<<"$BODY")" \
        "^no worker id lease is held: the lease worker .*connection refused"
    req "$C" /livez
    is "13: /livez needs no token" "$CODE" 200
    req "$C" /livez -I
    is "13: HEAD /livez: 200" "$CODE" 200
    req "$C" /readyz -X POST
    is "13: POST /readyz: 405" "$CODE" 405
    pg_stop "$C"
}

case_19() {
    echo "# case 19: a lost mark file: /readyz and ids 503 with 58P01 until snowflake_advance_floor()"
    local C last
    C=$(pg_tmpdir)
    http_init "$C" || { bail "19: initialised"; return; }
    http_start "$C" || { bail "19: started" "$(tail -5 "$C/server.log")"; return; }
    req "$C" '/v1/ids/batch?count=100'
    is "19: ids on a first start" "$CODE" 200
    last=$(jq -r '.ids[-1]' <<<"$BODY")
    wait_for "marker" 10 test -f "$C/data/snowflake.walmark" || not_ok "19: the mark worker wrote snowflake.walmark"
    pg_stop "$C"
    rm -f "$C/data/snowflake.mark"
    http_start "$C" || { bail "19: restarted without the mark file" "$(tail -5 "$C/server.log")"; return; }
    req "$C" /readyz
    is "19: /readyz: 503 58P01" "$CODE $(jq -r .code <<<"$BODY")" "503 58P01"
    json_is "19: ... the SQL error's message as the reason" .reason 'snowflake high-water mark file "snowflake.mark" is missing'
    req "$C" '/v1/ids/batch?count=10'
    error_shape "19: /v1/ids/batch: 503, code 58P01" 503 58P01
    like "19: ... the hint names snowflake_advance_floor()" "$(jq -r .hint <<<"$BODY")" 'snowflake_advance_floor\(\)'
    req "$C" /metrics
    like "19: /metrics: snowflake_ready 0" "$BODY" $'\n''snowflake_ready 0'$'\n'
    # The refused batch counts; the readiness probe before it does not.
    like "19: ... one call refused for the lost mark" "$BODY" \
        $'\n''snowflake_ids_refused_total\{cause="lost_mark",sqlstate="58P01"\} 1'$'\n'
    pg_val "$C" "CREATE EXTENSION snowflake" >/dev/null
    pg_val "$C" "SELECT snowflake_advance_floor($last)" >/dev/null || not_ok "19: snowflake_advance_floor()"
    req "$C" /readyz
    is "19: after snowflake_advance_floor(): /readyz 200" "$CODE" 200
    req "$C" '/v1/ids/batch?count=10'
    is "19: ... ids again" "$CODE" 200
    cmp_num "19: ... above the last one before the loss" "$(jq -r '.ids[0]' <<<"$BODY")" -gt "$last"
    pg_stop "$C"
}
