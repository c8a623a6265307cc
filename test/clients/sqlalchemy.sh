#!/bin/bash
# Optional client check (test/clients.sh, make test-clients; it needs Debian's
# python3-sqlalchemy and python3-psycopg2): the SQLAlchemy mapping of
# docs/application-code.md on a throwaway instance with the installed
# extension.
#
# Usage: test/clients/sqlalchemy.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

. test/lib/pg.sh

if ! /usr/bin/python3 -c "import sqlalchemy, psycopg2" 2>/dev/null; then
    echo "sqlalchemy: needs python3-sqlalchemy and python3-psycopg2 (apt-get install python3-sqlalchemy python3-psycopg2)" >&2
    exit 1
fi

trap pg_cleanup_all EXIT
DIR=$(pg_tmpdir)
pg_snowflake sqlalchemy "$DIR"

PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 test/clients/sqlalchemy_check.py "$DIR" "$PG_PORT"
