-- snowflake 1.2 -> 1.3 (ALTER EXTENSION snowflake UPDATE TO '1.3').
--
-- Every object that snowflake--1.3.sql adds or changes compared with
-- snowflake--1.2.sql is added or changed here too (test/upgrade.sh compares
-- an updated database with a fresh install).

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

-- snowflake_stats() gains the worker id the HTTP endpoint issues its ids
-- under (snowflake.http_worker_id; NULL while off) and the node's layout
-- (snowflake.layout, its ids a millisecond, the end of its lifetime): the
-- view is made again over it.
DROP VIEW snowflake_stats;
DROP FUNCTION snowflake_stats();

CREATE FUNCTION snowflake_stats(
    OUT worker_id integer,
    OUT epoch timestamptz,
    OUT ids_issued bigint,
    OUT last_timestamp timestamptz,
    OUT overflow_waits bigint,
    OUT clock_backwards_events bigint,
    OUT clock_backwards_max_ms bigint,
    OUT clock_backwards_errors bigint,
    OUT since timestamptz,
    OUT high_water_mark timestamptz,
    OUT reservations bigint,
    OUT reservation_waits bigint,
    OUT startup_waits bigint,
    OUT reservation_window_ms bigint,
    OUT last_mark_write_ms bigint,
    OUT lease_state text,
    OUT lease_id bigint,
    OUT lease_deadline timestamptz,
    OUT lease_renewals bigint,
    OUT lease_failures bigint,
    OUT lease_last_error text,
    OUT clock_synchronized boolean,
    OUT clock_max_error_ms double precision,
    OUT clock_est_error_ms double precision,
    OUT clock_health_refusals bigint,
    OUT coordinator text,
    OUT lease_session text,
    OUT lease_granted_ttl_ms bigint,
    OUT backup_worker_id integer,
    OUT backup_until timestamptz,
    OUT clock_failovers bigint,
    OUT http_worker_id integer,
    OUT layout text,
    OUT ids_per_ms integer,
    OUT lifetime_end timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_stats() IS
'counters of this node''s id generator since the server started or the last snowflake_stats_reset()';

CREATE VIEW snowflake_stats AS SELECT * FROM snowflake_stats();
COMMENT ON VIEW snowflake_stats IS
'counters of this node''s id generator, one row';
GRANT SELECT ON snowflake_stats TO PUBLIC;

-- Text ids for URLs and APIs (1.3) -----------------------------------------------
-- Fixed width, so that text order (COLLATE "C") is id order. A format is
-- always named: nothing guesses it from the text.

CREATE FUNCTION snowflake_encode(id bigint, format text DEFAULT 'base32')
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_encode(bigint, text) IS
'a Snowflake id as text: ''base32'' (Crockford, 13 characters), ''base62'' (11) or ''decimal''; fixed width, so text order is id order';

CREATE FUNCTION snowflake_decode_text(t text, format text DEFAULT 'base32')
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_decode_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode_text(text, text) IS
'the Snowflake id of a text in the named format (''base32'' read leniently: either case, I and L as 1, O as 0, hyphens ignored); an error for any other text';

CREATE FUNCTION uuidv7_typeid(prefix text)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_uuidv7_typeid'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION uuidv7_typeid(text) IS
'new UUID version 7 as a TypeID with the prefix (empty for none), as uuidv7() makes it';

CREATE FUNCTION snowflake_uuid_to_typeid(u uuid, prefix text)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_uuid_to_typeid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_uuid_to_typeid(uuid, text) IS
'a UUID as a TypeID (specification 0.3.0) with the prefix (empty for none)';

CREATE FUNCTION snowflake_typeid_to_uuid(t text)
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_typeid_to_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_typeid_to_uuid(text) IS
'the UUID of a TypeID; an error for text that is not one';

CREATE FUNCTION snowflake_typeid_prefix(t text)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_typeid_prefix'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_typeid_prefix(text) IS
'the prefix of a TypeID (empty for none); an error for text that is not one';

CREATE FUNCTION snowflake_uuid_to_ulid(u uuid)
RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_uuid_to_ulid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_uuid_to_ulid(uuid) IS
'a UUID as the 26 characters of a ULID (Crockford base32, upper case)';

CREATE FUNCTION snowflake_ulid_to_uuid(t text)
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_ulid_to_uuid'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_ulid_to_uuid(text) IS
'the UUID of a ULID''s 26 characters (either case); an error for text that is not one';

-- UUID version 7 (1.3) --------------------------------------------------------

CREATE FUNCTION uuidv7_at(ts timestamptz)
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_uuidv7_at'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION uuidv7_at(timestamptz) IS
'new UUID version 7 of the time ts (to the microsecond) with fresh random bits, for backfilling rows whose time is known';

-- Converting existing tables (1.3) ---------------------------------------------
-- snowflake_convert turns a serial, bigserial or identity column (and the same
-- column of every partition and inheritance child) into one that draws
-- snowflake_nextval(). Every name in the statements it runs is quoted by
-- format('%I'), and each statement is returned; with dry_run it only returns
-- them. The caller's transaction holds the ACCESS EXCLUSIVE locks it takes
-- until it ends.

CREATE FUNCTION snowflake_convert(tab regclass, col name DEFAULT 'id',
                                  drop_sequence boolean DEFAULT false,
                                  widen boolean DEFAULT false,
                                  raise_floor boolean DEFAULT false,
                                  dry_run boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $convert$
DECLARE
    ext_schema name;
    nextval_oid oid;
    tab_name text;
    tree jsonb;
    tree_locked jsonb;
    -- The tree as jsonb ($1 the table, $2 the column, $3 snowflake_nextval()):
    -- read before the locks and again after them.
    tree_sql constant text := $tree$
    WITH RECURSIVE descendants(relid, depth) AS (
        SELECT $1, 0
        UNION ALL
        SELECT i.inhrelid, t.depth + 1 FROM pg_inherits i JOIN descendants t ON i.inhparent = t.relid
    ), once AS (
        SELECT relid, min(depth) AS depth FROM descendants GROUP BY relid
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object(
           'relid', c.oid, 'depth', o.depth, 'qname', format('%I.%I', n.nspname, c.relname),
           'relkind', c.relkind, 'relowner', c.relowner, 'attnum', a.attnum, 'typid', a.atttypid,
           'identity', a.attidentity, 'has_default', ad.oid IS NOT NULL,
           'draws_snowflake', EXISTS (SELECT 1 FROM pg_depend d
                   WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                     AND d.refclassid = 'pg_proc'::regclass AND d.refobjid = $3),
           'seq', CASE WHEN a.attidentity <> '' THEN
                    (SELECT d.objid FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
                     WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = c.oid
                       AND d.refobjsubid = a.attnum AND d.deptype = 'i' LIMIT 1)
                ELSE
                    (SELECT d.refobjid FROM pg_depend d JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
                     WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                       AND d.refclassid = 'pg_class'::regclass LIMIT 1)
           END) ORDER BY c.oid), '[]')
    FROM once o
    JOIN pg_class c ON c.oid = o.relid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
    $tree$;
    target record;
    r record;
    stmts text[] := '{}';
    locks text[] := '{}';
    drops text[] := '{}';
    widens text[] := '{}';
    widened text[] := '{}';
    views text;
    max_value bigint;
    lowest_next bigint;
    stmt text;
BEGIN
    IF tab IS NULL OR col IS NULL OR drop_sequence IS NULL OR widen IS NULL
       OR raise_floor IS NULL OR dry_run IS NULL THEN
        RAISE EXCEPTION 'snowflake_convert arguments must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Name the table and the column; leave an option out to take its default.';
    END IF;

    SELECT n.nspname INTO ext_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake';
    nextval_oid := format('%I.snowflake_nextval()', ext_schema)::regprocedure::oid;

    -- The table itself: a table or a partitioned table, owned by the caller.
    SELECT c.oid, c.relkind, c.relowner, format('%I.%I', n.nspname, c.relname) AS qname
    INTO target
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = tab;
    tab_name := target.qname;
    IF target.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tab_name
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = format('Its relkind is %L; snowflake_convert converts a column of a table or a partitioned table.', target.relkind),
                  HINT = 'Name the table whose key column should draw snowflake_nextval().';
    END IF;

    -- The tree: the table, its partitions and inheritance children, parents
    -- first (depth), each once.
    EXECUTE tree_sql INTO tree USING tab::oid, col, nextval_oid;

    FOR r IN SELECT * FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid) WHERE NOT pg_has_role(current_user, relowner, 'USAGE') ORDER BY depth, qname LOOP
        RAISE EXCEPTION 'must be owner of table %', r.qname
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('snowflake_convert alters %s, which %s owns.', r.qname, r.relowner::regrole),
                  HINT = 'Call snowflake_convert as the owner of the table and of its partitions and children, or as a member of their owner''s role.';
    END LOOP;

    SELECT * INTO target FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid) WHERE depth = 0;
    IF target.attnum IS NULL THEN
        RAISE EXCEPTION 'column "%" of table "%" does not exist', col, tab_name
            USING ERRCODE = 'undefined_column',
                  HINT = 'Name the key column as the second argument (the default is id).';
    END IF;
    IF target.typid NOT IN ('int8'::regtype, 'int4'::regtype, 'int2'::regtype) THEN
        RAISE EXCEPTION 'column "%" of table "%" is of type %, not bigint', col, tab_name, format_type(target.typid, NULL)
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Snowflake ids are bigint; snowflake_convert converts integer columns that draw a sequence.',
                  HINT = 'Keep this column and add a bigint column with DEFAULT snowflake_nextval() beside it (docs/migration.md).';
    END IF;

    -- Converted already: nothing to do.
    IF NOT EXISTS (SELECT 1 FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid)
                   WHERE NOT t.draws_snowflake OR t.identity <> '' OR t.typid <> 'int8'::regtype)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k JOIN jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid) ON k.confrelid = t.relid
                       JOIN pg_attribute fa ON fa.attrelid = k.conrelid
                        AND fa.attnum = k.conkey[array_position(k.confkey, t.attnum)]
                       WHERE k.contype = 'f' AND fa.atttypid IN ('int4'::regtype, 'int2'::regtype)) THEN
        RAISE NOTICE 'column "%" of table "%" already draws snowflake_nextval()', col, tab_name
            USING DETAIL = 'Nothing was changed.';
        RETURN;
    END IF;

    IF NOT target.draws_snowflake AND target.identity = '' AND target.seq IS NULL THEN
        RAISE EXCEPTION 'column "%" of table "%" does not draw a sequence', col, tab_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = CASE WHEN target.has_default
                                THEN format('Its default is %s.', (SELECT pg_get_expr(ad.adbin, ad.adrelid) FROM pg_attrdef ad
                                                                   WHERE ad.adrelid = target.relid AND ad.adnum = target.attnum))
                                ELSE 'It has no default and is not an identity column.' END,
                  HINT = 'snowflake_convert converts serial, bigserial and identity columns; give any other bigint column its ids with ALTER TABLE ... ALTER COLUMN ... SET DEFAULT snowflake_nextval().';
    END IF;
    FOR r IN SELECT * FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid)
             WHERE t.depth > 0 AND t.has_default AND NOT t.draws_snowflake AND t.seq IS NULL ORDER BY depth, qname LOOP
        RAISE EXCEPTION 'column "%" of table "%" has a default that is not a sequence', col, r.qname
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('%s is a partition or child of %s; its default is %s.', r.qname, tab_name,
                                  (SELECT pg_get_expr(ad.adbin, ad.adrelid) FROM pg_attrdef ad
                                   WHERE ad.adrelid = r.relid AND ad.adnum = r.attnum)),
                  HINT = 'Drop or change that default first, so that every partition and child draws the same ids.';
    END LOOP;

    -- Widening: the column, and every integer column that references it.
    IF target.typid <> 'int8'::regtype THEN
        IF NOT widen THEN
            RAISE EXCEPTION 'column "%" of table "%" is of type %, too narrow for snowflake ids', col, tab_name, format_type(target.typid, NULL)
                USING ERRCODE = 'datatype_mismatch',
                      DETAIL = 'Snowflake ids need bigint; widening the column rewrites the table (and its indexes) under an ACCESS EXCLUSIVE lock.',
                      HINT = 'Call snowflake_convert(..., widen => true) to widen it (and the integer columns that reference it) in the same transaction, or run ALTER TABLE ... ALTER COLUMN ... TYPE bigint first.';
        END IF;
        widened := widened || format('%s.%I', tab_name, col);
        widens := widens || format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', tab_name, col);
    END IF;
    FOR r IN SELECT DISTINCT format('%I.%I', n.nspname, c.relname) AS qname, c.oid AS relid, c.relowner, fa.attname, fa.attnum,
                    format_type(fa.atttypid, NULL) AS typ, k.conname
             FROM pg_constraint k
             JOIN jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid) ON k.confrelid = t.relid
             JOIN pg_class c ON c.oid = k.conrelid
             JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_attribute fa ON fa.attrelid = k.conrelid AND fa.attnum = k.conkey[array_position(k.confkey, t.attnum)]
             WHERE k.contype = 'f' AND k.conparentid = 0 AND fa.atttypid IN ('int4'::regtype, 'int2'::regtype)
             ORDER BY 1, 4 LOOP
        IF NOT widen THEN
            RAISE EXCEPTION 'column "%" of table "%" references "%" and is of type %', r.attname, r.qname, col, r.typ
                USING ERRCODE = 'datatype_mismatch',
                      DETAIL = format('Foreign key %I of %s references %s.%I; a snowflake id does not fit in %s, so rows referencing new ids could not be inserted.',
                                      r.conname, r.qname, tab_name, col, r.typ),
                      HINT = 'Call snowflake_convert(..., widen => true) to widen the referencing columns to bigint in the same transaction (each rewrites its table), or widen them first.';
        END IF;
        IF NOT pg_has_role(current_user, r.relowner, 'USAGE') THEN
            RAISE EXCEPTION 'must be owner of table %', r.qname
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('widen => true widens %s.%I, which references %s.%I; %s owns %s.', r.qname, r.attname, tab_name, col, r.relowner::regrole, r.qname),
                      HINT = 'Call snowflake_convert as the owner of the referencing tables too, or widen their columns first as their owner.';
        END IF;
        widened := widened || format('%s.%I', r.qname, r.attname);
        locks := locks || format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', r.qname);
        widens := widens || format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', r.qname, r.attname);
    END LOOP;

    -- A view or rule over a column whose type changes blocks ALTER TYPE.
    IF cardinality(widened) > 0 THEN
        SELECT string_agg(DISTINCT format('%I.%I', vn.nspname, v.relname), ', ') INTO views
        FROM pg_depend d
        JOIN pg_rewrite rw ON d.classid = 'pg_rewrite'::regclass AND rw.oid = d.objid
        JOIN pg_class v ON v.oid = rw.ev_class
        JOIN pg_namespace vn ON vn.oid = v.relnamespace
        JOIN pg_class c ON d.refclassid = 'pg_class'::regclass AND c.oid = d.refobjid
        JOIN pg_namespace cn ON cn.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.refobjsubid
        WHERE v.oid <> c.oid
          AND (format('%I.%I.%I', cn.nspname, c.relname, a.attname) = ANY (widened)
               OR (c.oid IN (SELECT t.relid FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid)) AND a.attname = col));
        IF views IS NOT NULL THEN
            RAISE EXCEPTION 'views depend on the columns to widen'
                USING ERRCODE = 'dependent_objects_still_exist',
                      DETAIL = format('ALTER COLUMN ... TYPE bigint of %s cannot run while %s use them.', array_to_string(widened, ', '), views),
                      HINT = 'In one transaction: drop the views, call snowflake_convert, and create them again (pg_get_viewdef gives their definitions).';
        END IF;
    END IF;

    -- The identity goes (with its sequence), then every relation of the tree
    -- draws snowflake_nextval().
    -- (From PostgreSQL 17 the partitions of an identity column share it: its
    -- DROP IDENTITY on the partitioned table drops theirs, and one on a
    -- partition is refused.)
    FOR r IN SELECT * FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid) WHERE identity <> ''
             AND NOT (current_setting('server_version_num')::int >= 170000 AND depth > 0
                      AND EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class pc ON pc.oid = t.relid AND pc.relispartition
                                  JOIN pg_attribute pa ON pa.attrelid = i.inhparent AND pa.attname = col AND pa.attidentity <> ''
                                  WHERE i.inhrelid = t.relid))
             ORDER BY depth, qname LOOP
        drops := drops || format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY IF EXISTS', r.qname, col);
    END LOOP;
    FOR r IN SELECT * FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid) WHERE NOT draws_snowflake OR identity <> '' ORDER BY depth, qname LOOP
        stmts := stmts || format('ALTER TABLE ONLY %s ALTER COLUMN %I SET DEFAULT %I.snowflake_nextval()', r.qname, col, ext_schema);
    END LOOP;
    IF drop_sequence THEN
        FOR r IN SELECT DISTINCT s.oid, format('%I.%I', n.nspname, s.relname) AS qname
                 FROM jsonb_to_recordset(tree) AS t(relid oid, depth int, qname text, relkind "char", relowner oid, attnum int2, typid oid, identity "char", has_default boolean, draws_snowflake boolean, seq oid) JOIN pg_class s ON s.oid = t.seq JOIN pg_namespace n ON n.oid = s.relnamespace
                 WHERE t.identity = '' ORDER BY 2 LOOP
            stmts := stmts || format('DROP SEQUENCE %s', r.qname);
        END LOOP;
    END IF;
    stmts := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tab_name) || locks || drops || widens || stmts;

    -- The locks come first, so that no row is added between the check of the
    -- existing values and the new default.
    IF NOT dry_run THEN
        FOREACH stmt IN ARRAY stmts LOOP
            EXIT WHEN stmt NOT LIKE 'LOCK TABLE %';
            EXECUTE stmt;
        END LOOP;
        -- A partition, child or default that changed while the locks were
        -- awaited would not be converted: the caller tries again.
        EXECUTE tree_sql INTO tree_locked USING tab::oid, col, nextval_oid;
        IF tree_locked IS DISTINCT FROM tree THEN
            RAISE EXCEPTION 'table "%" changed during snowflake_convert', tab_name
                USING ERRCODE = 'serialization_failure',
                      DETAIL = 'A partition, inheritance child or default of the table was added or changed while snowflake_convert waited for its locks.',
                      HINT = 'Call snowflake_convert again.';
        END IF;
    END IF;

    -- Every existing value must lie below every id this node will issue: below
    -- the smallest id of the current millisecond, or below the raised floor.
    EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tab_name) INTO max_value;
    EXECUTE format('SELECT %I.snowflake_from_timestamp(clock_timestamp())', ext_schema) INTO lowest_next;
    IF max_value >= lowest_next THEN
        IF NOT raise_floor THEN
            RAISE EXCEPTION 'values of column "%" of table "%" are not below the next snowflake id', col, tab_name
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('The largest value is %s; the smallest id of the current millisecond is %s, so a new id could equal an existing one.', max_value, lowest_next),
                      HINT = format('Call snowflake_convert(..., raise_floor => true) to raise this node''s floor above %s as snowflake_advance_floor() does, and raise it on every other node that inserts into the table.', max_value);
        END IF;
        IF NOT has_function_privilege(format('%I.snowflake_advance_floor(bigint)', ext_schema), 'EXECUTE') THEN
            RAISE EXCEPTION 'permission denied to raise the floor'
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = format('raise_floor => true calls snowflake_advance_floor(%s), which is revoked from PUBLIC.', max_value),
                      HINT = 'Have a superuser grant EXECUTE on snowflake_advance_floor(bigint), or call it, and then call snowflake_convert again.';
        END IF;
        stmts := stmts || format('SELECT %I.snowflake_advance_floor(%s)', ext_schema, max_value);
    END IF;

    FOREACH stmt IN ARRAY stmts LOOP
        IF NOT dry_run AND stmt NOT LIKE 'LOCK TABLE %' THEN
            EXECUTE stmt;
        END IF;
        RETURN NEXT stmt;
    END LOOP;
