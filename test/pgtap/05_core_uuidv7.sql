-- PostgreSQL 18 has its own pg_catalog.uuidv7() and uuidv7(interval). What a
-- user gets there (README, "UUIDv7 on PostgreSQL 18"): an unqualified
-- uuidv7() is the core's (pg_catalog comes first on the search path); this
-- extension's is public.uuidv7() (the schema it was installed in), or the
-- unqualified name with the extension's schema before pg_catalog on the
-- search path. Both make valid version-7 UUIDs whose timestamps
-- uuidv7_timestamp() decodes, and both shift by the same interval.
-- Before PostgreSQL 18 every test here is skipped. The core's functions are
-- called through EXECUTE, so this file also parses where they do not exist.
BEGIN;
SELECT plan(11);
SET LOCAL timezone = 'UTC';
-- PostgreSQL's default search path (test instances put pg_catalog last).
SET LOCAL search_path = "$user", public;

CREATE FUNCTION pg_temp.core_uuidv7(shift interval DEFAULT NULL) RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE u uuid;
BEGIN
    IF shift IS NULL THEN
        EXECUTE 'SELECT pg_catalog.uuidv7()' INTO u;
    ELSE
        EXECUTE 'SELECT pg_catalog.uuidv7($1)' INTO u USING shift;
    END IF;
    RETURN u;
END $$;

CREATE FUNCTION pg_temp.core_extract(u uuid) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE t timestamptz;
BEGIN
    EXECUTE 'SELECT pg_catalog.uuid_extract_timestamp($1)' INTO t USING u;
    RETURN t;
END $$;

CREATE FUNCTION pg_temp.is_v7(u uuid) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT substr(u::text, 15, 1) = '7' AND substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')
$$;

-- Within 5 seconds of the time t (clocks of one machine, one statement).
CREATE FUNCTION pg_temp.near(a timestamptz, t timestamptz) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT abs(extract(epoch FROM a - t)) < 5
$$;

SELECT CASE WHEN current_setting('server_version_num')::int < 180000 THEN
    skip('PostgreSQL ' || current_setting('server_version') || ' has no core uuidv7()', 10)
ELSE collect_tap(ARRAY[
    ok(to_regprocedure('pg_catalog.uuidv7()') IS NOT NULL
       AND to_regprocedure('pg_catalog.uuidv7(interval)') IS NOT NULL,
       'PostgreSQL 18 has pg_catalog.uuidv7() and uuidv7(interval)'),
    is(to_regprocedure('uuidv7()'), to_regprocedure('pg_catalog.uuidv7()'),
       'an unqualified uuidv7() is the core''s'),
    is(to_regprocedure('uuidv7(interval)'), to_regprocedure('pg_catalog.uuidv7(interval)'),
       'an unqualified uuidv7(interval) is the core''s'),
    ok(to_regprocedure('public.uuidv7()') <> to_regprocedure('pg_catalog.uuidv7()'),
       'the extension''s is public.uuidv7()'),
    ok(pg_temp.is_v7(public.uuidv7()) AND pg_temp.is_v7(pg_temp.core_uuidv7()),
       'both make version-7, variant-10 UUIDs'),
    ok(pg_temp.near(uuidv7_timestamp(public.uuidv7()), clock_timestamp()),
       'uuidv7_timestamp() decodes the extension''s UUID to the current time'),
    ok(pg_temp.near(uuidv7_timestamp(pg_temp.core_uuidv7()), clock_timestamp()),
       'uuidv7_timestamp() decodes the core''s UUID to the current time'),
    ok((SELECT uuidv7_timestamp(u) = date_trunc('milliseconds', pg_temp.core_extract(u))
        FROM (SELECT public.uuidv7() AS u) s),
       'the core''s uuid_extract_timestamp() agrees with uuidv7_timestamp() on the extension''s UUID'),
    ok(pg_temp.near(uuidv7_timestamp(public.uuidv7('1 day')), clock_timestamp() + interval '1 day')
       AND pg_temp.near(uuidv7_timestamp(pg_temp.core_uuidv7('1 day')), clock_timestamp() + interval '1 day'),
       'uuidv7(''1 day'') of both is a day ahead'),
    ok(pg_temp.near(uuidv7_timestamp(public.uuidv7('-1 hour')),
                    uuidv7_timestamp(pg_temp.core_uuidv7('-1 hour'))),
       'uuidv7(''-1 hour'') of both agree on the shift')
]) END;

-- With the extension's schema first on the search path, the unqualified name is ours.
SET LOCAL search_path = public, pg_catalog;
SELECT CASE WHEN current_setting('server_version_num')::int < 180000 THEN
    skip('PostgreSQL ' || current_setting('server_version') || ' has no core uuidv7()', 1)
ELSE
    is(to_regprocedure('uuidv7()'), to_regprocedure('public.uuidv7()'),
       'with search_path = public, pg_catalog an unqualified uuidv7() is the extension''s')
END;

SELECT * FROM finish();
ROLLBACK;
