-- Ids of any layout (issue 31, extension 1.3): snowflake_decode_as,
-- snowflake_compose_as and snowflake_from_timestamp_as under a profile or a
-- layout written as text, with the profile's own epoch or the one given, and
-- snowflake_layouts(). Published ids of the systems whose ids the profiles
-- read, every refusal with its SQLSTATE, and the calls of the older decoders,
-- which must resolve to the functions they resolved to before 1.3.
--
-- Runs preloaded and without preload (the epochs differ: the twitter
-- comparisons take snowflake.epoch from the setting).

SET client_min_messages = error;  -- no preload warning in the run without preload
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- The profiles.
SELECT name, layout, id_bits, workers, ids_per_unit, unit_ms, lifetime_years, epoch, lifetime_end
FROM snowflake_layouts();
SELECT name, note FROM snowflake_layouts();

-- Discord's documentation decodes 175928847299117063: 2016-04-30
-- 11:18:25.796 UTC, internal worker 1, internal process 0 (our worker id
-- 1 * 32 + 0), increment 7, under Discord's epoch 2015-01-01.
SELECT * FROM snowflake_decode_as(175928847299117063, 'discord');
SELECT worker_id / 32 AS internal_worker, worker_id % 32 AS internal_process
FROM snowflake_decode_as(175928847299117063, 'discord');
SELECT snowflake_compose_as('2016-04-30 11:18:25.796+00', 32, 7, 'discord') = 175928847299117063 AS composes,
       snowflake_from_timestamp_as('2016-04-30 11:18:25.796+00', 'discord')
         = 175928847299117063 - 32 * 4096 - 7 AS first_id_of_its_ms,
       (snowflake_decode_as(175928847299117063, 'discord', '2015-01-01 00:00:00+00')).ts
         = '2016-04-30 11:18:25.796+00' AS explicit_epoch_agrees;
-- Our 41 bits end where Discord's 42-bit field first sets its top bit.
SELECT ts FROM snowflake_decode_as(9223372036854775807, 'discord');

-- sonyflake: 39 bits of 10 ms units, then an 8-bit sequence, then a 16-bit
-- machine id (lowest); its default start time 2014-09-01 00:00:00 UTC. No
-- published id with its decoded parts was found; these are worked by hand:
-- (1 << 24) | 1 is the first 10 ms unit's id of machine 1, and
-- (3 << 24) | (5 << 16) | x'1234' is unit 3, sequence 5, machine 4660.
SELECT * FROM snowflake_decode_as(16777217, 'sonyflake');
SELECT * FROM snowflake_decode_as(50663988, 'sonyflake');
-- Composed at a time inside a unit: floored to its 10 ms, the bits as
-- sonyflake's NextID() packs them.
SELECT id = ((floor(extract(epoch FROM ts - start) * 100)::bigint << 24) | (5 << 16) | 4660) AS sonyflake_bits,
       (snowflake_decode_as(id, 'sonyflake')).ts AS decoded_ts,
       (snowflake_decode_as(id, 'sonyflake')).worker_id AS machine,
       (snowflake_decode_as(id, 'sonyflake')).sequence,
       snowflake_from_timestamp_as(ts, 'sonyflake') = id - (5 << 16) - 4660 AS first_id_of_its_unit
FROM (SELECT timestamptz '2024-06-01 12:34:56.789+00' AS ts, timestamptz '2014-09-01 00:00:00+00' AS start) AS t,
     LATERAL (SELECT snowflake_compose_as(t.ts, 4660, 5, 'sonyflake') AS id) AS c;
-- Its lifetime: 2^39 units of 10 ms, 174 years.
SELECT ts AS last_unit FROM snowflake_decode_as(9223372036854775807, 'sonyflake');

-- Instagram: (ms - 1314220021721) << 23 | shard << 10 | sequence, as its
-- PL/pgSQL next_id() builds them.
SELECT snowflake_compose_as(t.at, 5, 905, 'instagram')
         = (((extract(epoch FROM t.at) * 1000)::bigint - 1314220021721) << 23) | (5 << 10) | 905 AS instagram_bits,
       d.ts = t.at AND d.worker_id = 5 AND d.sequence = 905 AS decodes
FROM (SELECT timestamptz '2013-12-17 06:50:00.123+00' AS at) AS t,
     LATERAL snowflake_decode_as(snowflake_compose_as(t.at, 5, 905, 'instagram'), 'instagram') AS d;

-- js-safe: every id below 2^53, so that a double holds it exactly.
SELECT id = 9007199254740991 AS last_id_is_2_53_minus_1,
       id::float8::bigint = id AS a_double_holds_it,
       (snowflake_decode_as(id, 'js-safe', '2025-01-01 00:00:00+00')).*
