#!/bin/bash
# HTTP endpoint suite of snowflake (snowflake.http_listen): real servers on
# loopback ports, real clients (curl, wrk, raw sockets from bash).
#
# Prints one line per check, "ok - ..." or "not ok - ..." (details on "#"
# lines), and ends with "N passed, N failed"; exits non-zero on any failure.
#
#   1  every endpoint: /healthz, /v1/ids/batch (default, 100, 10000),
#      /v1/uuids/batch, /v1/ids/{id} against snowflake_decode(), /metrics
#      against snowflake_stats (every column has a metric, same values)
#   2  every error: bad counts, bad ids, unknown paths, other methods; JSON
#      bodies with a SQLSTATE code and a message
#   3  ids from HTTP (curl with keep-alive, wrk) and SQL (pgbench) at the same
#      time, all into one primary-key table: no conflict, all increasing per
#      source
#   4  snowflake.http_token: 401 without or with a wrong token, /healthz
#      open, reload to change it, non-superusers cannot read it
#   5  a few hundred malformed or hostile requests (bad paths and request
#      lines, huge headers, slowloris, invalid counts, non-UTF-8 bytes):
#      the worker answers throughout and afterwards, never restarted
#   6  the clock behind the last id (libfaketime): /healthz and the batch 503
#      with SF001, snowflake_ready 0; both recover
#   7  a hot standby (pg_basebackup -R): /healthz and ids 503 with 25006,
#      decoding works; 200 once promoted
#   8  fast shutdown with open keep-alive connections and load: prompt, and
#      the worker exits quietly
#   9  no worker id: /healthz 503 (55000); a bad snowflake.http_listen stops
#      the server at start, naming the setting
#  10  64 clients that trickle header lines and never finish (slowloris):
#      the server closes each after 10 s and answers others again
#  11  the kernel reports the clock unsynchronised, or its error above
#      snowflake.max_clock_error_ms (a shim of ntp_adjtime): /healthz and the
#      batch 503 with SF004; both recover
#  12  a batch that would wait on a floor 3 s ahead: 503 with 57014 and
#      Retry-After after at most 1 s of waiting (not 200 seconds later);
#      ids again once the clock passes the floor
#  13  /livez 200 while ids cannot be issued, /readyz (= /healthz) 503; its
#      reason without the token is short (no etcd URL), full with it
#  14  64 connections held: the next one gets 503 with Retry-After at once;
#      keep-alive answers say Keep-Alive: timeout=10
#  15  a GET with a body: 400; /v1/ids/batch/: 404; unknown or repeated
#      query parameters: 400 naming them
#  16  '*:port' without a token: FATAL unless
#      snowflake.http_allow_unauthenticated; without a token, a Host that is
#      not the listen address or localhost: 403 (DNS rebinding)
#  17  two tokens (rotation), snowflake.http_token_file (0600, read at
#      reload; readable by others: refused); a pg_monitor member cannot read
#      the token
#  18  snowflake.http_max_ids_per_second: 429 with Retry-After beyond it
#
# Usage: test/http.sh [case number ...]   (default: every case_N below)
# Needs root or the postgres user, curl, wrk, jq, pgbench, pg_basebackup,
# libfaketime. KEEP_TMP=1 keeps the instances' directories (logs).
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh
. test/fault/lib.sh

suite_begin http
SHIM_DIR=$SUITE_DIR
BG_PIDS=()
suite_cleanup() {
    local p
    for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}

require_tools curl wrk jq
ft_build_shim "$SHIM_DIR" || echo "# could not compile select_shim.c: workers keep the real clock"
timex_build_shim "$SHIM_DIR"

# --- helpers ---------------------------------------------------------------

# http_listening DIR: the HTTP worker of DIR logged that it listens.
http_listening() { grep -q "snowflake HTTP endpoint listening on 127.0.0.1:$(cat "$1/http_port")" "$1/server.log" 2>/dev/null; }

