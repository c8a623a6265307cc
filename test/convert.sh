#!/bin/bash
# Tables converted by snowflake_convert() (issue 33) outside the server that
# converted them: a dump restored elsewhere and logical replication. Three
# throwaway instances preloading snowflake: the publisher (worker id 1,
# wal_level = logical), the subscriber (worker id 2; its database has no
# snowflake extension: the subscriber side needs none) and the restore
# target (worker id 3).
#
#   1. pg_dump -Fc of a database whose bigserial, identity, partitioned and
#      widened serial tables (with an integer foreign key) were converted,
#      pg_restore into a new database on the restore target: every column of
#      the tree still defaults to snowflake_nextval(), the rows and the kept
#      sequence come back, and after snowflake_advance_floor(max id) (the
#      documented step after a restore) a new row gets an id of worker 3
#      above every restored one.
#   2. Logical replication of a bigserial table converted on the publisher:
#      rows from before and after the conversion, an update and a delete,
#      arrive on the subscriber with the publisher's ids.
#   3. A serial (int4) table widened on the publisher: the subscriber's
#      integer column cannot take the new ids (its apply worker reports an
#      error and nothing arrives) until it is widened there too; then the
#      row arrives. What docs/migration.md tells subscribers.
#   4. The extension in a schema whose name needs quoting ("Snow Flake"):
#      the default names the function there, quoted.
#   5. A partition created (by another session) after the conversion read
#      the catalog and before it got its lock: the call fails with 40001
#      and changes nothing; a second call converts every partition. The
#      other session commits once the conversion waits for its lock
#      (pg_stat_activity), not after a sleep.
#
# No timing is asserted: each wait is for a condition, with a generous limit.
# Prints "ok - ..." / "not ok - ..." lines; exits non-zero on any failure.
# The instances are removed on exit (KEEP_TMP=1 keeps them).
#
# Usage: test/convert.sh [case ...]
set -uo pipefail
cd "$(dirname "$0")/.."

. test/lib/suite.sh

suite_begin convert
PUB=$(pg_tmpdir)
SUB=$(pg_tmpdir)
DST=$(pg_tmpdir)
DUMP=$(pg_tmpdir)
suite_cleanup() {
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$PUB" "$SUB" "$DST" "$DUMP"
}

start() {
    local dir=$1 worker=$2; shift 2
    pg_init "$dir" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = $worker" \
        "autovacuum = off" "$@" || tap_abort "initdb of $dir"
    pg_start "$dir" || { cat "$dir/server.log" >&2; tap_abort "the server in $dir starts"; }
}
start "$PUB" 1 "wal_level = logical"
start "$SUB" 2 "wal_retrieve_retry_interval = '200ms'"
start "$DST" 3

# db DIR DB SQL...: psql on database DB of the instance in DIR.
db() { local dir=$1 d=$2; shift 2; pg_psql "$dir" -d "$d" "$@"; }
dbval() { pg_psql "$1" -d "$2" -A -t -c "$3"; }

# The default of every relation of a tree, "relation: default", one a line.
DEFAULTS_SQL="SELECT string_agg(format('%s.%s: %s', c.relname, a.attname, pg_get_expr(ad.adbin, ad.adrelid)), ' | ' ORDER BY c.relname, a.attname)
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND a.attname = 'id'"

