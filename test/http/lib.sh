# shellcheck shell=bash
# Helpers of the HTTP endpoint suite (test/http.sh and its case files in
# test/http/). Source after test/lib/suite.sh and test/lib/timex.sh; the
# runner sets SHIM_DIR (the suite's work directory) and BG_PIDS (background
# clients, killed by its suite_cleanup).

HTTP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

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

# curl_batches DIR NAME REQUESTS COUNT: three curl processes in the
# background (BG_PIDS), each one keep-alive connection asking REQUESTS
# batches of COUNT ids; their answers in $SHIM_DIR/NAME_K.out.
curl_batches() {
    local u urls=() i k
    u=$(url "$1" "/v1/ids/batch?count=$4")
    for i in $(seq 1 "$3"); do urls+=("$u"); done
    for k in 1 2 3; do
        curl -s -m 60 "${urls[@]}" >"$SHIM_DIR/$2_$k.out" &
        BG_PIDS+=($!)
    done
}

# batch_ids CASE NAME REQUESTS COUNT: once curl_batches' processes ended,
# checks that each connection got all its ids, strictly increasing, and
# writes them all, each followed by a tab and "http", into
# $SHIM_DIR/NAME.tsv (readable by the server, for \copy).
batch_ids() {
    local k
    for k in 1 2 3; do
        jq -r '.ids[]' "$SHIM_DIR/$2_$k.out" >"$SHIM_DIR/$2_$k.ids"
        is "$1: curl $k: $3 batches of $4 over one connection" "$(wc -l <"$SHIM_DIR/$2_$k.ids")" $(($3 * $4))
        check "$1: curl $k: ids strictly increasing" increasing "$SHIM_DIR/$2_$k.ids"
    done
    cat "$SHIM_DIR/$2"_[123].ids | sed 's/$/\thttp/' >"$SHIM_DIR/$2.tsv"
    chmod 644 "$SHIM_DIR/$2.tsv"
}

# -------------------------------------------------------------------------
# Instance A: worker 7, libfaketime, wal_level replica (case 7 takes a base
# backup of it). Started by the first case that needs it and shared by the
# cases of every file, which run in the order of their numbers: each case
# puts back the settings it changes.
A=
start_a() {
    [ -n "$A" ] && return 0
    A=$(pg_tmpdir)
    http_init "$A" "wal_level = replica" "max_wal_senders = 4" "hot_standby = on" \
        || { bail "instance A initialised"; A=; return 1; }
    http_start "$A" || { bail "instance A started with the HTTP endpoint" "$(tail -5 "$A/server.log")"; A=; return 1; }
    pg_val "$A" "CREATE EXTENSION snowflake" >/dev/null
}
