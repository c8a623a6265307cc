#!/bin/bash
# Optional client check (test/clients.sh with NODE_PG_DIR; it needs node and npm
# and downloads the pg package): what node-postgres does with Snowflake ids,
# which are above 2^53, on a throwaway instance with the installed extension.
# Backs the numbers in docs/application-code.md.
#
# Usage: test/clients/node_bigint.sh   (NODE_PG_DIR=dir with node_modules/pg
#        to reuse an existing install instead of npm install into a temp dir)
set -euo pipefail
cd "$(dirname "$0")/../.."

. test/lib/pg.sh

for tool in node npm; do
    command -v "$tool" >/dev/null || { echo "node_bigint: $tool is not installed" >&2; exit 1; }
done

DIR=""
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

DIR=$(pg_tmpdir)
pg_snowflake node_bigint "$DIR"

NODE_PATH=$modules node test/clients/node_bigint.js "$DIR" "$PG_PORT"
