#!/bin/bash
# Tests of the C library libsnowflake_ids (sdk/c, test/sdk): a static worker
# id with its mark file, and leased worker ids against a real etcd and a real
# ZooKeeper. Starts Debian's etcd (test/lib/etcd.sh) and a standalone
# ZooKeeper (test/lib/zookeeper.sh) on free loopback ports in a temporary
# directory, runs build/sdk_tests against both (with test/sdk/resolver_shim.c
# preloaded), and stops them (by their
# pids) and removes the directory, pass or fail.
#
#   test/sdk_c.sh [gtest options, e.g. --gtest_filter=SdkStatic.*]
#   SDK_TESTS=path/to/other/build test/sdk_c.sh
#
# Needs the packages etcd-server, zookeeper, libzookeeper-st-dev,
# libcurl4-openssl-dev (scripts/deps.sh); does not need PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

ZK_TICK_MS=${ZK_TICK_MS:-500}
. test/lib/coordinators.sh
tests=${SDK_TESTS:-}
if [ -z "$tests" ]; then
    make -s build/sdk_tests build/sdk_c_smoke
    tests=build/sdk_tests
fi
coordinators_start sdk_c
dir=$COORD_DIR

# The library from C, linked as an application links it (test/sdk/smoke.c).
smoke=${SDK_C_SMOKE:-build/sdk_c_smoke}
[ -x "$smoke" ] || make -s build/sdk_c_smoke
mkdir -p "$dir/smoke"
if ! "$smoke" "$dir/smoke"; then
    echo "sdk_c: the C smoke test failed" >&2
    exit 1
fi

# The resolver shim the fork gate's test forks against
# (test/sdk/resolver_shim.c, test/sdk/fork_gate_test.cpp), preloaded into the
# tests (it only holds a lock around each getaddrinfo() until the test asks
# it to wait inside).
mkdir -p "$dir/resolver"
if ! cc -shared -fPIC -O2 -Wall -o "$dir/resolver_shim.so" test/sdk/resolver_shim.c -ldl 2>"$dir/resolver_shim.log"; then
    echo "sdk_c: could not compile test/sdk/resolver_shim.c:" >&2
    cat "$dir/resolver_shim.log" >&2
    exit 1
fi
export SF_RESOLVER_SHIM_DIR=$dir/resolver
export LD_PRELOAD=$dir/resolver_shim.so${LD_PRELOAD:+:$LD_PRELOAD}

# Every test defined must run and pass (the leased tests run once per
# coordinator named in SNOWFLAKE_TEST_ETCD and SNOWFLAKE_TEST_ZK).
. test/lib/gtest.sh
rc=0
gtest_run sdk_c "$dir" "$tests" "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "sdk_c: FAILED" >&2
    coordinators_logs
fi
exit "$rc"
