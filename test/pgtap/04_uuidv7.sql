-- The UUIDv7 functions: catalog entries as snowflake--1.0.sql declares them
-- (signatures, argument names, return types, volatility, strictness,
-- parallel safety, comments) and the exact SQLSTATE and message of every
-- error. Properties of the values are in sql/uuidv7.sql; several backends at
-- once in test/uuid_backends.sh.
BEGIN;
SELECT plan(52);
SET LOCAL timezone = 'UTC';
SET LOCAL datestyle = 'ISO, YMD';

-- Signatures.
SELECT has_function('public', 'uuidv7', ARRAY[]::name[], 'uuidv7()');
SELECT has_function('public', 'uuidv7', ARRAY['interval'], 'uuidv7(interval)');
SELECT has_function('public', 'uuidv7_timestamp', ARRAY['uuid'], 'uuidv7_timestamp(uuid)');
SELECT has_function('public', 'uuidv7_from_timestamp', ARRAY['timestamp with time zone'], 'uuidv7_from_timestamp(timestamptz)');
SELECT is((SELECT count(*)::int FROM pg_proc p
           WHERE p.proname LIKE 'uuidv7%' AND p.pronamespace = 'public'::regnamespace),
          6, 'six uuidv7* functions (uuidv7_typeid: test/pgtap/06_text_ids.sql)');

-- Argument names (callers may use named notation).
SELECT results_eq($$
    SELECT p.proname::text COLLATE "default", pg_get_function_arguments(p.oid)
    FROM pg_proc p
    WHERE p.proname LIKE 'uuidv7%'
      AND p.pronamespace = 'public'::regnamespace
    ORDER BY p.proname, p.pronargs
$$, $$ VALUES
    ('uuidv7', ''),
    ('uuidv7', 'shift interval'),
    ('uuidv7_at', 'ts timestamp with time zone'),
    ('uuidv7_from_timestamp', 'ts timestamp with time zone'),
    ('uuidv7_timestamp', 'u uuid'),
    ('uuidv7_typeid', 'prefix text')
$$, 'argument names of the uuidv7* functions');

-- Return types.
SELECT function_returns('public', 'uuidv7', ARRAY[]::name[], 'uuid');
SELECT function_returns('public', 'uuidv7', ARRAY['interval'], 'uuid');
SELECT function_returns('public', 'uuidv7_timestamp', ARRAY['uuid'], 'timestamp with time zone');
SELECT function_returns('public', 'uuidv7_from_timestamp', ARRAY['timestamp with time zone'], 'uuid');
SELECT function_returns('public', 'uuidv7_at', ARRAY['timestamp with time zone'], 'uuid');

-- Generators VOLATILE; the decoder and the constructor depend only on their
-- argument: IMMUTABLE.
SELECT volatility_is('public', 'uuidv7', ARRAY[]::name[], 'volatile');
SELECT volatility_is('public', 'uuidv7', ARRAY['interval'], 'volatile');
SELECT volatility_is('public', 'uuidv7_at', ARRAY['timestamp with time zone'], 'volatile');
SELECT volatility_is('public', 'uuidv7_timestamp', ARRAY['uuid'], 'immutable');
SELECT volatility_is('public', 'uuidv7_from_timestamp', ARRAY['timestamp with time zone'], 'immutable');

-- Everything with an argument is STRICT.
SELECT isnt_strict('public', 'uuidv7', ARRAY[]::name[]);
SELECT is_strict('public', 'uuidv7', ARRAY['interval']);
SELECT is_strict('public', 'uuidv7_at', ARRAY['timestamp with time zone']);
SELECT is_strict('public', 'uuidv7_timestamp', ARRAY['uuid']);
SELECT is_strict('public', 'uuidv7_from_timestamp', ARRAY['timestamp with time zone']);

-- All of them are PARALLEL SAFE (no shared state).
SELECT is_empty($$
    SELECT p.oid::regprocedure::text, p.proparallel
    FROM pg_proc p
    WHERE p.oid IN ('uuidv7()'::regprocedure,
                    'uuidv7(interval)'::regprocedure,
                    'uuidv7_timestamp(uuid)'::regprocedure,
                    'uuidv7_from_timestamp(timestamptz)'::regprocedure,
                    'uuidv7_at(timestamptz)'::regprocedure)
      AND p.proparallel <> 's'
$$, 'the uuidv7* functions are PARALLEL SAFE');

-- Comments.
SELECT ok(coalesce(obj_description('uuidv7()'::regprocedure, 'pg_proc'), '') LIKE '%RFC 9562%version 7%',
          'uuidv7() has a COMMENT naming RFC 9562 version 7');
SELECT isnt(coalesce(obj_description('uuidv7(interval)'::regprocedure, 'pg_proc'), ''), '',
            'uuidv7(interval) has a COMMENT');
SELECT isnt(coalesce(obj_description('uuidv7_timestamp(uuid)'::regprocedure, 'pg_proc'), ''), '',
            'uuidv7_timestamp(uuid) has a COMMENT');
SELECT isnt(coalesce(obj_description('uuidv7_from_timestamp(timestamptz)'::regprocedure, 'pg_proc'), ''), '',
            'uuidv7_from_timestamp(timestamptz) has a COMMENT');
SELECT isnt(coalesce(obj_description('uuidv7_at(timestamptz)'::regprocedure, 'pg_proc'), ''), '',
            'uuidv7_at(timestamptz) has a COMMENT');