FROM (SELECT snowflake_compose_as('2025-01-01 00:00:00+00'::timestamptz + 2199023255551 * interval '1 ms',
                                  63, 63, 'js-safe', '2025-01-01 00:00:00+00') AS id) AS t;
SELECT max(id) < 2 ^ 53 AS all_below_2_53, count(*)
FROM (SELECT snowflake_compose_as('2025-01-01 00:00:00+00'::timestamptz + n * interval '1 year', 63, 63, 'js-safe',
                                  '2025-01-01 00:00:00+00') AS id
      FROM generate_series(0, 69) AS n) AS t;

-- twitter: the same ids and fields as the functions of the node's layout,
-- by name and written out.
CREATE TEMP TABLE twitter_cases AS
SELECT current_setting('snowflake.epoch')::timestamptz AS epoch, ts, w, s
FROM (VALUES (0, 0, 0), (1, 1, 1), (1234567890123, 42, 7), (2199023255551, 1023, 4095)) AS v(ms, w, s),
     LATERAL (SELECT current_setting('snowflake.epoch')::timestamptz + v.ms * interval '1 ms' AS ts) AS t;
SELECT count(*) AS cases,
       bool_and(snowflake_compose_as(ts, w, s, 'twitter', epoch) = snowflake_compose(ts, w, s)) AS compose,
       bool_and(snowflake_compose_as(ts, w, s, 'time 41, worker 10, sequence 12', epoch)
                = snowflake_compose(ts, w, s)) AS compose_written,
       bool_and(snowflake_from_timestamp_as(ts, 'twitter', epoch) = snowflake_from_timestamp(ts)) AS from_timestamp,
       bool_and((SELECT row(a.*) FROM snowflake_decode_as(snowflake_compose(ts, w, s), 'twitter', epoch) AS a)
                = (SELECT row(b.*) FROM snowflake_decode(snowflake_compose(ts, w, s), epoch) AS b)) AS decode
FROM twitter_cases;

-- A layout written as text: any order, spaces, a unit.
SELECT * FROM snowflake_decode_as(
    snowflake_compose_as('2030-01-01 00:00:00.123+00', 8191, 4095, ' time 38 ,worker 13, sequence 12, unit 10ms',
                         '2025-01-01 00:00:00+00'),
    'time 38, worker 13, sequence 12, unit 10ms', '2025-01-01 00:00:00+00');
SELECT snowflake_compose_as('2025-01-01 00:00:00.005+00', 3, 1, 'worker 4, time 30, sequence 2',
                            '2025-01-01 00:00:00+00') = (3::bigint << 32) | (5 << 2) | 1 AS worker_on_top;

-- STRICT: NULL in, NULL out.
SELECT snowflake_compose_as(NULL, 0, 0, 'discord') IS NULL AS compose_null,
       snowflake_from_timestamp_as('2020-01-01+00', NULL) IS NULL AS layout_null,
       (snowflake_decode_as(1, 'twitter', NULL)).ts IS NULL AS epoch_null;

-- Refusals: the message, its detail and its hint.
SELECT * FROM snowflake_decode_as(1, 'time 42, worker 10, sequence 12', '2025-01-01+00');
SELECT * FROM snowflake_decode_as(1, 'Discord');
SELECT * FROM snowflake_decode_as(1, 'twitter');
SELECT snowflake_compose_as('2020-01-01+00', 0, 0, 'js-safe');
SELECT * FROM snowflake_decode_as(9007199254740992, 'js-safe', '2025-01-01+00');
SELECT snowflake_compose_as('2020-01-01+00', 64, 0, 'js-safe', '2020-01-01+00');
SELECT snowflake_compose_as('2020-01-01+00', 0, 256, 'sonyflake');
SELECT snowflake_compose_as('2014-08-31 23:59:59.999+00', 0, 0, 'sonyflake');
SELECT snowflake_from_timestamp_as('2025-01-01+00', 'worker 4, time 30, sequence 2', '2025-01-01+00');