# http_start DIR [env...]: starts DIR with snowflake.http_listen on a free
# loopback port (DIR/data/http.conf, DIR/http_port), under libfaketime (or
# with the environment given instead), and waits until the endpoint
# listens. Three attempts with other ports.
http_start() {
    local dir=$1 port attempt
    shift
    for attempt in 1 2 3; do
        port=$(free_tcp_port)
        echo "$port" >"$dir/http_port"
        printf "snowflake.http_listen = '127.0.0.1:%s'\n" "$port" | as_pg tee "$dir/data/http.conf" >/dev/null
        if [ $# -gt 0 ]; then
            pg_start "$dir" "$@" || return 1
        else
            ft_start "$dir" || return 1
        fi
        if wait_for "listening" 10 http_listening "$dir"; then return 0; fi
        pg_stop "$dir"
    done
    return 1
}

# http_init DIR [conf lines...]: an instance with snowflake preloaded
# (worker 7) that includes DIR/data/http.conf.
http_init() {
    local dir=$1; shift
    pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" \
        "autovacuum = off" "log_min_messages = info" "include_if_exists = 'http.conf'" "$@"
}

# url DIR PATH (no process started: they are slow on a loaded machine)
url() {
    local port
    read -r port <"$1/http_port"
    echo "http://127.0.0.1:$port$2"
}

# req DIR PATH [curl args...]: sets CODE and BODY (and HDRS: the headers).
req() {
    local dir=$1 path=$2 out
    shift 2
    out=$(curl -s -m 10 -D "$SHIM_DIR/hdrs" -w '\n%{http_code}' "$@" "$(url "$dir" "$path")")
    CODE=${out##*$'\n'}
    BODY=${out%$'\n'*}
    HDRS=$(tr -d '\r' <"$SHIM_DIR/hdrs" 2>/dev/null)
}

# unlike DESC TEXT REGEX: TEXT does not match REGEX (extended).
unlike() {
    if [[ $2 =~ $3 ]]; then not_ok "$1" "got:  '$2'" "want: not /$3/"; else ok "$1"; fi
}

# json_is DESC FILTER WANT: jq FILTER of BODY.
json_is() { is "$1" "$(jq -r "$2" <<<"$BODY" 2>&1)" "$3"; }

# error_shape DESC STATUS CODE: CODE and BODY are an error with that status
# and SQLSTATE, a JSON object with a non-empty message.
error_shape() {
    local got
    got="$CODE $(jq -r 'if (.message | type) == "string" and (.message | length) > 0 then .code else "bad-shape" end' <<<"$BODY" 2>/dev/null || echo not-json)"
    is "$1" "$got" "$2 $3"
}

# worker_pid DIR: pid of the HTTP worker.
worker_pid() { pgrep -P "$(pg_postmaster_pid "$1")" -f 'snowflake HTTP endpoint' | head -1; }

# increasing FILE: the numbers in FILE (one per line) strictly increase
# (sort compares the digits: awk and jq would round ids above 2^53).
increasing() { sort -C -n -u "$1"; }

# -------------------------------------------------------------------------
# Instance A (cases 1-6): worker 7, libfaketime, wal_level replica (case 7
# takes a base backup of it).
A=
start_a() {
    [ -n "$A" ] && return 0
    A=$(pg_tmpdir)
    http_init "$A" "wal_level = replica" "max_wal_senders = 4" "hot_standby = on" \
        || { bail "instance A initialised"; A=; return 1; }
    http_start "$A" || { bail "instance A started with the HTTP endpoint" "$(tail -5 "$A/server.log")"; A=; return 1; }
    pg_val "$A" "CREATE EXTENSION snowflake" >/dev/null
}

case_1() {
    echo "# case 1: every endpoint"
    start_a || return
    req "$A" /healthz
    is "1: /healthz 200" "$CODE" 200
    json_is "1: /healthz says ok" .status ok
    like "1: JSON content type" "$HDRS" $'\n''Content-Type: application/json'
    req "$A" /v1/ids/batch
    is "1: /v1/ids/batch 200" "$CODE" 200
    json_is "1: ... without count: one id, a JSON string" '.ids | map(type) | join(",")' string
    req "$A" '/v1/ids/batch?count=100'
    json_is "1: count=100: 100 ids" '.ids | length' 100
    jq -r '.ids[]' <<<"$BODY" >"$SHIM_DIR/ids100"
    check "1: ... strictly increasing" increasing "$SHIM_DIR/ids100"
    is "1: ... all of worker 7, decoded in SQL" \
        "$(pg_val "$A" "SELECT count(*) FILTER (WHERE snowflake_worker_id(x::bigint) = 7) FROM unnest(string_to_array('$(paste -sd, "$SHIM_DIR/ids100")', ',')) x")" 100
    req "$A" '/v1/ids/batch?count=10000'
    jq -r '.ids[]' <<<"$BODY" >"$SHIM_DIR/ids10000"
    is "1: count=10000: 10000 ids" "$(wc -l <"$SHIM_DIR/ids10000")" 10000
    check "1: ... strictly increasing" increasing "$SHIM_DIR/ids10000"
    cmp_num "1: ... above the earlier batch" "$(head -1 "$SHIM_DIR/ids10000")" -gt "$(tail -1 "$SHIM_DIR/ids100")"
    local sqlid
    sqlid=$(pg_val "$A" "SELECT snowflake_nextval()")
    cmp_num "1: an id from SQL after them is above them" "$sqlid" -gt "$(tail -1 "$SHIM_DIR/ids10000")"
    req "$A" '/v1/ids/batch?count=1'
    cmp_num "1: an id from HTTP after that is above it" "$(jq -r '.ids[0]' <<<"$BODY")" -gt "$sqlid"

    req "$A" '/v1/uuids/batch?count=5'
    is "1: /v1/uuids/batch 200" "$CODE" 200
    json_is "1: ... 5 UUIDs, version 7, RFC variant" \
        '[.uuids[] | select(test("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"))] | length' 5
    json_is "1: ... strictly increasing" '[.uuids as $u | range(1; $u | length) | select($u[.] <= $u[. - 1])] | length' 0
    local u
    u=$(jq -r '.uuids[0]' <<<"$BODY")
    cmp_num "1: ... their time is now (uuidv7_timestamp within 5 s)" \
        "$(pg_val "$A" "SELECT abs(extract(epoch FROM uuidv7_timestamp('$u') - clock_timestamp()))::int")" -le 5

    req "$A" "/v1/ids/$sqlid"
    is "1: /v1/ids/{id} 200" "$CODE" 200
    is "1: ... the same as snowflake_decode()" \
        "$(jq -r '[.id, .timestamp, .worker_id, .sequence] | join(" ")' <<<"$BODY")" \
        "$(pg_val "$A" "SELECT '$sqlid ' || to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' ' || worker_id || ' ' || sequence FROM snowflake_decode($sqlid)")"
    json_is "1: ... ms_since_epoch, the id's milliseconds since the epoch (id >> 22)" .ms_since_epoch \
        "$(pg_val "$A" "SELECT $sqlid >> 22")"
    req "$A" /v1/ids/0
    json_is "1: /v1/ids/0 is the epoch" .timestamp 2025-01-01T00:00:00.000Z
    json_is "1: ... 0 ms since it" .ms_since_epoch 0
    req "$A" /v1/ids/9223372036854775807
    json_is "1: /v1/ids/INT64_MAX decodes" '.worker_id, .sequence' $'1023\n4095'
    req "$A" /v1/ids/123 -I
    is "1: HEAD /v1/ids/{id} 200" "$CODE" 200

    req "$A" /metrics
    is "1: /metrics 200" "$CODE" 200
    like "1: ... Prometheus text" "$HDRS" $'\n''Content-Type: text/plain; version=0.0.4'
    local cols col missing=""
    cols=$(pg_val "$A" "SELECT string_agg(attname, ' ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'snowflake_stats'::regclass AND attnum > 0")
    for col in $cols; do
        grep -Eq "^# HELP .*[( ]snowflake_stats\.$col[),]" <<<"$BODY" || missing="$missing $col"
    done
    is "1: every column of snowflake_stats has a metric (add a row to src/core/stats_columns.hpp)" "${missing# }" ""
    # docs/prometheus-queries.yaml and the sql_exporter collector: test/monitoring.sh.
    is "1: ... ids_issued_total equals snowflake_stats.ids_issued" \
        "$(awk '$1 == "snowflake_ids_issued_total" { print $2 }' <<<"$BODY")" "$(pg_val "$A" "SELECT ids_issued FROM snowflake_stats")"
    like "1: ... the worker id as a label" "$BODY" 'snowflake_info\{worker_id="7",epoch="2025-01-01T00:00:00.000Z"\} 1'
    like "1: ... ready" "$BODY" $'\n''snowflake_ready 1'$'\n'
    like "1: ... the lease state and lease id as labels (none: static)" "$BODY" $'\n''snowflake_lease_info\{state="static",lease_id=""\} 1'$'\n'
    like "1: ... the library's version" "$BODY" $'\n''snowflake_build_info\{version="'"$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" snowflake.control)"'"\} 1'$'\n'
    like "1: ... the server's start time" "$BODY" $'\n''process_start_time_seconds [0-9]{10}(\.[0-9]+)?'$'\n'
    like "1: ... requests counted by endpoint and code" "$BODY" $'\n''snowflake_http_requests_total\{endpoint="ids_batch",code="200"\} [1-9]'
    # Every sample line is NAME[{labels}] VALUE.
    is "1: ... every line is a comment or a sample" \
        "$(grep -v '^$' <<<"$BODY" | grep -vcE '^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[^}]*\})? -?[0-9.]+(e[-+]?[0-9]+)?)$')" 0
}

