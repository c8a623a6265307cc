# shellcheck shell=bash
# Cases of the HTTP endpoint suite (sourced by test/http.sh): tokens, and
# the safe defaults without one.
#   4  snowflake.http_token: 401 without it, /healthz open, reload, hidden
#  16  '*:port' without a token: FATAL; the Host checked without a token
#  17  two tokens (rotation), snowflake.http_token_file; hidden from pg_monitor

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
