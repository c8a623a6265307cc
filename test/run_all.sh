#!/bin/bash
# Runs every test suite of snowflake, one after another, and ends with a
# summary line "N passed, N failed" (N counts suites). Exits non-zero if any
# suite failed. Each suite is a command that exits 0 on success; suites that
# need a server start their own throwaway instances.
#
# Run through `make test`, which builds and installs first and passes the
# build's time in SNOWFLAKE_BUILD_SECONDS (printed with the suites' at the
# end). The version matrix (scripts/matrix.sh) runs this same file inside its
# chroots.
#
# Choosing suites, by the names below (comma-separated):
#   RUN_ONLY="pg_regress,pgTAP" test/run_all.sh   only these
#   RUN_SKIP="fault injection" test/run_all.sh    all but these
set -uo pipefail
cd "$(dirname "$0")/.."

SUITES=(
    "core unit tests|build/unit_tests --gtest_brief=1"
    "include graph|scripts/include-graph.py --quiet"
    "clang-format|scripts/clang-format.sh"
    "core unit tests (ASan+UBSan)|env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build/unit_tests_sanitized --gtest_brief=1"
    "pg_regress|test/regress.sh"
    "pgTAP|test/pgtap.sh"
    "uuidv7 across backends|test/uuid_backends.sh"
    "snowflake-inspect|test/inspect.sh"
    "concurrency|test/concurrency.sh"
    "fault injection|test/fault/run.sh"
    "upgrade|test/upgrade.sh"
    "converted tables|test/convert.sh"
    "installcheck|test/installcheck.sh"
    "etcd client|test/etcd_client.sh"
    "ZooKeeper client|test/zk_client.sh"
    "SDK (C library)|test/sdk_c.sh"
    "SDK (Node.js)|test/sdk_node.sh"
    "SDK (Python)|test/sdk_python.sh"
    "SDK and nodes in one fleet|test/sdk_fleet.sh"
    "worker id leases|test/lease.sh"
    "worker id leases (ZooKeeper)|env COORDINATOR=zookeeper test/lease.sh"
    "cluster (static and leased ids)|test/cluster/run.sh all"
    "HTTP endpoint|test/http.sh"
    "HAProxy in front of the HTTP endpoint|test/haproxy.sh"
    "standby|test/standby.sh"
    "Patroni switchovers and failovers|test/patroni.sh"
    "monitoring|test/monitoring.sh"
    "nemesis (2 min)|env DURATION=120 test/nemesis/run.sh"
    "doc examples|test/doctest.sh"
)

# RUN_ONLY / RUN_SKIP: keep the chosen suites; a name that matches no suite
# is an error, so that a typo does not silently run nothing.
chosen=()
for entry in "${SUITES[@]}"; do
    name=${entry%%|*}
    if [ -n "${RUN_ONLY:-}" ] && [[ ",$RUN_ONLY," != *",$name,"* ]]; then continue; fi
    if [ -n "${RUN_SKIP:-}" ] && [[ ",$RUN_SKIP," == *",$name,"* ]]; then continue; fi
    chosen+=("$entry")
done
IFS=, read -r -a asked <<<"${RUN_ONLY:-}${RUN_ONLY:+,}${RUN_SKIP:-}"
for a in "${asked[@]}"; do
    known=0
    for entry in "${SUITES[@]}"; do [ "${entry%%|*}" = "$a" ] && known=1; done
    [ $known = 1 ] || { echo "run_all: no suite named '$a'" >&2; exit 2; }
done
SUITES=("${chosen[@]}")

passed=0
failed=0
failed_names=()
start_all=$(date +%s)
for entry in "${SUITES[@]}"; do
    name=${entry%%|*}
    cmd=${entry#*|}
    echo
    echo "=== suite: $name"
    start=$(date +%s)
    if bash -c "$cmd"; then
        passed=$((passed + 1))
        echo "=== suite: $name: ok ($(( $(date +%s) - start )) s)"
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        echo "=== suite: $name: FAILED ($(( $(date +%s) - start )) s)"
    fi
done

echo
if [ -n "${SNOWFLAKE_BUILD_SECONDS:-}" ]; then
    echo "snowflake build took ${SNOWFLAKE_BUILD_SECONDS} s, test suites $(( $(date +%s) - start_all )) s"
else
    echo "snowflake test suites took $(( $(date +%s) - start_all )) s"
fi
if [ $failed -gt 0 ]; then
    printf 'failed suite: %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
