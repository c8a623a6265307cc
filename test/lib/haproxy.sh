# shellcheck shell=bash
# HAProxy with the configuration the repository ships
# (docs/haproxy/haproxy.cfg, as it is: its addresses come from the
# environment) in front of three nodes' HTTP endpoints on loopback. Sourced
# by test/haproxy.sh and bench/buffer.sh, after test/lib/pg.sh (free_tcp_port).

# haproxy_start CFG DIR PORT1 PORT2 PORT3: HAProxy with CFG on a free loopback
# port (three attempts with other ports), in the foreground of a background
# job, before the nodes' endpoints on 127.0.0.1:PORTn; its stats socket is
# DIR/haproxy.sock, its log DIR/haproxy.log. Sets LB_PORT, LB_SOCK and
# HAPROXY_PID (the caller stops it, by that pid). Returns non-zero if it does
# not answer /livez.
haproxy_start() {
    local cfg=$1 dir=$2 p1=$3 p2=$4 p3=$5
    LB_SOCK=$dir/haproxy.sock
    for _ in 1 2 3; do
        LB_PORT=$(free_tcp_port)
        SNOWFLAKE_LB_BIND=127.0.0.1:$LB_PORT SNOWFLAKE_LB_STATS=$LB_SOCK \
            SNOWFLAKE_NODE1=127.0.0.1:$p1 SNOWFLAKE_NODE2=127.0.0.1:$p2 SNOWFLAKE_NODE3=127.0.0.1:$p3 \
            haproxy -db -f "$cfg" >"$dir/haproxy.log" 2>&1 &
        HAPROXY_PID=$!
        for _ in $(seq 100); do
            if [ -S "$LB_SOCK" ] && curl -s -o /dev/null -m 1 "http://127.0.0.1:$LB_PORT/livez"; then return 0; fi
            kill -0 "$HAPROXY_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill "$HAPROXY_PID" 2>/dev/null; wait "$HAPROXY_PID" 2>/dev/null
        HAPROXY_PID=
    done
    return 1
}
