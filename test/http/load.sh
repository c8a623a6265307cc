# shellcheck shell=bash
# Cases of the HTTP endpoint suite (sourced by test/http.sh): load and its
# limits: HTTP and SQL at once, hostile and slow clients, the connection
# limit, the ceiling on ids per second.
#   3  HTTP (curl, wrk) and SQL (pgbench) into one primary-key table
#   5  a few hundred malformed or hostile requests; the worker goes on
#  10  64 slowloris clients: each closed after 10 s
#  14  64 connections held: the next one 503 at once; Keep-Alive: timeout=10
#  18  snowflake.http_max_ids_per_second: 429 with Retry-After

case_3() {
    echo "# case 3: ids from HTTP and SQL into one primary-key table"
    start_a || return
    pg_val "$A" "CREATE TABLE mixed (id bigint PRIMARY KEY, src text NOT NULL)" >/dev/null
    # No ceiling on HTTP ids here (case 18 tests it): wrk alone can pull
    # more than half the cap on a quiet machine, and 429s would count as errors.
    pg_val "$A" "ALTER SYSTEM SET snowflake.http_max_ids_per_second = 0" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5  # the worker reads its configuration between turns (at most 100 ms apart)
    echo "INSERT INTO mixed SELECT x, 'sql' FROM snowflake_nextval_batch(100) x;" >"$SHIM_DIR/ins.sql"
    chmod 644 "$SHIM_DIR/ins.sql"
    as_pg "$PGBIN/pgbench" -n -h "$A" -p "$PG_PORT" -U postgres -c 2 -j 2 -T 4 -f "$SHIM_DIR/ins.sql" postgres \
        >"$SHIM_DIR/pgbench.out" 2>&1 &
    local pgb=$!
    # Three curl processes, each one connection kept alive for 60 requests.
    curl_batches "$A" http3 60 500
    # And wrk, whose ids are counted (not kept) through ids_issued.
    wrk -t1 -c2 -d3s "$(url "$A" '/v1/ids/batch?count=100')" >"$SHIM_DIR/wrk3.out" 2>&1
    wait "${BG_PIDS[@]}"
    BG_PIDS=()
    wait "$pgb"
    is "3: pgbench ran without error" "$?" 0
    is "3: wrk got no error answer" "$(grep -c 'Non-2xx' "$SHIM_DIR/wrk3.out")" 0
    batch_ids 3 http3 60 500
    local out
    out=$(pg_psql "$A" -c "\\copy mixed FROM '$SHIM_DIR/http3.tsv'" 2>&1)
    is "3: the HTTP ids go into the table the SQL ids are in: no conflict" "$out" ""
    is "3: ... every id there, none twice" \
        "$(pg_val "$A" "SELECT count(*) FILTER (WHERE src = 'http') || ' ' || (count(*) - count(DISTINCT id))  FROM mixed")" "90000 0"
    cmp_num "3: ... and the SQL ids" "$(pg_val "$A" "SELECT count(*) FROM mixed WHERE src = 'sql'")" -gt 0
    is "3: ... all of worker 7" "$(pg_val "$A" "SELECT count(*) FROM mixed WHERE snowflake_worker_id(id) <> 7")" 0
    pg_val "$A" "ALTER SYSTEM RESET snowflake.http_max_ids_per_second" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
}

# raw_send DIR BYTES [TIMEOUT]: sends BYTES (printf format) on a new
# connection and prints the status line of the answer (empty if the
# connection was closed or nothing came within TIMEOUT seconds, default 2).
raw_send() {
    (
        trap '' PIPE   # the server may close before everything is written
        read -r port <"$1/http_port"
        exec 3<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || { echo connect-failed; exit 0; }
        # shellcheck disable=SC2059
        printf "$2" >&3 2>/dev/null
        line=""
        IFS= read -r -t "${3:-2}" line <&3
        echo "${line%$'\r'}"
    )
}