case_2() {
    echo "# case 2: errors"
    start_a || return
    local c n=0 bad=""
    for c in 0 10001 99999 100000 -1 +1 10abc abc 1e3 0x10 1.5 '' '%20' '%FF' 99999999999999999999; do
        req "$A" "/v1/ids/batch?count=$c"
        n=$((n + 1))
        [ "$CODE" = 400 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 22023 ] || bad="$bad [$c: $CODE]"
    done
    req "$A" '/v1/ids/batch?count'
    [ "$CODE" = 400 ] || bad="$bad [count without =: $CODE]"
    req "$A" '/v1/ids/batch?count=1&count=2'
    [ "$CODE" = 400 ] || bad="$bad [count twice: $CODE]"
    req "$A" '/v1/uuids/batch?count=0'
    [ "$CODE" = 400 ] || bad="$bad [uuids count=0: $CODE]"
    is "2: $((n + 3)) bad counts: 400, code 22023" "$bad" ""
    req "$A" '/v1/ids/batch?count=0'
    error_shape "2: ... a JSON error with a code and a message" 400 22023
    like "2: ... and a hint" "$(jq -r .hint <<<"$BODY")" '.'
    req "$A" '/v1/ids/batch?count=5&other=x'
    error_shape "2: other query parameters are refused" 400 22023

    bad=""
    for c in abc -1 9223372036854775808 18446744073709551616 1a '%FF' 1.0 '%201'; do
        req "$A" "/v1/ids/$c"
        [ "$CODE" = 400 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 22P02 ] || bad="$bad [$c: $CODE]"
    done
    req "$A" "/v1/ids/"
    [ "$CODE" = 400 ] || bad="$bad [empty: $CODE]"
    is "2: bad ids: 400, code 22P02" "$bad" ""

    bad=""
    for c in / /v1 /v1/ids /v2/ids/batch /healthz/ /metrics/x /V1/ids/batch /v1/uuids/1 '/%FF%FE' \
        /v1/ids/batch/ '/v1/ids/1%2F2'; do
        req "$A" "$c"
        [ "$CODE" = 404 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 42704 ] || bad="$bad [$c: $CODE]"
    done
    is "2: unknown paths: 404, code 42704" "$bad" ""

    bad=""
    for c in POST PUT DELETE PATCH OPTIONS; do
        req "$A" /v1/ids/batch -X "$c"
        [ "$CODE" = 405 ] && [ "$(jq -r .code <<<"$BODY" 2>/dev/null)" = 0A000 ] || bad="$bad [$c: $CODE]"
    done
    req "$A" /v1/ids/batch -X POST -d 'count=5'
    [ "$CODE" = 405 ] || bad="$bad [POST with a body: $CODE]"
    is "2: other methods: 405, code 0A000" "$bad" ""
    like "2: ... with an Allow header" "$HDRS" $'\n''Allow: GET'
    req "$A" /v1/ids/batch -I
    is "2: HEAD on a batch (would use up ids): 405" "$CODE" 405
    req "$A" /healthz -I
    is "2: HEAD /healthz: 200" "$CODE" 200
}

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
    local k i urls=() u
    u=$(url "$A" '/v1/ids/batch?count=500')
    for i in $(seq 1 60); do urls+=("$u"); done
    for k in 1 2 3; do
        curl -s -m 60 "${urls[@]}" >"$SHIM_DIR/curl$k.out" &
        BG_PIDS+=($!)
    done
    # And wrk, whose ids are counted (not kept) through ids_issued.
    wrk -t1 -c2 -d3s "$(url "$A" '/v1/ids/batch?count=100')" >"$SHIM_DIR/wrk3.out" 2>&1
    wait "${BG_PIDS[@]}"
    BG_PIDS=()
    wait "$pgb"
    is "3: pgbench ran without error" "$?" 0
    is "3: wrk got no error answer" "$(grep -c 'Non-2xx' "$SHIM_DIR/wrk3.out")" 0
    for k in 1 2 3; do
        jq -r '.ids[]' "$SHIM_DIR/curl$k.out" >"$SHIM_DIR/http$k.ids"
        is "3: curl $k: 60 batches of 500 over one connection" "$(wc -l <"$SHIM_DIR/http$k.ids")" 30000
        check "3: curl $k: ids strictly increasing" increasing "$SHIM_DIR/http$k.ids"
    done
    cat "$SHIM_DIR"/http[123].ids | sed 's/$/\thttp/' >"$SHIM_DIR/http.tsv"
    chmod 644 "$SHIM_DIR/http.tsv"
    local out
    out=$(pg_psql "$A" -c "\\copy mixed FROM '$SHIM_DIR/http.tsv'" 2>&1)
    is "3: the HTTP ids go into the table the SQL ids are in: no conflict" "$out" ""
    is "3: ... every id there, none twice" \
        "$(pg_val "$A" "SELECT count(*) FILTER (WHERE src = 'http') || ' ' || (count(*) - count(DISTINCT id))  FROM mixed")" "90000 0"
    cmp_num "3: ... and the SQL ids" "$(pg_val "$A" "SELECT count(*) FROM mixed WHERE src = 'sql'")" -gt 0
    is "3: ... all of worker 7" "$(pg_val "$A" "SELECT count(*) FROM mixed WHERE snowflake_worker_id(id) <> 7")" 0
    pg_val "$A" "ALTER SYSTEM RESET snowflake.http_max_ids_per_second" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
}