END
$convert$;
COMMENT ON FUNCTION snowflake_convert(regclass, name, boolean, boolean, boolean, boolean) IS
'makes a serial, bigserial or identity column (and its partitions and children) draw snowflake_nextval() in the caller''s transaction; returns the statements run, or with dry_run those it would run';

-- Ids of any layout (1.3) ------------------------------------------------------
-- Ids of other systems (Discord's, sonyflake's, Instagram's) and of other
-- splits, read and built under a layout given by name (a profile of
-- snowflake_layouts()) or as text ('time 39, sequence 8, worker 16, unit 10ms'),
-- with the profile's own epoch or the one given. The node's own ids keep the
-- functions above. New names, not overloads of those: a (bigint, text)
-- snowflake_decode would take calls such as snowflake_decode(id, '2025-01-01+00'),
-- whose untyped literal PostgreSQL resolves to text first.

CREATE FUNCTION snowflake_decode_as(id bigint, layout text,
                                    OUT ts timestamptz, OUT worker_id integer, OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_decode_as'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode_as(bigint, text) IS
'creation time, worker id and sequence of an id of the layout (a profile with an epoch of its own: discord, sonyflake, instagram)';

CREATE FUNCTION snowflake_decode_as(id bigint, layout text, epoch timestamptz,
                                    OUT ts timestamptz, OUT worker_id integer, OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_decode_as_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode_as(bigint, text, timestamptz) IS
'creation time, worker id and sequence of an id of the layout (a profile name or the fields as text) made with the given epoch';

CREATE FUNCTION snowflake_compose_as(ts timestamptz, worker_id integer, sequence integer, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose_as'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_compose_as(timestamptz, integer, integer, text) IS
'id of the layout (a profile with an epoch of its own: discord, sonyflake, instagram) built from a time, a worker id and a sequence';

CREATE FUNCTION snowflake_compose_as(ts timestamptz, worker_id integer, sequence integer, layout text,
                                     epoch timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose_as_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_compose_as(timestamptz, integer, integer, text, timestamptz) IS
'id of the layout (a profile name or the fields as text) and epoch built from a time, a worker id and a sequence';

CREATE FUNCTION snowflake_from_timestamp_as(ts timestamptz, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_from_timestamp_as'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_timestamp_as(timestamptz, text) IS
'smallest id of the layout (a profile with an epoch of its own) in the time unit of ts, for range scans';

CREATE FUNCTION snowflake_from_timestamp_as(ts timestamptz, layout text, epoch timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_from_timestamp_as_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_timestamp_as(timestamptz, text, timestamptz) IS
'smallest id of the layout and epoch in the time unit of ts, for range scans';

CREATE FUNCTION snowflake_layouts(
    OUT name text,
    OUT layout text,
    OUT id_bits integer,
    OUT workers integer,
    OUT ids_per_unit integer,
    OUT unit_ms integer,
    OUT lifetime_years numeric,
    OUT epoch timestamptz,
    OUT lifetime_end timestamptz,
    OUT note text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'snowflake_layouts'
LANGUAGE C IMMUTABLE PARALLEL SAFE
ROWS 5;
COMMENT ON FUNCTION snowflake_layouts() IS
'the named layouts: text form, ids below 2^id_bits, workers, ids per time unit, lifetime, the epoch of the system whose ids they read and the end of its lifetime, what differs from the original';

-- Decoders in the node's layout (snowflake.layout, 1.3) -----------------------
-- The decoders without a layout argument read ids in snowflake.layout, a
-- server setting: like those that read snowflake.epoch, they are STABLE.
-- What needs one of the four that were IMMUTABLE (an index, a generated
-- column, a partition key, a constraint) stays as it is, but cannot be made
-- again (pg_dump, pg_upgrade): each is named in a WARNING, with the
-- IMMUTABLE form to build it on instead. Views and functions are not: they
-- may call STABLE functions.
DO $$
DECLARE
    f regprocedure;
    dep record;
BEGIN
    FOR f IN SELECT unnest(ARRAY['snowflake_timestamp(bigint, timestamptz)'::regprocedure,
                                 'snowflake_worker_id(bigint)'::regprocedure,
                                 'snowflake_sequence(bigint)'::regprocedure,
                                 'snowflake_decode(bigint, timestamptz)'::regprocedure])
    LOOP
        FOR dep IN SELECT DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid) AS what
                     FROM pg_depend d
                    WHERE d.refclassid = 'pg_proc'::regclass AND d.refobjid = f
                      AND d.classid NOT IN ('pg_rewrite'::regclass, 'pg_proc'::regclass)
        LOOP
            RAISE WARNING '% uses %, which is STABLE from snowflake 1.3 on', dep.what, f
                USING DETAIL = 'The decoders without a layout read ids in snowflake.layout, a server setting. '
                               'What uses one keeps working, but pg_dump and pg_upgrade cannot create it again.',
                      HINT = 'Create it again over snowflake_decode_as(id, ''twitter'', epoch), which is IMMUTABLE, '
                             'and drop this one.';
        END LOOP;
    END LOOP;
END
$$;
ALTER FUNCTION snowflake_timestamp(bigint, timestamptz) STABLE;
ALTER FUNCTION snowflake_worker_id(bigint) STABLE;
ALTER FUNCTION snowflake_sequence(bigint) STABLE;
ALTER FUNCTION snowflake_decode(bigint, timestamptz) STABLE;
COMMENT ON FUNCTION snowflake_timestamp(bigint, timestamptz) IS
'creation time of a Snowflake id of snowflake.layout made with the given epoch';
COMMENT ON FUNCTION snowflake_worker_id(bigint) IS
'worker id of a Snowflake id of snowflake.layout (twitter: bits 21-12)';
COMMENT ON FUNCTION snowflake_sequence(bigint) IS
'sequence of a Snowflake id of snowflake.layout (twitter: bits 11-0)';
COMMENT ON FUNCTION snowflake_decode(bigint) IS
'creation time (under snowflake.epoch), worker id and sequence of a Snowflake id of snowflake.layout';
COMMENT ON FUNCTION snowflake_decode(bigint, timestamptz) IS
'creation time, worker id and sequence of a Snowflake id of snowflake.layout made with the given epoch';
COMMENT ON FUNCTION snowflake_from_timestamp(timestamptz) IS
'smallest id any node can issue in the millisecond of ts (snowflake.layout): WHERE id >= snowflake_from_timestamp(t) is a primary-key range scan';
COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer) IS
'Snowflake id of snowflake.layout built from a time (under snowflake.epoch), a worker id and a sequence';
