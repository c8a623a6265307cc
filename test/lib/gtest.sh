# Runs a GoogleTest binary of the client tests (test/etcd_client.sh,
# test/zk_client.sh) so that a test that silently does not run counts as a
# failure: every test the filter selects must run and pass.
#
#   gtest_run NAME DIR BINARY [gtest options...]
#
# NAME prefixes the runner's messages; DIR (the runner's temporary directory)
# keeps the output. Returns the binary's status, or 1 when fewer tests passed
# than were selected, or none was. The runner prints its servers' logs when
# it fails.
gtest_run() {
    local name=$1 dir=$2 bin=$3 expected passed rc
    shift 3
    expected=$("$bin" --gtest_list_tests "$@" | grep -c '^  ' || true)
    if [ "$expected" -eq 0 ]; then
        echo "$name: no test selected" >&2
        return 1
    fi
    set +e
    "$bin" --gtest_brief=1 "$@" | tee "$dir/gtest.out"
    rc=${PIPESTATUS[0]}
    set -e
    passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\.$/\1/p' "$dir/gtest.out")
    if [ "$rc" -eq 0 ] && [ "${passed:-0}" -ne "$expected" ]; then
        echo "$name: $expected tests defined but ${passed:-0} passed" >&2
        rc=1
    fi
    return "$rc"
}
