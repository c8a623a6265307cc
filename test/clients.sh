#!/bin/bash
# The client checks (issue 33): real drivers and ORMs insert rows with the
# column's DEFAULT snowflake_nextval(), read the ids back exactly and call the
# decoders, each on a throwaway instance with the installed extension. Opt-in,
# not a line of test/run_all.sh: make test-clients (which builds and installs
# first) or test/clients.sh with PG_CONFIG exported.
#
# Installs the packages of scripts/deps.sh's group clients if any is missing
# (root), then runs every check under test/clients/, and one of them again
# with its ids read through a double, which must fail (the checks can fail).
# Ends with "N passed, N failed" (N counts checks); exits non-zero if any failed.
#
# node_bigint.sh needs node-postgres, which Debian's node-pg cannot bring
# beside NodeSource's nodejs and npm would download: it runs only with
# NODE_PG_DIR=dir (holding node_modules/pg), else it is named as skipped.
#   RUN_ONLY="rails,pgx" test/clients.sh   only these checks
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# elapsed START_NS: seconds since START_NS (date +%s%N), with a tenth.
elapsed() {
    local d=$(( ($(date +%s%N) - $1) / 100000000 ))
    echo "$((d / 10)).$((d % 10))"
}

start=$(date +%s%N)
scripts/deps.sh clients || { echo "clients: the packages of scripts/deps.sh clients are missing"; exit 1; }
echo "packages (scripts/deps.sh clients): $(elapsed "$start") s"

CHECKS=(
    "rails|test/clients/rails.sh"
    "pgx|test/clients/pgx.sh"
    "jdbc|test/clients/jdbc.sh"
    "sqlalchemy|test/clients/sqlalchemy.sh"
    "django|test/clients/django.sh"
    "node_bigint|test/clients/node_bigint.sh"
)

# A name in RUN_ONLY that is no check's is an error (a typo would run nothing).
IFS=, read -r -a asked <<<"${RUN_ONLY:-}"
for a in "${asked[@]}"; do
    printf '%s\n' "${CHECKS[@]%%|*}" | grep -qxF -- "$a" || { echo "clients: no check named '$a'" >&2; exit 2; }
done

passed=0
failed=0
failed_names=()
result() {  # result NAME OK SECONDS
    if [ "$2" = 1 ]; then
        passed=$((passed + 1)); echo "=== $1: ok ($3 s)"
    else
        failed=$((failed + 1)); failed_names+=("$1"); echo "=== $1: FAILED ($3 s)"
    fi
}

run_start=$(date +%s%N)
for entry in "${CHECKS[@]}"; do
    name=${entry%%|*}
    cmd=${entry#*|}
    if [ -n "${RUN_ONLY:-}" ] && [[ ",$RUN_ONLY," != *",$name,"* ]]; then continue; fi
    if [ "$name" = node_bigint ] && [ -z "${NODE_PG_DIR:-}" ]; then
        echo "=== $name: skipped (needs NODE_PG_DIR, a directory with node_modules/pg)"
        continue
    fi
    echo
    echo "=== $name"
    t=$(date +%s%N)
    if $cmd; then result "$name" 1 "$(elapsed "$t")"; else result "$name" 0 "$(elapsed "$t")"; fi
done

# The checks can fail: pgx again, its ids passed through a float64. Its
# five-row INSERT must then be reported as not exact, and the check fail.
if [ -z "${RUN_ONLY:-}" ] || [[ ",$RUN_ONLY," == *",pgx,"* ]]; then
    echo
    echo "=== pgx with ids through float64 (must fail)"
    t=$(date +%s%N)
    out=$(SNOWFLAKE_CLIENT_FLOAT=1 test/clients/pgx.sh 2>&1)
    rc=$?
    echo "$out"
    if [ $rc != 0 ] && grep -q '^not ok .*five-row INSERT' <<<"$out"; then
        result "pgx through float64 fails" 1 "$(elapsed "$t")"
    else
        result "pgx through float64 fails" 0 "$(elapsed "$t")"
    fi
fi

echo
echo "client checks took $(elapsed "$run_start") s"
[ $failed -eq 0 ] || printf 'failed check: %s\n' "${failed_names[@]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
