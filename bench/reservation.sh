#!/bin/bash
# What the high-water mark's reservation costs, on a throwaway instance with
# fsync = on (the tests' instances run with fsync = off):
#  - the latency of the first id after an idle period, next to the following
#    call (the mark worker renews the reservation while the server is idle, so
#    neither should wait for a write; backends never write the mark);
#  - under steady load (pgbench, 2 clients, 10 s): reservations written by the
#    background worker (about one a second) and reservation waits on the id
#    path.
# Usage: bench/reservation.sh   (after make install)
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/pg.sh
trap pg_cleanup_all EXIT

ROUNDS=${ROUNDS:-8}
d=$(pg_tmpdir)
pg_init "$d" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" "fsync = on"
pg_start "$d" || { cat "$d/server.log" >&2; exit 1; }
pg_psql "$d" -c "CREATE EXTENSION snowflake"

{
    echo '\timing on'
    for _ in $(seq 1 "$ROUNDS"); do
        echo 'SELECT pg_sleep(1.6);'   # longer than a 1 s window: renewed while idle
        echo 'SELECT snowflake_nextval();'
        echo 'SELECT snowflake_nextval();'
    done
} >"$d/idle.sql"
chmod 644 "$d/idle.sql"
pg_val "$d" "SELECT snowflake_stats_reset()" >/dev/null
pg_psql "$d" -f "$d/idle.sql" | awk '/^Time:/ { n++; if (n % 3 == 2) first = first " " $2; else if (n % 3 == 0) second = second " " $2 }
    END { print "first id after 1.6 s idle, ms:" first; print "the call after it, ms:       " second }'
echo "reservation waits in those rounds: $(pg_val "$d" "SELECT reservation_waits FROM snowflake_stats")"

echo "SELECT count(x) FROM (SELECT snowflake_nextval() x, generate_series(1, 100000)) s;" >"$d/load.sql"
chmod 644 "$d/load.sql"
pg_val "$d" "SELECT snowflake_stats_reset()" >/dev/null
as_pg "$PGBIN/pgbench" -n -h "$d" -p "$PG_PORT" -U postgres -c 2 -j 2 -T 10 -f "$d/load.sql" postgres >/dev/null
pg_val "$d" "SELECT format('steady load, 10 s: %s ids, %s reservations written, %s reservation waits on the id path',
                           ids_issued, reservations, reservation_waits) FROM snowflake_stats"
