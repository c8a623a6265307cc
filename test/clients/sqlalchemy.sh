#!/bin/bash
# Optional client check, not part of test/run_all.sh (it needs Debian's
# python3-sqlalchemy and python3-psycopg2): the SQLAlchemy mapping of
# docs/application-code.md on a throwaway instance with the installed
# extension.
#
# Usage: test/clients/sqlalchemy.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
. test/lib/pg.sh

if ! /usr/bin/python3 -c "import sqlalchemy, psycopg2" 2>/dev/null; then
    echo "sqlalchemy: needs python3-sqlalchemy and python3-psycopg2 (apt-get install python3-sqlalchemy python3-psycopg2)" >&2
    exit 1
fi

trap pg_cleanup_all EXIT
DIR=$(pg_tmpdir)
pg_init "$DIR" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7"
if ! pg_start "$DIR"; then
    echo "sqlalchemy: the server did not start" >&2
    cat "$DIR/server.log" >&2
    exit 1
fi
pg_psql "$DIR" -c "CREATE EXTENSION snowflake"

PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 test/clients/sqlalchemy_check.py "$DIR" "$PG_PORT"
