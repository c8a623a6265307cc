# shellcheck shell=bash
# Assertions of every shell suite: TAP-style "ok - DESC" / "not ok - DESC"
# lines, the closing summary "N passed, N failed", and run_cases, which runs
# the case_N functions a suite defines. Source this file; it sources
# test/lib/time.sh (run_cases times the cases).

. "$(dirname "${BASH_SOURCE[0]}")/time.sh"

T_PASSED=0
T_FAILED=0
T_FAILED_NAMES=()

ok() {
    T_PASSED=$((T_PASSED + 1))
    echo "ok - $*"
}

# not_ok DESC [DETAIL...]: a failed check; each DETAIL is printed as "#   DETAIL".
not_ok() {
    T_FAILED=$((T_FAILED + 1))
    T_FAILED_NAMES+=("$1")
    echo "not ok - $1"
    shift
    local line
    for line in "$@"; do echo "#   $line"; done
}

# check DESC COMMAND...: ok if the command succeeds.
check() {
    local desc=$1; shift
    if "$@"; then ok "$desc"; else not_ok "$desc" "failed: $*"; fi
}

# is DESC GOT WANT
is() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  '$2'" "want: '$3'"; fi
}

# cmp_num DESC GOT OP WANT (OP: -lt -le -gt -ge -eq -ne; integers)
cmp_num() {
    if [[ $2 =~ ^-?[0-9]+$ ]] && [ "$2" "$3" "$4" ]; then
        ok "$1"
    else
        not_ok "$1" "got:  '$2'" "want: $3 $4"
    fi
}

# like DESC TEXT REGEX (extended regex)
like() {
    if [[ $2 =~ $3 ]]; then ok "$1"; else not_ok "$1" "got:  '$2'" "want: /$3/"; fi
}

# report OK DESC [DETAIL]: ok if OK is 1, else not ok (with DETAIL, if any).
report() {
    if [ "$1" = 1 ]; then ok "$2"; else not_ok "$2" ${3:+"$3"}; fi
}

# sql_is DIR DESC WANT SQL: the single value SQL returns on the instance of
# DIR (test/lib/pg.sh) is WANT.
sql_is() {
    local got
    if ! got=$(pg_val "$1" "$4" 2>&1); then
        not_ok "$2" "query failed: $got"
    else
        is "$2" "$got" "$3"
    fi
}

# bail DESC DETAIL...: reports a failed prerequisite and returns 1, for
# `... || { bail ...; return; }` in a case.
bail() { not_ok "$@"; return 1; }

# tap_abort DESC: a prerequisite is missing: reports it as the one failed
# check of the suite and exits.
tap_abort() {
    echo "not ok - $1"
    echo "0 passed, 1 failed"
    exit 1
}

# require_tools TOOL...: tap_abort unless every TOOL is on the PATH.
require_tools() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || tap_abort "$tool is installed (make deps)"
    done
}

# tap_summary: prints the names of the failed checks and "N passed, N
# failed"; returns non-zero on any failure. A suite ends with it.
tap_summary() {
    if [ "$T_FAILED" -gt 0 ]; then
        printf '# failed: %s\n' "${T_FAILED_NAMES[@]}"
    fi
    echo "$T_PASSED passed, $T_FAILED failed"
    [ "$T_FAILED" -eq 0 ]
}

# run_cases SUITE [case number ...]: runs the case_N functions the script
# defined, in order (all of them, or those named), timing each, stops the
# instances (test/lib/pg.sh, if sourced), prints the summary and returns
# non-zero on any failure. Call it last: `run_cases fault "$@"; exit`.
run_cases() {
    # Names of its own (the cases run in this function's scope).
    local rc_suite=$1 rc_c rc_t rc_start rc_cases rc_want
    shift
    mapfile -t rc_cases < <(declare -F | sed -n 's/^declare -f case_\([0-9][0-9]*\)$/\1/p' | sort -n)
    rc_want=" ${*:-${rc_cases[*]}} "
    for rc_c in $rc_want; do
        declare -F "case_$rc_c" >/dev/null || { echo "unknown case: $rc_c (defined: ${rc_cases[*]})" >&2; return 2; }
    done
    rc_start=$(real_now)
    for rc_c in "${rc_cases[@]}"; do
        if [[ $rc_want == *" $rc_c "* ]]; then
            rc_t=$(real_now)
            "case_$rc_c"
            echo "# case $rc_c took $(elapsed_since "$rc_t") s"
        fi
    done
    if declare -F pg_cleanup_all >/dev/null; then pg_cleanup_all; fi
    echo "# $rc_suite suite took $(elapsed_since "$rc_start") s"
    tap_summary
}
