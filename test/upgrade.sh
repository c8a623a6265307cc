#!/bin/bash
# Extension upgrades: every path from an older version to the default one
# (snowflake.control's default_version) must end with the same SQL objects as
# a fresh install of the default version.
#
# On a throwaway instance that preloads snowflake, for each older version V
# with an install script snowflake--V.sql:
#   - database upgrade_V: CREATE EXTENSION snowflake VERSION 'V', then
#     ALTER EXTENSION snowflake UPDATE; its extversion is the default version
#   - database fresh: CREATE EXTENSION snowflake
# and a catalog dump of the extension's objects is compared, failing on any
# difference: every member object (pg_describe_object), functions with their
# signature, result, volatility, strictness, parallel safety, security,
# cost/rows, C symbol and library, views with their definition, relations'
# columns, comments (objects and columns), grants (ACLs and pg_init_privs).
# Then the dump is shown to notice a change (a comment and a volatility
# changed in the updated database), so that a comparison that sees nothing
# cannot pass. Ids are made after the update.
#
# Prints "ok - ..." / "not ok - ..." lines; exits non-zero on any failure.
# The instance is removed on exit, pass or fail (KEEP_TMP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."

. test/lib/tap.sh
. test/lib/pg.sh

DEFAULT=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" snowflake.control)
OLD=()
for f in snowflake--*.sql; do
    v=${f#snowflake--}; v=${v%.sql}
    [[ $v == *--* ]] && continue
    [ "$v" = "$DEFAULT" ] || OLD+=("$v")
done

DIR=""
cleanup() { pg_cleanup_all; }
trap cleanup EXIT
DIR=$(pg_tmpdir)
pg_init "$DIR" "shared_preload_libraries = 'snowflake'" "snowflake.worker_id = 7" "autovacuum = off"
if ! pg_start "$DIR"; then
    echo "not ok - the server starts"; cat "$DIR/server.log"; exit 1
fi


# The catalog of the extension in database $1, one sorted line per fact.
DUMP_SQL=$(cat <<'SQL'
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'snowflake'),
members AS (
    SELECT d.classid, d.objid FROM pg_depend d, ext
    WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
)
SELECT line FROM (
    SELECT 'member: ' || pg_describe_object(classid, objid, 0) AS line FROM members
  UNION ALL
    SELECT format('function: %s returns %s%s; volatility %s, strict %s, parallel %s, security definer %s, leakproof %s, cost %s, rows %s, kind %s, language %s, symbol %s, library %s, config %s, acl %s',
                  p.oid::regprocedure, CASE WHEN p.proretset THEN 'setof ' ELSE '' END,
                  pg_get_function_result(p.oid), p.provolatile, p.proisstrict, p.proparallel,
                  p.prosecdef, p.proleakproof, p.procost, p.prorows, p.prokind,
                  (SELECT lanname FROM pg_language WHERE oid = p.prolang),
                  CASE WHEN p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c') THEN p.prosrc ELSE md5(p.prosrc) END,
                  p.probin, p.proconfig, p.proacl)
    FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
  UNION ALL
    SELECT format('function arguments: %s (%s) defaults %s', p.oid::regprocedure,
                  pg_get_function_arguments(p.oid), pg_get_expr(p.proargdefaults, 0))
    FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
  UNION ALL
    SELECT format('relation: %s kind %s acl %s options %s', c.oid::regclass, c.relkind, c.relacl, c.reloptions)
    FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
  UNION ALL
    SELECT format('view: %s as %s', c.oid::regclass, pg_get_viewdef(c.oid))
    FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
    WHERE c.relkind IN ('v', 'm')
  UNION ALL
    SELECT format('column: %s.%s %s not null %s default %s acl %s', c.oid::regclass, a.attname,
                  format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  pg_get_expr(ad.adbin, ad.adrelid), a.attacl)
    FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
  UNION ALL
    SELECT format('comment: %s: %s', pg_describe_object(d.classoid, d.objoid, d.objsubid), d.description)
    FROM pg_description d JOIN members m ON m.classid = d.classoid AND m.objid = d.objoid
  UNION ALL
    SELECT format('comment: extension: %s', obj_description(ext.oid, 'pg_extension')) FROM ext
  UNION ALL
    SELECT format('initial privileges: %s: %s %s', pg_describe_object(i.classoid, i.objoid, i.objsubid), i.privtype, i.initprivs)
    FROM pg_init_privs i JOIN members m ON m.classid = i.classoid AND m.objid = i.objoid
) AS facts
ORDER BY line COLLATE "C";
SQL
)
dump() { pg_psql "$DIR" -d "$1" -A -t -c "$DUMP_SQL"; }

pg_psql "$DIR" -c "CREATE DATABASE fresh"
pg_psql "$DIR" -d fresh -c "CREATE EXTENSION snowflake"
fresh=$(dump fresh)
nlines=$(printf '%s\n' "$fresh" | grep -c '^function: ' || true)
if [ "$nlines" -gt 0 ]; then
    ok "fresh install of $DEFAULT: $(printf '%s\n' "$fresh" | wc -l) catalog facts, $nlines functions"
