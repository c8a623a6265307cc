#!/bin/bash
# Tests of the etcd gateway client (src/etcd/client.hpp), and of the lease
# driver (test/coord/lease_loop_test.cpp: LeaseLoop and LeaseLoopEtcd), against a real etcd:
# starts Debian's etcd on free loopback ports in a temporary data directory,
# waits until it is healthy, runs build/etcd_client_tests against it, and
# stops it (by its pid) and removes the directory, pass or fail.
#
#   test/etcd_client.sh [gtest options, e.g. --gtest_filter=Etcd.*]
#   ETCD_CLIENT_TESTS=path/to/other/build test/etcd_client.sh   (e.g. a sanitizer build)
#
# Needs the packages etcd-server, libcurl4-openssl-dev, libmicrohttpd-dev,
# curl (scripts/deps.sh); does not need PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

ETCD=${ETCD:-/usr/bin/etcd}
if [ ! -x "$ETCD" ]; then
    echo "etcd_client: $ETCD not found; install etcd-server (make deps)" >&2
    exit 1
fi
tests=${ETCD_CLIENT_TESTS:-}
if [ -z "$tests" ]; then
    make -s build/etcd_client_tests
    tests=build/etcd_client_tests
fi

dir=$(mktemp -d /tmp/snowflake-etcd.XXXXXX)
etcd_pid=
cleanup() {
    if [ -n "$etcd_pid" ] && kill -0 "$etcd_pid" 2>/dev/null; then
        kill -CONT "$etcd_pid" 2>/dev/null || true  # in case a test left it stopped
        kill -TERM "$etcd_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$etcd_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$etcd_pid" 2>/dev/null || true
        wait "$etcd_pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

. test/lib/ports.sh

started=no
for attempt in 1 2 3 4 5; do
    client_port=$(free_tcp_port)
    peer_port=$(free_tcp_port)
    [ "$client_port" != "$peer_port" ] || continue
    url="http://127.0.0.1:$client_port"
    rm -rf "$dir/data"
    "$ETCD" --name snowflake-test --data-dir "$dir/data" \
        --listen-client-urls "$url" --advertise-client-urls "$url" \
        --listen-peer-urls "http://127.0.0.1:$peer_port" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
        --initial-cluster "snowflake-test=http://127.0.0.1:$peer_port" \
        --logger zap --log-outputs stderr >"$dir/etcd.log" 2>&1 &
    etcd_pid=$!
    for _ in $(seq 100); do
        if ! kill -0 "$etcd_pid" 2>/dev/null; then
            break  # exited: probably lost a port race
        fi
        if curl -fsS --max-time 1 --noproxy '*' "$url/health" 2>/dev/null | grep -q '"health":"true"'; then
            started=yes
            break
        fi
        sleep 0.1
    done
    [ $started = yes ] && break
    echo "etcd_client: etcd did not start on $url (attempt $attempt):" >&2
    tail -5 "$dir/etcd.log" >&2 || true
    kill -KILL "$etcd_pid" 2>/dev/null || true
    wait "$etcd_pid" 2>/dev/null || true
    etcd_pid=
done
if [ $started != yes ]; then
    echo "etcd_client: could not start etcd" >&2
    exit 1
fi
echo "etcd_client: $("$ETCD" --version | head -1) at $url (pid $etcd_pid)"

# Every test defined must run and pass: compare the count run with the list
# (the lease driver's tests are there for the coordinators these name).
export SNOWFLAKE_TEST_ETCD=$url SNOWFLAKE_TEST_ETCD_PID=$etcd_pid
unset SNOWFLAKE_TEST_ZK
expected=$("$tests" --gtest_list_tests "$@" | grep -c '^  ' || true)
if [ "$expected" -eq 0 ]; then
    echo "etcd_client: no test selected" >&2
    exit 1
fi
set +e
"$tests" --gtest_brief=1 "$@" | tee "$dir/gtest.out"
rc=${PIPESTATUS[0]}
set -e
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\.$/\1/p' "$dir/gtest.out")
if [ "$rc" -eq 0 ] && [ "${passed:-0}" -ne "$expected" ]; then
    echo "etcd_client: $expected tests defined but ${passed:-0} passed" >&2
    rc=1
fi
if [ "$rc" -ne 0 ]; then
    echo "etcd_client: FAILED; etcd's log:" >&2
    tail -20 "$dir/etcd.log" >&2 2>/dev/null || true
fi
exit "$rc"
