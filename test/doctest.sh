#!/bin/bash
# The documentation's examples, run: every fenced block of README.md and
# docs/*.md marked <!-- doctest: sql|sh|conf -->, against a throwaway server
# configured with the documents' own conf blocks (the HTTP endpoint on a free
# loopback port instead of 8080), the built snowflake-inspect and curl; plus
# the checks that need no server: every figure quoted from bench/results/ is
# in the file it cites, every test a claim names exists, every relative link
# leads to a file and heading that exist, no block that shows output is left
# unmarked, every skipped block gives its reason. The format
# of the markers, and what is compared how: test/doctest.py.
#
# Then a self-test: documents with a wrong output (SQL and shell), a figure
# missing from its results file, a test that does not exist, an unmarked
# example and a link to a file or heading that does not exist, run the same
# way on the same server, must each fail; so a changed example cannot pass
# unnoticed.
#
# One "ok N - ..." / "not ok N - ..." line per check; exits non-zero if any
# check fails.
#
# Usage: test/doctest.sh [FILE.md...]   (default: README.md docs/*.md)
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/pg.sh

PY=/usr/bin/python3
if [ ! -x build/snowflake-inspect ]; then
    echo "doctest: build/snowflake-inspect is not built: run make" >&2
    exit 1
fi
FILES=("$@")
[ ${#FILES[@]} -gt 0 ] || FILES=(README.md docs/*.md)

DIR=$(pg_tmpdir)
SELF=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-doctest-self.XXXXXX")
cleanup() { pg_cleanup_all; rm -rf "$SELF"; }
trap cleanup EXIT

# The server: the conf blocks of README.md (always: the node the examples
# assume) and of the documents, on a free port for HTTP. Three
# attempts, in case another process takes the port first.
listening() { grep -q "snowflake HTTP endpoint listening on 127.0.0.1:$PORT" "$DIR/server.log" 2>/dev/null; }
started=0
pg_init "$DIR" "timezone = 'UTC'" "log_min_messages = info" "include_if_exists = 'doctest.conf'" || exit 1
for attempt in 1 2 3; do
    PORT=$(free_tcp_port)
    $PY test/doctest.py conf "$PORT" README.md "${FILES[@]}" | as_pg tee "$DIR/data/doctest.conf" >/dev/null
    pg_start "$DIR" || { echo "# server did not start:"; tail -5 "$DIR/server.log" | sed 's/^/#   /'; exit 1; }
    if ! grep -q "^snowflake.http_listen" "$DIR/data/doctest.conf"; then started=1; break; fi
    for _ in $(seq 1 200); do listening && break; sleep 0.05; done
    if listening; then started=1; break; fi
    pg_stop "$DIR"
done
[ $started = 1 ] || { echo "not ok - the test server's HTTP endpoint listens"; exit 1; }

export DOCTEST_PGHOST=$DIR DOCTEST_PGPORT=$PG_PORT DOCTEST_HTTP_PORT=$PORT \
       DOCTEST_PSQL=$PGBIN/psql DOCTEST_AS_PG=$([ "$(id -u)" = 0 ] && echo 1 || echo 0)
# As the ids are made: the server must issue them before the examples run.
for _ in $(seq 1 100); do
    [ "$(pg_val "$DIR" "SELECT snowflake_ready()" 2>/dev/null)" = t ] 2>/dev/null && break
    sleep 0.1
done

failed=0
echo "# the documents: ${FILES[*]}"
$PY test/doctest.py run "${FILES[@]}" || failed=1

# --- self-test: each of these documents must fail -------------------------
echo "# self-test: documents that must fail"
fence='```'
mkdir -p "$SELF/bench/results"
printf 'M ids/s: 4.088\ncommit abc1234\n' >"$SELF/bench/results/r.md"
selfcase() {   # NAME CONTENT: the document must fail, with a "not ok" naming its line
    local name=$1 out rc=0
    printf '%s\n' "$2" >"$SELF/$name.md"
    out=$($PY test/doctest.py run "$SELF/$name.md" 2>&1) || rc=$?
    if [ $rc -ne 0 ] && grep -q "^not ok" <<<"$out"; then
        echo "ok - self-test: $name fails"
    else
        echo "not ok - self-test: $name fails"; sed 's/^/#   /' <<<"$out"; failed=1
    fi
}
selfpass() {   # NAME CONTENT: the document must pass (the control case)
    local name=$1 out rc=0
    printf '%s\n' "$2" >"$SELF/$name.md"
    out=$($PY test/doctest.py run "$SELF/$name.md" 2>&1) || rc=$?
    if [ $rc -eq 0 ]; then echo "ok - self-test: $name passes"; else
        echo "not ok - self-test: $name passes"; sed 's/^/#   /' <<<"$out"; failed=1; fi
}
selfpass control "## A heading

The same [heading](#a-heading), [its file](control.md#a-heading).

<!-- doctest: sql -->
${fence}sql
SELECT snowflake_worker_id(252752938651381760);   -- → 7
SELECT * FROM snowflake_decode(252752938651381760);
--              ts             | worker_id | sequence
-- ----------------------------+-----------+----------
--  2026-11-29 11:09:56.497+00 |         7 |        0
SELECT snowflake_nextval();   -- e.g. 252752938651381760
$fence

<!-- doctest: sh -->
${fence}sh
\$ snowflake-inspect 252752938651381760
252752938651381760 time=2026-11-29T11:09:56.497Z worker=7 sequence=0
$fence"
selfcase sql-output-changed "<!-- doctest: sql -->
${fence}sql
SELECT * FROM snowflake_decode(252752938651381760);
--              ts             | worker_id | sequence
-- ----------------------------+-----------+----------
--  2026-11-29 11:09:56.597+00 |         7 |        0
$fence"
selfcase sql-inline-changed "<!-- doctest: sql -->
${fence}sql
SELECT snowflake_worker_id(252752938651381760);   -- → 8
$fence"
selfcase sql-varying-shape "<!-- doctest: sql -->
${fence}sql
SELECT uuidv7();   -- e.g. 252752938651381760
$fence"
selfcase sh-output-changed "<!-- doctest: sh -->
${fence}sh
\$ snowflake-inspect 252752938651381760
252752938651381760 time=2026-11-29T11:09:56.497Z worker=8 sequence=0
$fence"
selfcase sh-command-fails "<!-- doctest: sh -->
${fence}sh
\$ snowflake-inspect not-an-id
$fence"
selfcase figure-not-in-results "<!-- figures: $SELF/bench/results/r.md -->
At commit abc1234, 4.089 M ids/s ([r](bench/results/r.md))."
selfcase figure-unmarked "At 4.088 M ids/s ([r](bench/results/r.md))."
selfcase test-missing "Ids wait (Test: \`test/fault/run.sh\` \`case_999\`)."
selfcase example-unmarked "${fence}sh
\$ snowflake-inspect 252752938651381760
252752938651381760 time=2026-11-29T11:09:56.497Z worker=7 sequence=0
$fence"
selfcase link-file-missing "See [the guide](no-such-file.md)."
selfcase link-anchor-missing "## A heading

See [below](#no-such-heading)."
selfcase skip-without-reason "<!-- doctest: skip -->
${fence}sh
\$ etcdctl get /snowflake/workers/7
$fence"

[ $failed = 0 ] && echo "# doc examples: all passed" || echo "# doc examples: FAILED"
exit $failed