-- A few values (the rest is in sql/uuidv7.sql).
SELECT is(uuidv7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'), '2022-02-22 19:22:22+00',
          'RFC 9562 appendix A.6 example decodes to 2022-02-22 19:22:22+00');
SELECT is(uuidv7_timestamp(gen_random_uuid()), NULL, 'uuidv7_timestamp of a version-4 UUID is NULL');
SELECT is(uuidv7_timestamp('00000000-0000-0000-0000-000000000000'), NULL, 'uuidv7_timestamp of the nil UUID is NULL');
SELECT is(uuidv7(shift => NULL), NULL, 'uuidv7(shift => NULL) is NULL');
SELECT is(substr(u::text, 15, 1) || (get_byte(uuid_send(u), 8) >> 6)::text, '72',
          'uuidv7(): version 7, variant 0b10')
FROM (SELECT uuidv7() AS u) s;

-- Errors of uuidv7(interval): the shifted time before 1970 or past the 48-bit
-- range (the message names the shifted current time), or past the range of
-- timestamptz (PostgreSQL's own error from timestamptz + interval).
-- (-100 years rather than -60: the latter stops being before 1970 in 2030.)
SELECT throws_ok($$SELECT uuidv7('-100 years')$$, '22008', NULL, 'uuidv7(-100 years): 22008');
SELECT throws_like($$SELECT uuidv7('-100 years')$$, 'shifted timestamp 19__-__-__ __:__:__% is out of range for UUIDv7',
                   'uuidv7(-100 years): the message names the shifted time');
SELECT throws_ok($$SELECT uuidv7('9000 years')$$, '22008', NULL, 'uuidv7(9000 years): 22008');
SELECT throws_like($$SELECT uuidv7('9000 years')$$, 'shifted timestamp 1____-__-__ __:__:__% is out of range for UUIDv7',
                   'uuidv7(9000 years): the message names the shifted time');
SELECT throws_ok($$SELECT uuidv7('300000 years')$$, '22008', 'timestamp out of range', 'uuidv7(300000 years)');
SELECT throws_ok($$SELECT uuidv7('-300000 years')$$, '22008', 'timestamp out of range', 'uuidv7(-300000 years)');

-- Errors of uuidv7_at: not finite, past 2^48 - 1 ms (the rest in sql/uuidv7.sql).
SELECT throws_ok($$SELECT uuidv7_at('infinity')$$, '22008', 'timestamp infinity is out of range for UUIDv7',
                 'uuidv7_at(infinity)');
SELECT throws_ok($$SELECT uuidv7_at('10889-08-02 05:31:50.656+00')$$, '22008',
                 'timestamp 10889-08-02 05:31:50.656+00 is out of range for UUIDv7', 'uuidv7_at past 2^48 - 1 ms');
-- Errors of uuidv7_from_timestamp: not finite, before 1970, past 2^48 - 1 ms.
SELECT throws_ok($$SELECT uuidv7_from_timestamp('infinity')$$, '22008', 'timestamp must be finite',
                 'uuidv7_from_timestamp(infinity)');
SELECT throws_ok($$SELECT uuidv7_from_timestamp('-infinity')$$, '22008', 'timestamp must be finite',
                 'uuidv7_from_timestamp(-infinity)');
SELECT throws_ok($$SELECT uuidv7_from_timestamp('1969-12-31 23:59:59.999+00')$$, '22008',
                 'timestamp 1969-12-31 23:59:59.999+00 is out of range for UUIDv7', 'the last ms before 1970');
SELECT throws_ok($$SELECT uuidv7_from_timestamp('1969-12-31 23:59:59.999999+00')$$, '22008',
                 'timestamp 1969-12-31 23:59:59.999999+00 is out of range for UUIDv7', 'the last microsecond before 1970');
SELECT throws_ok($$SELECT uuidv7_from_timestamp('10889-08-02 05:31:50.656+00')$$, '22008',
                 'timestamp 10889-08-02 05:31:50.656+00 is out of range for UUIDv7', 'the first ms past 2^48 - 1 ms');
SELECT throws_ok($$SELECT uuidv7_from_timestamp('10900-01-01 00:00:00+00')$$, '22008',
                 'timestamp 10900-01-01 00:00:00+00 is out of range for UUIDv7', 'the year 10900');

-- ... and the ends of the range.
SELECT is(uuidv7_from_timestamp('1970-01-01 00:00:00+00'), '00000000-0000-7000-8000-000000000000',
          'uuidv7_from_timestamp(1970-01-01): millisecond 0');
SELECT is(uuidv7_from_timestamp('10889-08-02 05:31:50.655+00'), 'ffffffff-ffff-7000-8000-000000000000',
          'uuidv7_from_timestamp(10889-08-02 05:31:50.655): millisecond 2^48 - 1');
SELECT is(uuidv7_from_timestamp('10889-08-02 05:31:50.655999+00'), 'ffffffff-ffff-7000-8000-000000000000',
          'the last microsecond of millisecond 2^48 - 1');
SELECT is(uuidv7_timestamp('ffffffff-ffff-7fff-bfff-ffffffffffff'), '10889-08-02 05:31:50.655+00',
          'uuidv7_timestamp of the largest version-7 UUID');

-- NULL in, NULL out (STRICT), never an error.
SELECT is(uuidv7_from_timestamp(NULL), NULL, 'uuidv7_from_timestamp(NULL) is NULL');
SELECT is(uuidv7_timestamp(NULL), NULL, 'uuidv7_timestamp(NULL) is NULL');

SELECT * FROM finish();
ROLLBACK;