case_5() {
    echo "# case 5: malformed and hostile requests"
    start_a || return
    local wpid n=0 status bad=0 i
    T5=$(real_now)
    wpid=$(worker_pid "$A")
    # Slowloris: 20 connections that send a header line every 0.3 s for 4 s.
    for i in $(seq 1 20); do
        (
            trap '' PIPE
            exec 3<>"/dev/tcp/127.0.0.1/$(cat "$A/http_port")" || exit 0
            printf 'GET /v1/ids/batch HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&3
            for _ in $(seq 1 13); do sleep 0.3; printf 'X-Slow: 1\r\n' >&3 2>/dev/null || exit 0; done
        ) &
        BG_PIDS+=($!)
    done
    sleep 0.3
    # Requests that must get an HTTP error or be closed, never crash or hang
    # the worker.
    local reqs=(
        'GARBAGE\r\n\r\n'
        'GET\r\n\r\n'
        'GET /healthz\r\n\r\n'
        'GET /healthz HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n'
        'GET /v1/ids/\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        'GET /\xc0\xaf HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        'GET /v1/ids/batch?count=\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        'GET /v1/ids/batch?count=%%00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        'GET /v1/ids/%%00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        'GET /v1/ids/batch?count=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n'
        'GET /v1/ids/batch?count=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'
        'POST /v1/ids/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\nabc'
        'GET /v1/ids/batch?count=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n'
        'GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
        'GET /v1/ids/batch?count=10000&count=10000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
    )
    local r
    for i in $(seq 1 4); do
        for r in "${reqs[@]}"; do
            status=$(raw_send "$A" "$r")
            n=$((n + 1))
            case $status in
                "HTTP/1."[01]" "[45]*|"") ;;          # an error, or closed
                *) bad=$((bad + 1)); echo "#   '$r' -> '$status'" ;;
            esac
        done
    done
    # Binary garbage: no answer (libmicrohttpd waits for a request line
    # until the idle timeout), nothing else.
    status=$(raw_send "$A" '\x00\x01\x02\x03\r\n\r\n' 1)
    n=$((n + 1))
    [ -z "$status" ] || [[ $status == "HTTP/1."[01]" "[45]* ]] || bad=$((bad + 1))
    is "5: $n malformed requests: each an HTTP 4xx/5xx or a closed connection" "$bad" 0
    echo "# raw requests done after $(elapsed_since "$T5") s"
    # Huge headers: one 64 KiB header, and 2,000 small ones.
    local big
    big=$(head -c 65536 /dev/zero | tr '\0' 'a')
    status=$(raw_send "$A" "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: $big\r\n\r\n")
    like "5: a 64 KiB header: refused (431/413/400) or closed" "$status" '^(HTTP/1.1 4[0-9][0-9]|)'
    local many=""
    for i in $(seq 1 2000); do many="${many}X-H$i: v\r\n"; done
    status=$(raw_send "$A" "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${many}\r\n")
    like "5: 2,000 headers: refused or closed" "$status" '^(HTTP/1.1 4[0-9][0-9]|)'
    local longpath
    longpath=$(head -c 40000 /dev/zero | tr '\0' 'x')
    req "$A" "/v1/ids/$longpath"
    like "5: a 40 KB path: 4xx" "$CODE" '^4'
    echo "# huge requests done after $(elapsed_since "$T5") s"
    # Invalid counts through curl, 200 of them on one kept-alive connection.
    local urls=() base
    base=$(url "$A" "/v1/ids/batch?count=")
    for i in $(seq 1 200); do
        urls+=(-o /dev/null "$base$((RANDOM % 2 == 0 ? 10001 + RANDOM : -RANDOM))")
    done
    is "5: 200 invalid counts on one connection: 400 each" \
        "$(curl -s -m 30 -w '%{http_code}\n' "${urls[@]}" | sort | uniq -c | awk '{ print $2 " x" $1 }')" "400 x200"
    n=$((n + 200))
    # Bad and non-UTF-8 paths through curl, 100 on one connection.
    local paths=('/v1/ids/%FF%FE' '/%C0%AF' '/v1/ids/batch%00' '/v1/%E2%82' '/%ED%A0%80' '/v1/ids/1%0A2'
                 '/v1/uuids/batch/..' '/metrics%3F' '/healthz%20' '/v1/ids/%2B1')
    base=$(url "$A" "")
    urls=()
    for i in $(seq 1 10); do
        for r in "${paths[@]}"; do urls+=(-o /dev/null "$base$r"); done
    done
    is "5: 100 bad or non-UTF-8 paths on one connection: 400 or 404 each" \
        "$(curl -s -m 30 --path-as-is -w '%{http_code}\n' "${urls[@]}" | grep -cvE '^(400|404)$')" 0
    n=$((n + 100))
    echo "# counts and paths done after $(elapsed_since "$T5") s"
    # While the slowloris connections are still open, ordinary requests
    # are answered at once.
    local t0
    t0=$(real_now)
    req "$A" '/v1/ids/batch?count=3'
    is "5: during the slowloris, a request is answered" "$CODE" 200
    cmp_num "5: ... within 1 s (ms)" "$(elapsed_since "$t0" | tr -d .)" -lt 1000
    wait "${BG_PIDS[@]}" 2>/dev/null
    BG_PIDS=()
    req "$A" '/v1/ids/batch?count=3'
    is "5: after all of it, the worker answers" "$CODE" 200
    json_is "5: ... with ids" '.ids | length' 3
    is "5: ... the same worker process (never restarted)" "$(worker_pid "$A")" "$wpid"
    is "5: no crash in the server log" "$(grep -cE 'terminated by signal|PANIC|exited with exit code' "$A/server.log")" 0
    # More connections than the limit (64): the excess is refused, the
    # worker goes on.
    wrk -t1 -c100 -d2s "$(url "$A" /healthz)" >"$SHIM_DIR/wrk5.out" 2>&1
    req "$A" /healthz
    is "5: after 100 connections at once (limit 64), /healthz answers" "$CODE" 200
    is "5: ... the same worker process" "$(worker_pid "$A")" "$wpid"
}

