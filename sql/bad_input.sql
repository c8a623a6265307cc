-- Bad input sweep: every SQL function with NULL, negative ids, 0, max bigint,
-- +-infinity timestamps and epochs, timestamps before the epoch and past the
-- 41-bit range, worker ids -1/1024, sequences -1/4096, batch sizes
-- 0/-1/1000001. Each call either returns a documented value (STRICT
-- functions return NULL for a NULL argument) or raises an error with a 22xxx
-- SQLSTATE and a message naming the bad value; it never crashes the backend
-- (test/regress.sh also checks the server log for a backend killed by a
-- signal).
--
-- Results that are ids or times are printed as comparisons, so that "true"
-- means the documented value came back.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- Runs one query and returns its single value as text, 'NULL', or the
-- SQLSTATE and message of its error.
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

CREATE TEMP TABLE calls (n serial, query text, outcome text);
INSERT INTO calls (query) VALUES
-- snowflake_nextval_batch(count integer): 1 to 1,000,000, STRICT
    ('SELECT count(*) FROM snowflake_nextval_batch(NULL)'),
    ('SELECT count(*) FROM snowflake_nextval_batch(0)'),
    ('SELECT count(*) FROM snowflake_nextval_batch(-1)'),
    ('SELECT count(*) FROM snowflake_nextval_batch(-2147483648)'),
    ('SELECT count(*) FROM snowflake_nextval_batch(1000001)'),
    ('SELECT count(*) FROM snowflake_nextval_batch(2147483647)'),
    ('SELECT count(*) FROM snowflake_nextval_batch(1)'),
    ('SELECT count(*) FROM snowflake_nextval_batch(1000000)'),
-- snowflake_timestamp(id bigint)
    ('SELECT snowflake_timestamp(NULL)'),
    ('SELECT snowflake_timestamp(-1)'),
    ('SELECT snowflake_timestamp(-9223372036854775808)'),
    ('SELECT snowflake_timestamp(0) = ''2025-01-01 00:00:00+00'''),
    ('SELECT snowflake_timestamp(9223372036854775807) = ''2094-09-07 15:47:35.551+00'''),
-- snowflake_timestamp(id bigint, epoch timestamptz)
    ('SELECT snowflake_timestamp(NULL, ''2025-01-01 00:00:00+00'')'),
    ('SELECT snowflake_timestamp(0, NULL)'),
    ('SELECT snowflake_timestamp(-1, ''2025-01-01 00:00:00+00'')'),
    ('SELECT snowflake_timestamp(-9223372036854775808, ''2025-01-01 00:00:00+00'')'),
    ('SELECT snowflake_timestamp(0, ''infinity'')'),
    ('SELECT snowflake_timestamp(0, ''-infinity'')'),
    ('SELECT snowflake_timestamp(9223372036854775807, ''infinity'')'),
    ('SELECT snowflake_timestamp(0, ''2025-01-01 00:00:00+00'') = ''2025-01-01 00:00:00+00'''),
    ('SELECT snowflake_timestamp(9223372036854775807, ''2025-01-01 00:00:00+00'') = ''2094-09-07 15:47:35.551+00'''),
    ('SELECT snowflake_timestamp(0, ''4714-11-24 00:00:00+00 BC'') = ''4714-11-24 00:00:00+00 BC'''),
    ('SELECT snowflake_timestamp(0, ''294276-12-31 23:59:59.999999+00'') = ''294276-12-31 23:59:59.999999+00'''),
    ('SELECT snowflake_timestamp(9223372036854775807, ''294200-01-01 00:00:00+00'') = timestamptz ''294200-01-01 00:00:00+00'' + 2199023255551 * interval ''1 ms'''),
    ('SELECT snowflake_timestamp(9223372036854775807, ''294276-12-31 23:59:59.999999+00'')'),
    ('SELECT snowflake_timestamp(4194304, ''294276-12-31 23:59:59.999999+00'')'),
