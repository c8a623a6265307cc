# shellcheck shell=bash
# The libraries of the suites that start servers, in the order they need
# each other: assertions and time (tap.sh, time.sh), throwaway PostgreSQL
# instances (pg.sh, which insists on PG_CONFIG from the environment), clocks
# moved with libfaketime (faketime.sh), the mark file (mark.sh) and etcd
# clusters (etcd.sh). Source it from the top of the checkout:
#   set -uo pipefail
#   cd "$(dirname "$0")/.."
#   . test/lib/suite.sh

_suite_lib=$(dirname "${BASH_SOURCE[0]}")
. "$_suite_lib/tap.sh"
. "$_suite_lib/pg.sh"
. "$_suite_lib/faketime.sh"
. "$_suite_lib/mark.sh"
. "$_suite_lib/etcd.sh"
unset _suite_lib

# suite_workdir NAME: prints a new directory for a suite's files (mode 755,
# so that the postgres user can enter it).
suite_workdir() {
    local d
    d=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-$1.XXXXXX")
    chmod 755 "$d"
    echo "$d"
}

# suite_begin NAME: the start of a suite: SUITE_DIR, a new work directory
# (kept with KEEP_TMP=1); an EXIT trap (suite_end); INT and TERM end the
# suite with status 130; umask 022.
suite_begin() {
    SUITE_DIR=$(suite_workdir "$1")
    trap suite_end EXIT
    trap 'exit 130' INT TERM
    umask 022
}

# suite_end: runs the suite's own suite_cleanup first, if it defines one
# (background clients, gdb), then stops the instances and the etcd members
# the suite started and removes SUITE_DIR.
suite_end() {
    if declare -F suite_cleanup >/dev/null; then suite_cleanup; fi
    pg_cleanup_all
    etcd_stop
    if [ -n "${KEEP_TMP:-}" ]; then echo "# kept $SUITE_DIR"; else rm -rf "$SUITE_DIR"; fi
}