case_10() {
    echo "# case 10: clients that trickle bytes (slowloris) hold a connection slot for at most 10 s"
    start_a || return
    local port i t0 wpid closed=0 early=0 late=0 e
    port=$(cat "$A/http_port")
    wpid=$(worker_pid "$A")
    rm -f "$SHIM_DIR"/slow.*
    t0=$(real_now)
    # 64 connections, every slot: each sends a header line every second and
    # never ends its headers, so it is never idle. Each records when the
    # server ended it (EOF or a failed write), or "never" after 25 s.
    for i in $(seq 1 64); do
        (
            trap '' PIPE
            exec 3<>"/dev/tcp/127.0.0.1/$port" || { echo refused >"$SHIM_DIR/slow.$i"; exit 0; }
            printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n' >&3
            for _ in $(seq 1 25); do
                printf 'X-Slow: 1\r\n' >&3 2>/dev/null || { elapsed_since "$t0" >"$SHIM_DIR/slow.$i"; exit 0; }
                IFS= read -r -t 1 _ <&3
                [ $? -gt 128 ] || { elapsed_since "$t0" >"$SHIM_DIR/slow.$i"; exit 0; }
            done
            echo never >"$SHIM_DIR/slow.$i"
        ) &
        BG_PIDS+=($!)
    done
    # Until all 64 are connected (a loaded machine starts them slowly).
    wait_for "64 connections" 10 sh -c \
        "[ \$(ss -Htn state established '( sport = :$port )' | wc -l) -ge 64 ]" \
        || echo "# only $(ss -Htn state established "( sport = :$port )" | wc -l) trickling clients connected"
    is "10: with every slot held, a new client gets 503 at once (case 14)" \
        "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$(url "$A" /healthz)")" 503
    if wait_for "answered" 20 sh -c "curl -s -m 1 -o /dev/null -w '%{http_code}' '$(url "$A" /healthz)' | grep -q 200"; then
        ok "10: /healthz is answered again once the trickling clients' 10 s are up"
    else
        not_ok "10: /healthz is answered again once the trickling clients' 10 s are up" "after $(elapsed_since "$t0") s"
    fi
    e=$(elapsed_since "$t0")
    if fcmp "$e" '>=' 9 && fcmp "$e" '<=' 15; then
        ok "10: ... 9 to 15 s after they connected ($e s)"
    else
        not_ok "10: ... 9 to 15 s after they connected" "after $e s"
    fi
    wait "${BG_PIDS[@]}" 2>/dev/null
    BG_PIDS=()
    for i in $(seq 1 64); do
        e=$(cat "$SHIM_DIR/slow.$i" 2>/dev/null)
        if [[ $e =~ ^[0-9.]+$ ]]; then
            closed=$((closed + 1))
            fcmp "$e" '<' 9 && early=$((early + 1))
            fcmp "$e" '>' 14 && late=$((late + 1))
        fi
    done
    is "10: the server closed all 64 trickling connections" "$closed" 64
    is "10: ... none before 9 s" "$early" 0
    is "10: ... none after 14 s" "$late" 0
    is "10: ... the same worker process" "$(worker_pid "$A")" "$wpid"
}

