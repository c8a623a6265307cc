-- snowflake 1.0 -> 1.1 (ALTER EXTENSION snowflake UPDATE TO '1.1').
--
-- Every object that snowflake--1.1.sql adds or changes compared with
-- snowflake--1.0.sql is added or changed here too: test/upgrade.sh installs
-- 1.0, updates it, and fails on any difference from a fresh 1.1 install
-- (functions, signatures, volatility, strictness, parallel safety, views,
-- comments, grants).

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

CREATE FUNCTION snowflake_advance_floor(after_id bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_advance_floor'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION snowflake_advance_floor(bigint) IS
'durably raises the high-water mark so that every later id of this node is greater than after_id (after a restore, pg_upgrade, pg_rewind or a promotion)';
REVOKE ALL ON FUNCTION snowflake_advance_floor(bigint) FROM PUBLIC;

-- snowflake_stats() gains columns: the view is made again over it.
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
    OUT clock_health_refusals bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_stats() IS
'counters of this node''s id generator since the server started or the last snowflake_stats_reset()';

CREATE VIEW snowflake_stats AS SELECT * FROM snowflake_stats();
COMMENT ON VIEW snowflake_stats IS
'counters of this node''s id generator, one row';
GRANT SELECT ON snowflake_stats TO PUBLIC;

-- On PostgreSQL 18, 1.0's install script commented pg_catalog.uuidv7() and
-- pg_catalog.uuidv7(interval) instead of this extension's functions (an
-- unqualified uuidv7() there names the core's). Comment ours by the schema
-- they live in, and give the core's their own descriptions back.
DO $comments$
DECLARE
    ext_schema name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                        WHERE e.extname = 'snowflake');
BEGIN
    EXECUTE format('COMMENT ON FUNCTION %I.uuidv7() IS %L', ext_schema,
        'new RFC 9562 UUID version 7: Unix milliseconds, a 12-bit sub-millisecond fraction, 62 random bits; strictly increasing within a backend');
    EXECUTE format('COMMENT ON FUNCTION %I.uuidv7(interval) IS %L', ext_schema,
        'new UUID version 7 whose timestamp is shifted by the interval');
    IF to_regprocedure('pg_catalog.uuidv7()') IS NOT NULL AND ext_schema <> 'pg_catalog' THEN
        COMMENT ON FUNCTION pg_catalog.uuidv7() IS 'generate UUID version 7';
        COMMENT ON FUNCTION pg_catalog.uuidv7(interval) IS 'generate UUID version 7 with a timestamp shifted by specified interval';
    END IF;
END
$comments$;