-- snowflake_worker_id(id bigint)
    ('SELECT snowflake_worker_id(NULL)'),
    ('SELECT snowflake_worker_id(-1)'),
    ('SELECT snowflake_worker_id(-9223372036854775808)'),
    ('SELECT snowflake_worker_id(0)'),
    ('SELECT snowflake_worker_id(9223372036854775807)'),
-- snowflake_sequence(id bigint)
    ('SELECT snowflake_sequence(NULL)'),
    ('SELECT snowflake_sequence(-1)'),
    ('SELECT snowflake_sequence(-9223372036854775808)'),
    ('SELECT snowflake_sequence(0)'),
    ('SELECT snowflake_sequence(9223372036854775807)'),
-- snowflake_decode(id bigint)
    ('SELECT snowflake_decode(NULL)'),
    ('SELECT snowflake_decode(-1)'),
    ('SELECT snowflake_decode(-9223372036854775808)'),
    ('SELECT snowflake_decode(0) = (''2025-01-01 00:00:00+00''::timestamptz, 0, 0)'),
    ('SELECT snowflake_decode(9223372036854775807) = (''2094-09-07 15:47:35.551+00''::timestamptz, 1023, 4095)'),
-- snowflake_decode(id bigint, epoch timestamptz)
    ('SELECT snowflake_decode(NULL, ''2025-01-01 00:00:00+00'')'),
    ('SELECT snowflake_decode(0, NULL)'),
    ('SELECT snowflake_decode(-1, ''2025-01-01 00:00:00+00'')'),
    ('SELECT snowflake_decode(0, ''infinity'')'),
    ('SELECT snowflake_decode(0, ''-infinity'')'),
    ('SELECT snowflake_decode(9223372036854775807, ''294276-12-31 23:59:59.999999+00'')'),
    ('SELECT snowflake_decode(0, ''2025-01-01 00:00:00+00'') = (''2025-01-01 00:00:00+00''::timestamptz, 0, 0)'),
    ('SELECT snowflake_decode(9223372036854775807, ''2010-11-04 01:42:54.657+00'') = (timestamptz ''2010-11-04 01:42:54.657+00'' + 2199023255551 * interval ''1 ms'', 1023, 4095)'),
-- snowflake_from_timestamp(ts timestamptz)
    ('SELECT snowflake_from_timestamp(NULL)'),
    ('SELECT snowflake_from_timestamp(''infinity'')'),
    ('SELECT snowflake_from_timestamp(''-infinity'')'),
    ('SELECT snowflake_from_timestamp(''4714-11-24 00:00:00+00 BC'')'),
    ('SELECT snowflake_from_timestamp(''1970-01-01 00:00:00+00'')'),
    ('SELECT snowflake_from_timestamp(''2024-12-31 23:59:59.999+00'')'),
    ('SELECT snowflake_from_timestamp(''2024-12-31 23:59:59.999999+00'')'),
    ('SELECT snowflake_from_timestamp(''2025-01-01 00:00:00+00'')'),
    ('SELECT snowflake_from_timestamp(''2025-01-01 00:00:00.000999+00'')'),
    ('SELECT snowflake_from_timestamp(''2094-09-07 15:47:35.551999+00'') = 2199023255551 << 22'),
    ('SELECT snowflake_from_timestamp(''2094-09-07 15:47:35.552+00'')'),
    ('SELECT snowflake_from_timestamp(''294276-12-31 23:59:59.999999+00'')'),