else
    not_ok "fresh install of $DEFAULT lists functions" "$fresh"
fi

[ ${#OLD[@]} -gt 0 ] || not_ok "there is an older version to update from"
for v in "${OLD[@]}"; do
    db="upgrade_${v//./_}"
    pg_psql "$DIR" -c "CREATE DATABASE $db"
    pg_psql "$DIR" -d "$db" -c "CREATE EXTENSION snowflake VERSION '$v'"
    if ! out=$(pg_psql "$DIR" -d "$db" -c "ALTER EXTENSION snowflake UPDATE" 2>&1); then
        not_ok "ALTER EXTENSION snowflake UPDATE from $v" "$out"
        continue
    fi
    got=$(pg_psql "$DIR" -d "$db" -A -t -c "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")
    if [ "$got" = "$DEFAULT" ]; then ok "update from $v reaches $DEFAULT"; else not_ok "update from $v reaches $DEFAULT" "extversion is '$got'"; fi
    if d=$(diff <(printf '%s\n' "$fresh") <(dump "$db")); then
        ok "$v updated to $DEFAULT has the same catalog as a fresh $DEFAULT"
    else
        not_ok "$v updated to $DEFAULT has the same catalog as a fresh $DEFAULT" \
            "< fresh install of $DEFAULT, > $v updated (fix snowflake--$v--$DEFAULT.sql or snowflake--$DEFAULT.sql):" "$d"
    fi
    # PostgreSQL 18: the core's uuidv7() functions keep (or get back) their
    # own comments, as in a database without the extension.
    core_sql="SELECT coalesce(string_agg(coalesce(obj_description(p, 'pg_proc'), '-'), ' | ' ORDER BY p::text), '') FROM unnest(ARRAY[to_regprocedure('pg_catalog.uuidv7()'), to_regprocedure('pg_catalog.uuidv7(interval)')]) AS p WHERE p IS NOT NULL"
    want_core=$(pg_psql "$DIR" -d postgres -A -t -c "$core_sql")
    for d2 in fresh "$db"; do
        got_core=$(pg_psql "$DIR" -d "$d2" -A -t -c "$core_sql")
        if [ "$got_core" = "$want_core" ]; then
            ok "$d2: the core's uuidv7 functions keep their comments${want_core:+ ($want_core)}"
        else
            not_ok "$d2: the core's uuidv7 functions keep their comments" "got '$got_core'" "want '$want_core'"
        fi
    done
    n=$(pg_psql "$DIR" -d "$db" -A -t -c "SELECT count(DISTINCT id) FROM snowflake_nextval_batch(100) AS id")
    if [ "$n" = 100 ]; then ok "ids after the update from $v"; else not_ok "ids after the update from $v" "got '$n'"; fi
done

# 1.2's IMMUTABLE decoders are STABLE in 1.3: what needs them immutable (an
# index, a generated column) is named in a WARNING of the update, a view is not.
pg_psql "$DIR" -c "CREATE DATABASE decoders"
pg_psql "$DIR" -d decoders -c "CREATE EXTENSION snowflake VERSION '1.2'" \
    -c "CREATE TABLE readings (id bigint, w int GENERATED ALWAYS AS (snowflake_sequence(id)) STORED)" \
    -c "CREATE INDEX readings_worker ON readings (snowflake_worker_id(id))" \
    -c "CREATE VIEW readings_times AS SELECT snowflake_timestamp(id, '2025-01-01+00') FROM readings"
out=$(pg_psql "$DIR" -d decoders -c "ALTER EXTENSION snowflake UPDATE TO '1.3'" 2>&1)
if [[ $out == *"WARNING:  index readings_worker uses snowflake_worker_id(bigint), which is STABLE from snowflake 1.3 on"* &&
      $out == *"uses snowflake_sequence(bigint), which is STABLE"* && $out == *"snowflake_decode_as(id, 'twitter', epoch)"* &&
      $out != *readings_times* ]]; then
    ok "the update from 1.2 names the index and the generated column over a decoder now STABLE, not the view"
else
    not_ok "the update from 1.2 names the index and the generated column over a decoder now STABLE, not the view" "$out"
fi

# The comparison notices a change.
pg_psql "$DIR" -c "CREATE DATABASE changed"
pg_psql "$DIR" -d changed -c "CREATE EXTENSION snowflake"
pg_psql "$DIR" -d changed -c "COMMENT ON FUNCTION snowflake_nextval() IS 'changed'"
pg_psql "$DIR" -d changed -c "ALTER FUNCTION snowflake_worker_id(bigint) VOLATILE"
changes=$(diff <(printf '%s\n' "$fresh") <(dump changed) | grep -c '^>' || true)
if [ "$changes" -ge 2 ]; then ok "the comparison notices a changed comment and volatility"; else not_ok "the comparison notices a changed comment and volatility" "$changes lines differ"; fi

if tap_summary; then echo "upgrade: all checks passed"; else echo "upgrade: FAILED"; exit 1; fi