-- Every refusal's SQLSTATE.
CREATE FUNCTION pg_temp.outcome(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    result text;
    state text;
    message text;
BEGIN
    EXECUTE query INTO result;
    RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
    RETURN 'ERROR ' || state || ': ' || message;
END
$$;
SELECT query, pg_temp.outcome(query) FROM (VALUES
    ($$SELECT snowflake_decode_as(1, '')$$),
    ($$SELECT snowflake_decode_as(1, 'time 41, worker 10')$$),
    ($$SELECT snowflake_decode_as(1, 'time 41, worker 17, sequence 5', '2025-01-01+00')$$),
    ($$SELECT snowflake_decode_as(1, 'time 41, worker 10, sequence 12, unit 0ms', '2025-01-01+00')$$),
    ($$SELECT snowflake_decode_as(1, 'time 41 worker 10 sequence 12', '2025-01-01+00')$$),
    ($$SELECT snowflake_decode_as(1, 'time 41, worker 10, sequence 12')$$),
    ($$SELECT snowflake_decode_as(-1, 'discord')$$),
    ($$SELECT snowflake_decode_as(-9223372036854775808, 'twitter', '2025-01-01+00')$$),
    ($$SELECT snowflake_decode_as(1, 'discord', 'infinity')$$),
    ($$SELECT snowflake_decode_as(9223372036854775807, 'discord', '294270-01-01+00')$$),
    ($$SELECT snowflake_decode_as(9223372036854775807, 'time 62, worker 1, sequence 0', '2025-01-01+00')$$),
    ($$SELECT snowflake_decode_as(9223372036854775807, 'time 61, worker 1, sequence 1', '2025-01-01+00')$$),
    ($$SELECT snowflake_decode_as(9223372036854775807, 'time 61, worker 1, sequence 1, unit 1000ms', '2025-01-01+00')$$),
    ($$SELECT snowflake_compose_as('infinity', 0, 0, 'discord')$$),
    ($$SELECT snowflake_compose_as('2016-01-01+00', -1, 0, 'discord')$$),
    ($$SELECT snowflake_compose_as('2016-01-01+00', 1024, 0, 'discord')$$),
    ($$SELECT snowflake_compose_as('2016-01-01+00', 0, -1, 'discord')$$),
    ($$SELECT snowflake_compose_as('2016-01-01+00', 0, 4096, 'discord')$$),
    ($$SELECT snowflake_compose_as('2016-01-01+00', 65535, 255, 'sonyflake') > 0$$),
    ($$SELECT snowflake_compose_as('2016-01-01+00', 65536, 0, 'sonyflake')$$),
    ($$SELECT snowflake_compose_as('2014-12-31 23:59:59.999+00', 0, 0, 'discord')$$),
    ($$SELECT snowflake_compose_as('2084-09-06 15:47:35.552+00', 0, 0, 'discord')$$),
    ($$SELECT snowflake_compose_as('2084-09-06 15:47:35.551+00', 0, 0, 'discord') > 0$$),
    ($$SELECT snowflake_compose_as('2046-06-27 17:00:49.496+00', 0, 0, 'instagram') > 0$$),
    ($$SELECT snowflake_compose_as('2046-06-27 17:00:49.497+00', 0, 0, 'instagram')$$),
    ($$SELECT snowflake_compose_as('2020-01-01+00', 0, 0, 'twitter', '-infinity')$$),
    ($$SELECT snowflake_from_timestamp_as('2020-01-01+00', 'twitter')$$),
    ($$SELECT snowflake_from_timestamp_as('-infinity', 'discord')$$),
    ($$SELECT snowflake_from_timestamp_as('2020-01-01+00', 'sequence 4, worker 4, time 30', '2020-01-01+00')$$),
    ($$SELECT snowflake_from_timestamp_as('2020-01-01+00', 'time 30, worker, sequence 4', '2020-01-01+00')$$)
) AS q(query);

-- The calls of the older functions resolve as before 1.3: an untyped
-- literal in the epoch's or the timestamp's place still goes to the
-- timestamptz forms (the new functions have names of their own). A view
-- records the functions its calls resolved to.
CREATE TEMP TABLE ids AS SELECT 175928847299117063::bigint AS id;
CREATE TEMP VIEW old_calls AS
SELECT (snowflake_decode(id, '2015-01-01+00')).ts AS d2,
       snowflake_timestamp(id, '2015-01-01+00') AS t2,
       (snowflake_decode(id)).worker_id AS d1,
       snowflake_timestamp(id) AS t1,
       snowflake_worker_id(id) AS w,
       snowflake_sequence(id) AS s,
       snowflake_compose('2025-06-01+00', 1, 2) AS c,
       snowflake_from_timestamp('2025-06-01+00') AS f,
       snowflake_encode(id, 'base62') AS e,
       snowflake_decode_text('0000000000001', 'base32') AS dt
FROM ids;
SELECT DISTINCT d.refobjid::regprocedure::text AS resolved_to
FROM pg_depend AS d
JOIN pg_rewrite AS r ON r.oid = d.objid AND d.classid = 'pg_rewrite'::regclass
WHERE r.ev_class = 'old_calls'::regclass AND d.refclassid = 'pg_proc'::regclass
ORDER BY 1;
SELECT d2 = '2016-04-30 11:18:25.796+00' AS decode_with_epoch_literal,
       t2 = '2016-04-30 11:18:25.796+00' AS timestamp_with_epoch_literal
FROM old_calls;
-- Each older name still has exactly its overloads of before.
SELECT p.oid::regprocedure::text AS signature
FROM pg_proc AS p
WHERE p.proname IN ('snowflake_decode', 'snowflake_timestamp', 'snowflake_compose', 'snowflake_from_timestamp',
                    'snowflake_worker_id', 'snowflake_sequence')
ORDER BY 1;
