#!/bin/bash
# Optional client check (test/clients.sh with NODE_PG_DIR; it needs node and npm
# and downloads the pg package): what node-postgres does with Snowflake ids, on
# two throwaway instances with the installed extension, both worker id 7:
#  - one of the default layout (twitter), whose ids are above 2^53: by default
#    they arrive as exact strings, Number()/parseInt/JSON.parse change them, a
#    BigInt type parser reads them exactly;
#  - one with snowflake.layout = 'js-safe', whose ids are below 2^53: with the
#    int8 parser set to Number, and inside JSON the server builds, they arrive
#    as numbers equal to the ids (single ids, a batch of 1,000, and the last id
#    of the layout, 2^53 - 1); the same code on the twitter instance's ids
#    must find them changed.
# Backs the numbers in docs/application-code.md (node_bigint.js prints them).
#
# Usage: test/clients/node_bigint.sh   (NODE_PG_DIR=dir with node_modules/pg
#        to reuse an existing install instead of npm install into a temp dir)
set -euo pipefail
cd "$(dirname "$0")/../.."

. test/lib/pg.sh

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "node_bigint: $tool is not installed" >&2; exit 1; }
done

WORK=""
cleanup() {
    pg_cleanup_all
    [ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT

if [ -n "${NODE_PG_DIR:-}" ]; then
    modules=$NODE_PG_DIR/node_modules
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-node.XXXXXX")
    (cd "$WORK" && npm init -y >/dev/null && npm install --no-audit --no-fund pg@8 >/dev/null)
    modules=$WORK/node_modules
fi
echo "# node $(node --version), pg $(node -p "require('$modules/pg/package.json').version")"

# The twitter instance: the default layout.
TWITTER=$(pg_tmpdir)
pg_snowflake node_bigint "$TWITTER"

# The js-safe instance: as pg_snowflake, with the layout set (a restart
# setting, so it is in postgresql.conf before the first start). Each instance
# listens on a socket in its own directory, so both can use PG_PORT.
JS_SAFE=$(pg_tmpdir)
pg_init "$JS_SAFE" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" \
    "snowflake.layout = 'js-safe'"
if ! pg_start "$JS_SAFE"; then
    echo "node_bigint: the js-safe server did not start" >&2
    cat "$JS_SAFE/server.log" >&2
    exit 1
fi
pg_psql "$JS_SAFE" -c "CREATE EXTENSION snowflake"

NODE_PATH=$modules node test/clients/node_bigint.js "$TWITTER" "$JS_SAFE" "$PG_PORT"
