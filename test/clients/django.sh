#!/bin/bash
# Optional client check (test/clients.sh, make test-clients; it needs Debian's
# python3-django and python3-psycopg2): the Django 3.2 primary-key field of
# docs/application-code.md (test/clients/django/app/models.py) on a throwaway
# instance with the installed extension.
#
# Usage: test/clients/django.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

. test/lib/pg.sh

if ! /usr/bin/python3 -c "import django, psycopg2" 2>/dev/null; then
    echo "django: needs python3-django and python3-psycopg2 (apt-get install python3-django python3-psycopg2)" >&2
    exit 1
fi

trap pg_cleanup_all EXIT
DIR=$(pg_tmpdir)
pg_snowflake django "$DIR"

PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 test/clients/django/check.py "$DIR" "$PG_PORT"
