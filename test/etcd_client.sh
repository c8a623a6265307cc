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

. test/lib/etcd.sh
if [ ! -x "$ETCD_BIN" ]; then
    echo "etcd_client: $ETCD_BIN not found; install etcd-server (make deps)" >&2
    exit 1
fi
tests=${ETCD_CLIENT_TESTS:-}
if [ -z "$tests" ]; then
    make -s build/etcd_client_tests
    tests=build/etcd_client_tests
fi

dir=$(mktemp -d /tmp/snowflake-etcd.XXXXXX)
cleanup() {
    etcd_stop
    rm -rf "$dir"
}
trap cleanup EXIT

if ! etcd_start 1 "$dir"; then
    echo "etcd_client: could not start etcd" >&2
    exit 1
fi
url=${ETCD_URLS[0]}
etcd_pid=${ETCD_PIDS[0]}
echo "etcd_client: $("$ETCD_BIN" --version | head -1) at $url (pid $etcd_pid)"

# Every test defined must run and pass: compare the count run with the list
# (the lease driver's tests are there for the coordinators these name).
export SNOWFLAKE_TEST_ETCD=$url SNOWFLAKE_TEST_ETCD_PID=$etcd_pid
unset SNOWFLAKE_TEST_ZK
. test/lib/gtest.sh
rc=0
gtest_run etcd_client "$dir" "$tests" "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "etcd_client: FAILED; etcd's log:" >&2
    tail -20 "$dir/m0.log" >&2 2>/dev/null || true
fi
exit "$rc"
