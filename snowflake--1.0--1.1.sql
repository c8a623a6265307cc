-- snowflake 1.0 -> 1.1 (ALTER EXTENSION snowflake UPDATE TO '1.1').
--
-- Every object that snowflake--1.1.sql adds or changes compared with
-- snowflake--1.0.sql is added or changed here too: test/upgrade.sh installs
-- 1.0, updates it, and fails on any difference from a fresh 1.1 install
-- (functions, signatures, volatility, strictness, parallel safety, views,
-- comments, grants).

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

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