-- snowflake_compose(ts timestamptz, worker_id integer, sequence integer)
    ('SELECT snowflake_compose(NULL, 0, 0)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', NULL, 0)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 0, NULL)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 0, 0)'),
    ('SELECT snowflake_compose(''2094-09-07 15:47:35.551+00'', 1023, 4095) = 9223372036854775807'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', -1, 0)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 1024, 0)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', -2147483648, 0)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 2147483647, 0)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 0, -1)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 0, 4096)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 0, -2147483648)'),
    ('SELECT snowflake_compose(''2025-01-01 00:00:00+00'', 0, 2147483647)'),
    ('SELECT snowflake_compose(''infinity'', 0, 0)'),
    ('SELECT snowflake_compose(''-infinity'', 0, 0)'),
    ('SELECT snowflake_compose(''2024-12-31 23:59:59.999+00'', 0, 0)'),
    ('SELECT snowflake_compose(''2094-09-07 15:47:35.552+00'', 0, 0)'),
    ('SELECT snowflake_compose(''294276-12-31 23:59:59.999999+00'', 1023, 4095)'),
    ('SELECT snowflake_compose(''-infinity'', -1, -1)'),
-- functions without arguments still answer after all of the above
    ('SELECT snowflake_worker_id(snowflake_nextval())'),
    ('SELECT worker_id FROM snowflake_stats()'),
    ('SELECT count(*) FROM snowflake_stats');

UPDATE calls SET outcome = pg_temp.outcome(query);

SELECT query, outcome FROM calls ORDER BY n;

-- Every error is a data exception (SQLSTATE class 22).
SELECT count(*) FILTER (WHERE outcome LIKE 'ERROR %') AS errors,
       count(*) FILTER (WHERE outcome LIKE 'ERROR 22%') AS data_exceptions,
       count(*) FILTER (WHERE outcome = 'NULL') AS nulls,
       count(*) FILTER (WHERE outcome NOT LIKE 'ERROR %' AND outcome <> 'NULL') AS values
FROM calls;

-- The errors as a client sees them, message, detail and hint.
\set SHOW_CONTEXT never
SELECT snowflake_timestamp(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_timestamp(0, 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_from_timestamp('2024-12-31 23:59:59.999+00');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_compose('2025-01-01 00:00:00+00', 0, 4096);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_nextval_batch(1000001);
\echo :LAST_ERROR_SQLSTATE

-- A sweep over every bit: 0, 2^k - 1, 2^k, 2^k + 1 for k = 0..62, max
-- bigint, and their negatives (-2^63 included). Non-negative ids decode;
-- negative ones are 22023 errors. Counted per function and outcome.
CREATE TEMP TABLE sweep_ids AS
SELECT DISTINCT id FROM (
    SELECT 0::bigint AS id
    UNION ALL SELECT 9223372036854775807
    UNION ALL SELECT -9223372036854775807 - 1
    UNION ALL SELECT (1::bigint << k) + d FROM generate_series(0, 62) AS k, (VALUES (-1), (0), (1)) AS v(d)
) s
UNION
SELECT -id FROM (
    SELECT 9223372036854775807 AS id
    UNION ALL SELECT (1::bigint << k) + d FROM generate_series(0, 62) AS k, (VALUES (-1), (0), (1)) AS v(d)
) s;

SELECT count(*) FILTER (WHERE id >= 0) AS nonnegative, count(*) FILTER (WHERE id < 0) AS negative
FROM sweep_ids;

SELECT f AS function,
       id >= 0 AS valid_id,
       CASE WHEN o LIKE 'ERROR %' THEN substr(o, 1, 11) ELSE 'value' END AS outcome,
       count(*)
FROM sweep_ids,
     unnest(ARRAY['snowflake_timestamp(%s)',
                  'snowflake_timestamp(%s, ''2010-11-04 01:42:54.657+00'')',
                  'snowflake_worker_id(%s)',
                  'snowflake_sequence(%s)',
                  'snowflake_decode(%s)',
                  'snowflake_decode(%s, ''2010-11-04 01:42:54.657+00'')']) AS f,
     LATERAL pg_temp.outcome(format('SELECT ' || f, id)) AS o
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3;

-- The fields of every non-negative id round trip through snowflake_compose.
SELECT count(*) AS ids,
       bool_and(snowflake_compose(snowflake_timestamp(id), snowflake_worker_id(id), snowflake_sequence(id)) = id) AS round_trip
FROM sweep_ids
WHERE id >= 0;
