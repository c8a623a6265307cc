#!/bin/bash
# Optional client check (test/clients.sh, make test-clients; it needs Debian's
# golang-go and golang-github-jackc-pgx-v4-dev): Go's pgx v4 as
# docs/application-code.md describes it (test/clients/pgx/main.go) on a
# throwaway instance with the installed extension. Built offline in GOPATH
# mode against /usr/share/gocode: no module proxy, no network.
#
# Usage: test/clients/pgx.sh   (SNOWFLAKE_CLIENT_FLOAT=1: ids through a
#        float64, which must fail)
set -euo pipefail
cd "$(dirname "$0")/../.."

. test/lib/pg.sh

if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/jackc/pgx/v4 ]; then
    echo "pgx: needs golang-go and golang-github-jackc-pgx-v4-dev (scripts/deps.sh clients)" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-pgx.XXXXXX")
cleanup() {
    pg_cleanup_all
    rm -rf "$WORK"
}
trap cleanup EXIT

# GOPATH mode over Debian's Go sources; the build cache is kept in build/
# (GOCACHE overrides) so that a second run does not compile pgx again.
mkdir -p "$WORK/src/pgxcheck" build
cp test/clients/pgx/main.go "$WORK/src/pgxcheck/"
(cd "$WORK/src/pgxcheck" && env GO111MODULE=off GOFLAGS= GOPROXY=off GOPATH="$WORK:/usr/share/gocode" \
    GOCACHE="${GOCACHE:-$PWD/build/go-cache}" go build -o "$WORK/pgxcheck" .) \
    || { echo "pgx: the check did not build" >&2; exit 1; }

DIR=$(pg_tmpdir)
pg_snowflake pgx "$DIR"

"$WORK/pgxcheck" "$DIR" "$PG_PORT"
