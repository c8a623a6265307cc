-- snowflake 1.3: Snowflake ids, their decoders and their text forms.

\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

-- Generators ---------------------------------------------------------------

CREATE FUNCTION snowflake_nextval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_nextval() IS
'next Snowflake id of this node: unique and strictly increasing across all backends';

CREATE FUNCTION snowflake_nextval_batch(count integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval_batch'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE
ROWS 1000;
COMMENT ON FUNCTION snowflake_nextval_batch(integer) IS
'count (1 to 1,000,000) strictly increasing Snowflake ids, one lock round trip per millisecond of ids';

CREATE FUNCTION snowflake_advance_floor(after_id bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_advance_floor'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION snowflake_advance_floor(bigint) IS
'durably raises the high-water mark so that every later id of this node is greater than after_id (after a restore, pg_upgrade, pg_rewind or a promotion)';
REVOKE ALL ON FUNCTION snowflake_advance_floor(bigint) FROM PUBLIC;

-- Decoders -----------------------------------------------------------------

CREATE FUNCTION snowflake_timestamp(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_timestamp(bigint) IS
'creation time of a Snowflake id under snowflake.epoch';

CREATE FUNCTION snowflake_timestamp(id bigint, epoch timestamptz)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_timestamp(bigint, timestamptz) IS
'creation time of a Snowflake id made with the given epoch';

CREATE FUNCTION snowflake_worker_id(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'snowflake_worker_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_worker_id(bigint) IS
'worker id bits (21-12) of a Snowflake id';

CREATE FUNCTION snowflake_sequence(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'snowflake_sequence'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_sequence(bigint) IS
'sequence bits (11-0) of a Snowflake id';

CREATE FUNCTION snowflake_decode(id bigint,
                                 OUT ts timestamptz, OUT worker_id integer, OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode(bigint) IS
'creation time (under snowflake.epoch), worker id and sequence of a Snowflake id';

CREATE FUNCTION snowflake_decode(id bigint, epoch timestamptz,
                                 OUT ts timestamptz, OUT worker_id integer, OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_decode_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode(bigint, timestamptz) IS
'creation time, worker id and sequence of a Snowflake id made with the given epoch';

-- Constructors -------------------------------------------------------------

CREATE FUNCTION snowflake_from_timestamp(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_from_timestamp'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_timestamp(timestamptz) IS
'smallest id any node can issue in the millisecond of ts: WHERE id >= snowflake_from_timestamp(t) is a primary-key range scan';

CREATE FUNCTION snowflake_compose(ts timestamptz, worker_id integer, sequence integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer) IS
'Snowflake id built from a time (under snowflake.epoch), a worker id and a sequence';

-- Statistics ---------------------------------------------------------------

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
    OUT clock_failovers bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_stats() IS
'counters of this node''s id generator since the server started or the last snowflake_stats_reset()';

CREATE VIEW snowflake_stats AS SELECT * FROM snowflake_stats();
COMMENT ON VIEW snowflake_stats IS
'counters of this node''s id generator, one row';
GRANT SELECT ON snowflake_stats TO PUBLIC;

CREATE FUNCTION snowflake_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_stats_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_stats_reset() IS
'resets the counters of snowflake_stats (superuser only by default)';
REVOKE ALL ON FUNCTION snowflake_stats_reset() FROM PUBLIC;

-- UUID version 7 (RFC 9562) ----------------------------------------------------
-- On PostgreSQL 18 and later the core's pg_catalog.uuidv7() comes first on
-- the search path; call these schema-qualified there.

CREATE FUNCTION uuidv7()
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_uuidv7'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION uuidv7(shift interval)
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_uuidv7_shift'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The comments name the functions by the schema they were just created in
-- (current_schema() while this script runs): on PostgreSQL 18 an unqualified
-- uuidv7() here would be pg_catalog.uuidv7(), whose comment would be replaced.
-- (1.0 did that; snowflake--1.0--1.1.sql repairs it.)
DO $comments$
BEGIN
    EXECUTE format('COMMENT ON FUNCTION %I.uuidv7() IS %L', current_schema(),
        'new RFC 9562 UUID version 7: Unix milliseconds, a 12-bit sub-millisecond fraction, 62 random bits; strictly increasing within a backend');
    EXECUTE format('COMMENT ON FUNCTION %I.uuidv7(interval) IS %L', current_schema(),
        'new UUID version 7 whose timestamp is shifted by the interval');
END
$comments$;

CREATE FUNCTION uuidv7_timestamp(u uuid)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_uuidv7_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION uuidv7_timestamp(uuid) IS
'millisecond timestamp of a version-7 UUID; NULL for other versions';

CREATE FUNCTION uuidv7_from_timestamp(ts timestamptz)
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_uuidv7_from_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION uuidv7_from_timestamp(timestamptz) IS
'smallest version-7 UUID of the millisecond of ts, for range scans and partition bounds';

CREATE FUNCTION uuidv7_at(ts timestamptz)
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_uuidv7_at'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION uuidv7_at(timestamptz) IS
'new UUID version 7 of the time ts (to the microsecond) with fresh random bits, for backfilling rows whose time is known';

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

-- Without the library preloaded, the generator cannot run: say so now rather
-- than at the first insert.
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM unnest(string_to_array(current_setting('shared_preload_libraries'), ',')) AS lib
        WHERE btrim(lib, ' "') IN ('snowflake', '$libdir/snowflake')) THEN
        RAISE WARNING 'snowflake is not in shared_preload_libraries'
            USING DETAIL = 'The decoders and uuidv7() work; snowflake_nextval() refuses ids until the library is preloaded.',
                  HINT = 'Add snowflake to shared_preload_libraries in postgresql.conf and restart the server.';
    END IF;
END $$;
