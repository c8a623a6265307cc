#!/bin/bash
# Optional client check (test/clients.sh, make test-clients; it needs Debian's
# ruby-activerecord and ruby-pg): the ActiveRecord model of
# docs/application-code.md (test/clients/rails/check.rb) on a throwaway
# instance with the installed extension.
#
# Usage: test/clients/rails.sh   (SNOWFLAKE_CLIENT_FLOAT=1: ids through a
#        Float, which must fail)
set -euo pipefail
cd "$(dirname "$0")/../.."

. test/lib/pg.sh

if ! ruby -e 'require "active_record"; require "pg"' 2>/dev/null; then
    echo "rails: needs ruby-activerecord and ruby-pg (scripts/deps.sh clients)" >&2
    exit 1
fi

trap pg_cleanup_all EXIT
DIR=$(pg_tmpdir)
pg_snowflake rails "$DIR"

ruby test/clients/rails/check.rb "$DIR" "$PG_PORT"