case_1() {
    echo "# case 1: pg_dump and pg_restore of converted tables"
    pg_psql "$PUB" -c "CREATE DATABASE dumped" || { bail "database dumped"; return; }
    db "$PUB" dumped <<'SQL' >/dev/null || { bail "the tables are made and converted on the publisher"; return; }
CREATE EXTENSION snowflake;
CREATE TABLE orders (id bigserial PRIMARY KEY, v text);
CREATE TABLE events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text);
CREATE TABLE measures (id bigserial, at date NOT NULL, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
CREATE TABLE measures_2020 PARTITION OF measures FOR VALUES FROM ('2020-01-01') TO ('2021-01-01');
CREATE TABLE measures_2021 PARTITION OF measures FOR VALUES FROM ('2021-01-01') TO ('2022-01-01');
CREATE TABLE accounts (id serial PRIMARY KEY);
CREATE TABLE notes (id bigserial PRIMARY KEY, account_id int REFERENCES accounts);
INSERT INTO orders (v) VALUES ('old');
INSERT INTO events (v) VALUES ('old');
INSERT INTO measures (at) VALUES ('2020-02-02'), ('2021-02-02');
INSERT INTO accounts DEFAULT VALUES;
INSERT INTO notes (account_id) VALUES (1);
SELECT count(*) FROM snowflake_convert('orders');
SELECT count(*) FROM snowflake_convert('events');
SELECT count(*) FROM snowflake_convert('measures', drop_sequence => true);
SELECT count(*) FROM snowflake_convert('accounts', widen => true);
SELECT count(*) FROM snowflake_convert('notes');
INSERT INTO orders (v) VALUES ('new');
INSERT INTO events (v) VALUES ('new');
INSERT INTO measures (at) VALUES ('2020-03-03');
INSERT INTO measures_2021 (at) VALUES ('2021-03-03');
INSERT INTO accounts DEFAULT VALUES;
INSERT INTO notes (account_id) SELECT max(id) FROM accounts;
SQL
    local want got rows_want rows_got
    want=$(dbval "$PUB" dumped "$DEFAULTS_SQL")
    like "the publisher's tables draw snowflake_nextval()" "$want" \
        '^accounts.id: snowflake_nextval\(\) \| events.id: snowflake_nextval\(\) \| measures.id: snowflake_nextval\(\) \| measures_2020.id: snowflake_nextval\(\) \| measures_2021.id: snowflake_nextval\(\) \| notes.id: snowflake_nextval\(\) \| orders.id: snowflake_nextval\(\)$'
    rows_want=$(dbval "$PUB" dumped "SELECT string_agg(t || ':' || id, ',' ORDER BY t, id) FROM (
        SELECT 'orders' t, id FROM orders UNION ALL SELECT 'events', id FROM events UNION ALL
        SELECT 'measures', id FROM measures UNION ALL SELECT 'accounts', id FROM accounts UNION ALL
        SELECT 'notes', account_id FROM notes) x")

    as_pg "$PGBIN/pg_dump" -h "$PUB" -p "$PG_PORT" -U postgres -Fc -f "$DUMP/dumped.dump" dumped \
        || { bail "pg_dump -Fc"; return; }
    ok "pg_dump -Fc of the converted database"
    local schema
    schema=$(as_pg "$PGBIN/pg_restore" --schema-only -f - "$DUMP/dumped.dump")
    is "the dump gives the table, both partitions and the other tables DEFAULT public.snowflake_nextval()" \
        "$(grep -c 'DEFAULT public\.snowflake_nextval() NOT NULL' <<<"$schema")" 7

    pg_psql "$DST" -c "CREATE DATABASE restored" || { bail "database restored"; return; }
    if out=$(as_pg "$PGBIN/pg_restore" -h "$DST" -p "$PG_PORT" -U postgres -d restored --exit-on-error "$DUMP/dumped.dump" 2>&1); then
        ok "pg_restore into a server with the extension"
    else
        bail "pg_restore into a server with the extension" "$out"; return
    fi
    got=$(dbval "$DST" restored "$DEFAULTS_SQL")
    is "every restored relation keeps its default" "$got" "$want"
    rows_got=$(dbval "$DST" restored "SELECT string_agg(t || ':' || id, ',' ORDER BY t, id) FROM (
        SELECT 'orders' t, id FROM orders UNION ALL SELECT 'events', id FROM events UNION ALL
        SELECT 'measures', id FROM measures UNION ALL SELECT 'accounts', id FROM accounts UNION ALL
        SELECT 'notes', account_id FROM notes) x")
    is "the rows come back with their ids" "$rows_got" "$rows_want"
    got=$(dbval "$DST" restored "SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relkind = 'S' AND relnamespace = 'public'::regnamespace")
    is "restored sequences: the kept ones (orders, accounts, notes), not the dropped one (measures) nor the identity's" \
        "$got" "accounts_id_seq,notes_id_seq,orders_id_seq"

    # After a restore the node's floor goes above the restored ids (the
    # operations guide's step), then a new row's id is above them all.
    db "$DST" restored -c "SELECT snowflake_advance_floor((SELECT max(id) FROM (SELECT id FROM orders UNION ALL SELECT id FROM events UNION ALL SELECT id FROM measures UNION ALL SELECT id FROM accounts) x))" >/dev/null \
        || { bail "snowflake_advance_floor after the restore"; return; }
    got=$(dbval "$DST" restored "WITH n AS (INSERT INTO orders (v) VALUES ('restored') RETURNING id),
        m AS (INSERT INTO measures_2020 (at) VALUES ('2020-04-04') RETURNING id)
        SELECT format('%s %s %s', (SELECT snowflake_worker_id(id) FROM n),
                      (SELECT id FROM n) > (SELECT max(id) FROM orders) AND (SELECT id FROM m) > (SELECT max(id) FROM measures),
                      (SELECT snowflake_worker_id(id) FROM m))")
    is "new rows on the restore target: worker 3, above every restored id (a table and a partition)" "$got" "3 t 3"
}

# wait_value DIR DB SQL WANT: true when SQL returns WANT (for wait_for).
wait_value() { [ "$(dbval "$1" "$2" "$3" 2>/dev/null)" = "$4" ]; }

case_2() {
    echo "# case 2: logical replication of a converted bigserial table"
    pg_psql "$PUB" -c "CREATE DATABASE pubdb" && pg_psql "$SUB" -c "CREATE DATABASE subdb" \
        || { bail "the databases"; return; }
    db "$PUB" pubdb <<'SQL' || { bail "the publisher's table and publication"; return; }
CREATE EXTENSION snowflake;
CREATE TABLE items (id bigserial PRIMARY KEY, v text);
INSERT INTO items (v) VALUES ('before 1'), ('before 2');
CREATE PUBLICATION items_pub FOR TABLE items;
SQL
    db "$SUB" subdb -c "CREATE TABLE items (id bigint PRIMARY KEY, v text)" \
        && db "$SUB" subdb -c "SET client_min_messages = warning" -c "CREATE SUBSCRIPTION items_sub CONNECTION 'host=$PUB port=$PG_PORT user=postgres dbname=pubdb' PUBLICATION items_pub" \
        || { bail "the subscription"; return; }
    if wait_for "initial copy" 60 wait_value "$SUB" subdb "SELECT count(*) FROM items" 2; then
        ok "the subscriber copies the rows from before the conversion"
    else
        bail "the subscriber copies the rows from before the conversion"; return
    fi
    db "$PUB" pubdb <<'SQL' >/dev/null || { bail "conversion and new rows on the publisher"; return; }
SELECT count(*) FROM snowflake_convert('items', drop_sequence => true);
INSERT INTO items (v) VALUES ('after 1'), ('after 2'), ('after 3');
UPDATE items SET v = 'updated' WHERE v = 'before 1';
DELETE FROM items WHERE v = 'before 2';
SQL
    local want
    want=$(dbval "$PUB" pubdb "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM items")
    like "the publisher's new ids are snowflake ids of worker 1" \
        "$(dbval "$PUB" pubdb "SELECT string_agg(DISTINCT snowflake_worker_id(id)::text, ',') FROM items WHERE v LIKE 'after%'")" '^1$'
    if wait_for "replication" 60 wait_value "$SUB" subdb "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM items" "$want"; then
        ok "inserts, an update and a delete after the conversion replicate with the publisher's ids"
    else
        not_ok "inserts, an update and a delete after the conversion replicate with the publisher's ids" \
            "publisher:  $want" "subscriber: $(dbval "$SUB" subdb "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM items")"
    fi
    db "$SUB" subdb -c "SET client_min_messages = warning" -c "DROP SUBSCRIPTION items_sub" >/dev/null || not_ok "the subscription is dropped"
}

case_3() {
    echo "# case 3: a widened serial table and a subscriber whose column is still integer"
    pg_psql "$PUB" -c "CREATE DATABASE pubnarrow" && pg_psql "$SUB" -c "CREATE DATABASE subnarrow" \
        || { bail "the databases"; return; }
    db "$PUB" pubnarrow <<'SQL' || { bail "the publisher's table and publication"; return; }
CREATE EXTENSION snowflake;
CREATE TABLE tickets (id serial PRIMARY KEY, v text);
INSERT INTO tickets (v) VALUES ('before');
CREATE PUBLICATION tickets_pub FOR TABLE tickets;
SQL
    db "$SUB" subnarrow -c "CREATE TABLE tickets (id int PRIMARY KEY, v text)" \
        && db "$SUB" subnarrow -c "SET client_min_messages = warning" -c "CREATE SUBSCRIPTION tickets_sub CONNECTION 'host=$PUB port=$PG_PORT user=postgres dbname=pubnarrow' PUBLICATION tickets_pub" \
        || { bail "the subscription"; return; }
    wait_for "initial copy" 60 wait_value "$SUB" subnarrow "SELECT count(*) FROM tickets" 1 \
        || { bail "the subscriber copies the first row"; return; }
    db "$PUB" pubnarrow -c "SELECT count(*) FROM snowflake_convert('tickets', widen => true)" \
        -c "INSERT INTO tickets (v) VALUES ('after')" >/dev/null || { bail "widened and converted on the publisher"; return; }
    # The subscriber's apply worker fails on the first id that does not fit.
    local errors="SELECT apply_error_count > 0 FROM pg_stat_subscription_stats WHERE subname = 'tickets_sub'"
    if wait_for "apply error" 60 wait_value "$SUB" subnarrow "$errors" t; then
        ok "an integer column on the subscriber refuses the new ids (apply error counted)"
    else
        not_ok "an integer column on the subscriber refuses the new ids (apply error counted)" \
            "$(tail -5 "$SUB/server.log")"
    fi
    is "nothing arrives while the subscriber's column is integer" \
        "$(dbval "$SUB" subnarrow "SELECT count(*) FROM tickets")" 1
    db "$SUB" subnarrow -c "ALTER TABLE tickets ALTER COLUMN id TYPE bigint" >/dev/null \
        || { bail "the subscriber's column is widened"; return; }
    local want
    want=$(dbval "$PUB" pubnarrow "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM tickets")
    if wait_for "replication" 60 wait_value "$SUB" subnarrow "SELECT string_agg(id || '=' || v, ',' ORDER BY id) FROM tickets" "$want"; then
        ok "once widened on the subscriber too, the new row arrives with its snowflake id"
    else
        not_ok "once widened on the subscriber too, the new row arrives with its snowflake id" "publisher: $want"
    fi
    db "$SUB" subnarrow -c "SET client_min_messages = warning" -c "DROP SUBSCRIPTION tickets_sub" >/dev/null || not_ok "the subscription is dropped"
}

case_4() {
    echo "# case 4: the extension in a schema whose name needs quoting"
    pg_psql "$DST" -c "CREATE DATABASE relocated" || { bail "database relocated"; return; }
    db "$DST" relocated >/dev/null <<'SQL' || { bail "the extension in schema \"Snow Flake\""; return; }
CREATE SCHEMA "Snow Flake";
CREATE EXTENSION snowflake SCHEMA "Snow Flake";
CREATE TABLE t (id bigserial PRIMARY KEY);
SQL
    local got
    got=$(dbval "$DST" relocated "SELECT string_agg(s, ' ; ') FROM \"Snow Flake\".snowflake_convert('t') AS s")
    is "the statements name the function in its schema, quoted" "$got" \
        'LOCK TABLE public.t IN ACCESS EXCLUSIVE MODE ; ALTER TABLE ONLY public.t ALTER COLUMN id SET DEFAULT "Snow Flake".snowflake_nextval()'
    got=$(dbval "$DST" relocated "INSERT INTO t DEFAULT VALUES RETURNING \"Snow Flake\".snowflake_worker_id(id)")
    is "the converted table draws ids there" "$got" 3
}

case_5() {
    echo "# case 5: a partition added while snowflake_convert waits for its lock"
    pg_psql "$DST" -c "CREATE DATABASE raced" || { bail "database raced"; return; }
    db "$DST" raced >/dev/null <<'SQL' || { bail "the partitioned table"; return; }
CREATE EXTENSION snowflake;
CREATE TABLE race (id bigserial, at date NOT NULL) PARTITION BY RANGE (at);
CREATE TABLE race_2020 PARTITION OF race FOR VALUES FROM ('2020-01-01') TO ('2021-01-01');
SQL
    # Session A adds a partition and commits only once session B (the
    # conversion, which read the catalog before) waits for a lock on race.
    db "$DST" raced >"$SUITE_DIR/race_a.log" 2>&1 <<'SQL' &
BEGIN;
CREATE TABLE race_2021 PARTITION OF race FOR VALUES FROM ('2021-01-01') TO ('2022-01-01');
DO $$
BEGIN
    FOR i IN 1 .. 1200 LOOP
        PERFORM pg_stat_clear_snapshot();  -- else the transaction sees its first reading only
        IF EXISTS (SELECT 1 FROM pg_stat_activity
                   WHERE wait_event_type = 'Lock' AND query LIKE '%snowflake_convert(''race''%') THEN
            RETURN;
        END IF;
        PERFORM pg_sleep(0.05);
    END LOOP;
    RAISE EXCEPTION 'the conversion did not wait for its lock within 60 s';
END $$;
COMMIT;
SQL
    local a_pid=$! out
    # B starts once A holds the partition uncommitted (A is in its DO loop).
    wait_for "session A waits" 60 wait_value "$DST" raced \
        "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE 'DO %'" 1 \
        || { bail "session A holds the new partition" "$(cat "$SUITE_DIR/race_a.log")"; wait "$a_pid"; return; }
    out=$(db "$DST" raced -A -t -c "SELECT count(*) FROM snowflake_convert('race')" 2>&1)
    wait "$a_pid" || not_ok "session A commits" "$(cat "$SUITE_DIR/race_a.log")"
    like "a partition added while it waited for its lock: 40001, changed nothing" "$out" \
        'table "public.race" changed during snowflake_convert'
    is "the partitions keep the sequence's default" \
        "$(dbval "$DST" raced "SELECT count(*) FROM pg_attrdef WHERE pg_get_expr(adbin, adrelid) LIKE 'nextval%'")" 3
    out=$(dbval "$DST" raced "SELECT string_agg(s, ' ; ') FROM snowflake_convert('race') AS s WHERE s LIKE 'ALTER%'")
    like "called again, it converts the new partition too" "$out" 'ALTER TABLE ONLY public\.race_2021 ALTER COLUMN id SET DEFAULT'
}

run_cases convert "$@"
exit
