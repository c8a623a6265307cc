# Sourced by the HTTP benchmarks (after test/lib/pg.sh): a throwaway node
# with the HTTP endpoint on a free loopback port.

# http_node_start DIR NAME SETTING...: initialises DIR with the settings,
# listens on a free port (three tries, in case another process takes it
# first), and sets PORT; exits with the server log if it does not start.
http_node_start() {
    local dir=$1 name=$2 attempt i
    shift 2
    pg_init "$dir" "$@" "include_if_exists = 'http.conf'"
    PORT=
    for attempt in 1 2 3; do
        PORT=$(free_tcp_port)
        printf "snowflake.http_listen = '127.0.0.1:%s'\n" "$PORT" | as_pg tee "$dir/data/http.conf" >/dev/null
        pg_start "$dir" || { cat "$dir/server.log" >&2; exit 1; }
        for i in $(seq 1 100); do
            grep -q "snowflake HTTP endpoint listening on 127.0.0.1:$PORT" "$dir/server.log" && return 0
            sleep 0.05
        done
        pg_stop "$dir"
        PORT=
    done
    echo "$name: the HTTP endpoint did not start" >&2
    tail "$dir/server.log" >&2
    exit 1
}