case_4() {
    echo "# case 4: snowflake.http_token"
    start_a || return
    pg_val "$A" "ALTER SYSTEM SET snowflake.http_token = 's3cret-token'" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$A" '/v1/ids/batch?count=2'
    error_shape "4: no token: 401, code 28000" 401 28000
    like "4: ... WWW-Authenticate: Bearer" "$HDRS" $'\n''WWW-Authenticate: Bearer'
    req "$A" '/v1/ids/batch?count=2' -H 'Authorization: Bearer wrong'
    is "4: a wrong token: 401" "$CODE" 401
    req "$A" '/v1/ids/batch?count=2' -H 'Authorization: Bearer s3cret-toke'
    is "4: a prefix of the token: 401" "$CODE" 401
    req "$A" '/v1/ids/batch?count=2' -H 'Authorization: Basic czNjcmV0LXRva2Vu'
    is "4: another scheme: 401" "$CODE" 401
    req "$A" '/v1/ids/batch?count=2' -H 'Authorization: Bearer s3cret-token'
    is "4: the token: 200" "$CODE" 200
    json_is "4: ... ids" '.ids | length' 2
    req "$A" /metrics
    is "4: /metrics needs it too" "$CODE" 401
    req "$A" /nope
    is "4: an unknown path without it: 401 (nothing is revealed)" "$CODE" 401
    req "$A" /healthz
    is "4: /healthz does not" "$CODE" 200
    pg_val "$A" "CREATE ROLE plain LOGIN" >/dev/null
    like "4: a non-superuser cannot read the token" \
        "$(pg_psql "$A" -A -t -c "SET ROLE plain" -c "SHOW snowflake.http_token" 2>&1)" 'permission denied|must be superuser'
    is "4: ... nor see it in pg_settings" \
        "$(pg_val "$A" "SET ROLE plain; SELECT count(*) FROM pg_settings WHERE name = 'snowflake.http_token'")" 0
    pg_val "$A" "ALTER SYSTEM RESET snowflake.http_token" >/dev/null
    pg_val "$A" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$A" '/v1/ids/batch?count=2'
    is "4: reset and reloaded: no token needed" "$CODE" 200
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

case_15() {
    echo "# case 15: requests the endpoint does not take: a GET with a body, a trailing slash, unknown or repeated parameters"
    start_a || return
    req "$A" '/v1/ids/batch?count=2' -X GET --data-binary 'abc'
    error_shape "15: a GET with a body: 400" 400 08P01
    req "$A" '/v1/ids/batch?count=2' -X GET -H 'Transfer-Encoding: chunked' --data-binary 'abc'
    is "15: ... a chunked one too" "$CODE" 400
    req "$A" '/v1/ids/batch?count=2' -H 'Content-Length: 0'
    is "15: a GET with Content-Length: 0: 200" "$CODE" 200
    req "$A" '/v1/ids/batch/'
    error_shape "15: /v1/ids/batch/: 404, not an invalid id" 404 42704
    req "$A" '/v1/ids/batch/?count=2'
    is "15: ... with a count too" "$CODE" 404
    req "$A" '/v1/ids/123/'
    is "15: /v1/ids/123/: 404" "$CODE" 404
    req "$A" '/v1/ids/batch?count=5&other=x'
    error_shape "15: an unknown parameter: 400" 400 22023
    like "15: ... naming it" "$(jq -r .message <<<"$BODY")" '"other"'
    req "$A" '/v1/ids/batch?count=1&count=2'
    error_shape "15: count given twice: 400" 400 22023
    like "15: ... naming it" "$(jq -r .message <<<"$BODY")" '"count".*more than once'
    req "$A" '/v1/ids/batch?cnt=2'
    like "15: a misspelt count: 400 naming it" "$CODE $(jq -r .message <<<"$BODY")" '^400 .*"cnt"'
    req "$A" '/healthz?verbose=1'
    like "15: /healthz?verbose=1: 400 naming it" "$CODE $(jq -r .message <<<"$BODY")" '^400 .*"verbose"'
    req "$A" '/v1/ids/123?x'
    is "15: /v1/ids/123?x: 400" "$CODE" 400
    req "$A" '/v1/uuids/batch?count=2'
    is "15: the batches still take count" "$CODE" 200
    # libmicrohttpd's own answers: the status is right (their bodies are
    # libmicrohttpd's, fixed when it was built; docs/reference.md).
    local longpath
    longpath=$(head -c 40000 /dev/zero | tr '\0' 'x')
    req "$A" "/v1/ids/$longpath"
    like "15: a 40 KB path: 414 or 431" "$CODE" '^(414|431)$'
}

# http_start_at DIR LISTEN: starts DIR with snowflake.http_listen = LISTEN
# (the port from DIR/http_port); returns when it listens, 1 if it fails.
http_start_at() {
    local from
    from=$(log_size "$1")
    printf "snowflake.http_listen = '%s'\n" "$2" | as_pg tee "$1/data/http.conf" >/dev/null
    pg_start "$1" || return 1
    wait_for "listening" 10 sh -c "tail -c +$((from + 1)) '$1/server.log' | grep -q 'snowflake HTTP endpoint listening on'"
}

case_16() {
    echo "# case 16: safe defaults: no token beyond loopback is a FATAL; Host checked without a token"
    local C port
    C=$(pg_tmpdir)
    http_init "$C" || { bail "16: initialised"; return; }
    port=$(free_tcp_port); echo "$port" >"$C/http_port"
    if http_start_at "$C" "*:$port"; then
        not_ok "16: '*:$port' without a token: the server refuses to start"
        pg_stop "$C"
    else
        like "16: '*:$port' without a token: a FATAL naming the way out" \
            "$(grep FATAL "$C/server.log" | tail -1)" 'snowflake.http_token.*|http_allow_unauthenticated'
        like "16: ... its hint names snowflake.http_allow_unauthenticated" \
            "$(grep -A3 FATAL "$C/server.log" | grep HINT | tail -1)" 'snowflake.http_allow_unauthenticated'
    fi
    pg_conf "$C" "snowflake.http_allow_unauthenticated = on"
    if http_start_at "$C" "*:$port"; then
        ok "16: ... with snowflake.http_allow_unauthenticated = on it starts"
        req "$C" /livez
        is "16: ... and answers on loopback" "$CODE" 200
        req "$C" /v1/ids/batch -H "Host: 10.1.2.3:$port"
        is "16: ... a numeric Host on a wildcard address: 200" "$CODE" 200
        req "$C" /v1/ids/batch -H "Host: evil.example:$port"
        is "16: ... a name that is not localhost: 403" "$CODE" 403
        pg_stop "$C"
    else
        not_ok "16: ... with snowflake.http_allow_unauthenticated = on it starts" "$(tail -5 "$C/server.log")"
    fi
    # With a token it starts; the token removed at a reload: ids refused
    # (403), /livez still 200.
    pg_conf "$C" "snowflake.http_allow_unauthenticated = off" "snowflake.http_token = 'tok-16a'"
    if http_start_at "$C" "*:$port"; then
        req "$C" /v1/ids/batch -H 'Authorization: Bearer tok-16a'
        is "16: '*:PORT' with a token: starts and serves" "$CODE" 200
        pg_val "$C" "ALTER SYSTEM SET snowflake.http_token = ''" >/dev/null
        pg_val "$C" "SELECT pg_reload_conf()" >/dev/null
        sleep 0.5
        req "$C" /v1/ids/batch
        error_shape "16: ... the token removed at a reload: 403" 403 28000
        like "16: ... saying why" "$(jq -r .message <<<"$BODY")" 'no token is set for a non-loopback address'
        req "$C" /livez
        is "16: ... /livez still 200" "$CODE" 200
        pg_stop "$C"
    else
        not_ok "16: '*:PORT' with a token: starts" "$(tail -5 "$C/server.log")"
    fi
    pg_conf "$C" "snowflake.http_token = ''"
    http_start_at "$C" "127.0.0.1:$port" || { bail "16: started on loopback" "$(tail -5 "$C/server.log")"; return; }
    req "$C" /v1/ids/batch -H 'Host: evil.example'
    error_shape "16: no token, Host: evil.example (DNS rebinding): refused" 403 28000
    like "16: ... saying why" "$(jq -r .message <<<"$BODY")" 'evil\.example'
    req "$C" /livez -H "Host: evil.example:$port"
    is "16: ... on every path" "$CODE" 403
    req "$C" /v1/ids/batch -H "Host: localhost:$port"
    is "16: Host: localhost:PORT: 200" "$CODE" 200
    req "$C" /v1/ids/batch -H "Host: LOCALHOST"
    is "16: Host: LOCALHOST: 200" "$CODE" 200
    req "$C" /v1/ids/batch
    is "16: Host: 127.0.0.1:PORT (the listen address): 200" "$CODE" 200
    req "$C" /v1/ids/batch -H "Host: 127.0.0.2:$port"
    is "16: Host: 127.0.0.2:PORT: 403" "$CODE" 403
    pg_val "$C" "ALTER SYSTEM SET snowflake.http_token = 'tok-16'" >/dev/null
    pg_val "$C" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$C" /v1/ids/batch -H 'Host: evil.example' -H 'Authorization: Bearer tok-16'
    is "16: with a token, any Host: 200" "$CODE" 200
    pg_stop "$C"
}

case_17() {
    echo "# case 17: two tokens (rotation), snowflake.http_token_file; nobody but superusers reads a token"
    local C tf
    C=$(pg_tmpdir)
    tf="$C/data/http_token"
    http_init "$C" "snowflake.http_token = 'old-token, new-token'" || { bail "17: initialised"; return; }
    http_start "$C" || { bail "17: started" "$(tail -5 "$C/server.log")"; return; }
    req "$C" /v1/ids/batch -H 'Authorization: Bearer old-token'
    is "17: the old token: 200" "$CODE" 200
    req "$C" /v1/ids/batch -H 'Authorization: Bearer new-token'
    is "17: the new token: 200" "$CODE" 200
    req "$C" /v1/ids/batch -H 'Authorization: Bearer old-token, new-token'
    is "17: both at once: 401" "$CODE" 401
    pg_val "$C" "CREATE ROLE mon LOGIN IN ROLE pg_monitor" >/dev/null
    local shown
    shown=$(pg_psql "$C" -U mon -A -t -c "SHOW snowflake.http_token" 2>&1)
    unlike "17: a pg_monitor member's SHOW does not reveal it ($shown)" "$shown" 'old-token|new-token'
    shown=$(pg_psql "$C" -U mon -A -t -c "SELECT current_setting('snowflake.http_token')" 2>&1)
    unlike "17: ... nor current_setting() ($shown)" "$shown" 'old-token|new-token'
    shown=$(pg_psql "$C" -U mon -A -t -c "SELECT string_agg(setting || reset_val || coalesce(boot_val, ''), ',') FROM pg_settings WHERE name LIKE 'snowflake.http_token%'" 2>&1)
    unlike "17: ... nor pg_settings ($shown)" "$shown" 'old-token|new-token'
    shown=$(pg_psql "$C" -A -t -c "SHOW snowflake.http_token" 2>&1)
    unlike "17: nor a superuser's SHOW (the value stays in the file)" "$shown" 'old-token|new-token'
    # The token file: the secret out of postgresql.conf.
    printf 'file-old\nfile-new\n' >"$tf"; chown postgres: "$tf"; chmod 600 "$tf"
    pg_val "$C" "ALTER SYSTEM SET snowflake.http_token = ''" >/dev/null
    pg_val "$C" "ALTER SYSTEM SET snowflake.http_token_file = 'http_token'" >/dev/null
    pg_val "$C" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$C" /v1/ids/batch -H 'Authorization: Bearer file-new'
    is "17: a token of the file (mode 0600): 200" "$CODE" 200
    req "$C" /v1/ids/batch -H 'Authorization: Bearer file-old'
    is "17: ... the other one: 200" "$CODE" 200
    req "$C" /v1/ids/batch -H 'Authorization: Bearer old-token'
    is "17: the setting's old token no longer: 401" "$CODE" 401
    printf 'file-newer\n' >"$tf"
    pg_val "$C" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$C" /v1/ids/batch -H 'Authorization: Bearer file-newer'
    is "17: the file is read again at a reload" "$CODE" 200
    chmod 644 "$tf"
    pg_val "$C" "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
    req "$C" /v1/ids/batch -H 'Authorization: Bearer file-newer'
    is "17: the file readable by others at a reload: no token is accepted (401)" "$CODE" 401
    like "17: ... the log says why" "$(grep -A1 'could not use snowflake.http_token_file' "$C/server.log" | tail -2)" 'group or others'
    pg_stop "$C"
    if pg_start "$C"; then
        not_ok "17: a token file readable by others: the server refuses to start"
        pg_stop "$C"
    else
        like "17: a token file readable by others: the server refuses to start, saying why" \
            "$(grep -A2 FATAL "$C/server.log" | tail -3)" 'group or others'
    fi
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

run_cases http "$@"