# hold_connections DIR N: N connections that each send one complete request
# and then stay open (kept alive) for 20 s; waits until N are established.
hold_connections() {
    local dir=$1 n=$2 port i
    port=$(cat "$dir/http_port")
    for i in $(seq 1 "$n"); do
        (
            trap '' PIPE
            exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 0
            printf 'GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&3
            sleep 20
        ) &
        BG_PIDS+=($!)
    done
    wait_for "$n connections" 15 sh -c \
        "[ \$(ss -Htn state established '( sport = :$port )' | wc -l) -ge $n ]"
}

release_connections() {
    local p
    for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait "${BG_PIDS[@]}" 2>/dev/null
    BG_PIDS=()
}

case_14() {
    echo "# case 14: the 65th connection gets 503 with Retry-After at once; keep-alive answers say their timeout"
    start_a || return
    req "$A" /livez
    like "14: a kept-alive answer says Keep-Alive: timeout=10" "$HDRS" $'(^|\n)Keep-Alive: timeout=10(\n|$)'
    req "$A" '/v1/ids/batch?count=1' -H 'Connection: close'
    unlike "14: ... an answer that closes does not" "$HDRS" 'Keep-Alive:'
    hold_connections "$A" 64 || echo "# fewer than 64 connections held"
    local t0 took
    t0=$(real_now)
    req "$A" '/v1/ids/batch?count=1' -m 5
    took=$(elapsed_since "$t0")
    is "14: 64 connections open: the next one gets 503" "$CODE" 503
    like "14: ... with Retry-After" "$HDRS" $'(^|\n)Retry-After: [0-9]+(\n|$)'
    like "14: ... and Connection: close" "$HDRS" $'(^|\n)Connection: close(\n|$)'
    error_shape "14: ... a JSON error" 503 53300
    check "14: ... at once, not after the held ones go (${took} s)" fcmp "$took" '<' 3
    release_connections
    wait_for "answered" 15 sh -c "curl -s -m 1 -o /dev/null -w '%{http_code}' '$(url "$A" /livez)' | grep -q 200"
    req "$A" '/v1/ids/batch?count=1'
    is "14: once they are gone: 200" "$CODE" 200
}

case_18() {
    echo "# case 18: snowflake.http_max_ids_per_second: 429 with Retry-After beyond it"
    start_a || return
    is "18: the default: half the cap" "$(pg_val "$A" "SHOW snowflake.http_max_ids_per_second")" 2048000
    pg_val "$A" "ALTER SYSTEM SET snowflake.http_max_ids_per_second = 100" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$A" '/v1/ids/batch?count=10000'
    is "18: 100 ids/s: a batch of 10,000 is served" "$CODE" 200
    req "$A" '/v1/ids/batch?count=1'
    error_shape "18: ... then 429" 429 53400
    like "18: ... with Retry-After (about 100 s)" "$HDRS" $'(^|\n)Retry-After: [0-9]{2,3}(\n|$)'
    like "18: ... and Retry-After-Ms, the same in milliseconds" "$HDRS" $'(^|\n)Retry-After-Ms: 9[0-9]{4}(\n|$)'
    req "$A" '/v1/uuids/batch?count=5'
    is "18: UUIDs are not counted" "$CODE" 200
    req "$A" '/v1/ids/123'
    is "18: nor decoding" "$CODE" 200
    pg_val "$A" "ALTER SYSTEM SET snowflake.http_max_ids_per_second = 0" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$A" '/v1/ids/batch?count=10000'
    is "18: 0 (no limit): served again" "$CODE" 200
    pg_val "$A" "ALTER SYSTEM RESET snowflake.http_max_ids_per_second" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
}
