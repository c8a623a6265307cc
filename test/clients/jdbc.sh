#!/bin/bash
# Optional client check (test/clients.sh, make test-clients; it needs Debian's
# libpostgresql-jdbc-java and openjdk-17-jdk-headless): JDBC as
# docs/application-code.md describes it (test/clients/jdbc/JdbcCheck.java) on
# a throwaway instance with the installed extension. The driver speaks TCP
# only, so this instance also listens on a free loopback port.
#
# Usage: test/clients/jdbc.sh   (SNOWFLAKE_CLIENT_FLOAT=1: ids through a
#        double, which must fail)
set -euo pipefail
cd "$(dirname "$0")/../.."

. test/lib/pg.sh

JAR=/usr/share/java/postgresql.jar
if ! command -v javac >/dev/null || [ ! -r "$JAR" ]; then
    echo "jdbc: needs openjdk-17-jdk-headless and libpostgresql-jdbc-java (scripts/deps.sh clients)" >&2
    exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/snowflake-jdbc.XXXXXX")
cleanup() {
    pg_cleanup_all
    rm -rf "$WORK"
}
trap cleanup EXIT

javac -d "$WORK" -cp "$JAR" test/clients/jdbc/JdbcCheck.java

# pg_snowflake's instance, on a loopback port (another server may take a
# free port first: three tries).
DIR=""
for try in 1 2 3; do
    PG_PORT=$(free_tcp_port)
    DIR=$(pg_tmpdir)
    pg_init "$DIR" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" \
        "listen_addresses = '127.0.0.1'"
    pg_start "$DIR" && break
    [ "$try" = 3 ] && { echo "jdbc: the server did not start" >&2; cat "$DIR/server.log" >&2; exit 1; }
done
pg_psql "$DIR" -c "CREATE EXTENSION snowflake"

java -cp "$WORK:$JAR" JdbcCheck "$PG_PORT"
