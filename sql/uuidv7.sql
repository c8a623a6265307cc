-- UUID version 7 (RFC 9562): uuidv7(), uuidv7(interval), uuidv7_timestamp(uuid),
-- uuidv7_from_timestamp(timestamptz) and uuidv7_at(timestamptz).
--
-- None of them needs shared state, so test/regress.sh runs this file twice:
-- with snowflake preloaded and without shared_preload_libraries (the output
-- must be the same). Fresh UUIDs and times are never printed: the queries
-- print properties (counts, comparisons). Only values that follow from
-- constant input (uuidv7_from_timestamp of a fixed time) are printed.
--
-- Layout (src/core/uuid.hpp): bytes 0-5 Unix milliseconds, byte 6 version 7
-- and the top of a 12-bit sub-millisecond fraction, byte 7 the rest of it,
-- byte 8 variant 0b10 and 6 random bits, bytes 9-15 random (rand_b: 62 bits).
-- uuid comparison is bytewise (memcmp), which is RFC order.

SET client_min_messages = error;  -- no preload warning in the run without preload
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- Runs one query and returns its single value as text, 'NULL', or the
-- SQLSTATE, message and hint of its error. With mask_time, timestamps in
-- the message are replaced by <timestamp> (uuidv7(interval) names the shifted
-- current time, which changes from run to run).
CREATE FUNCTION pg_temp.outcome(query text, mask_time boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    result text;
    state text;
    message text;
    hint text;
BEGIN
    EXECUTE query INTO result;
    RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
    IF mask_time THEN
        message := regexp_replace(message, '\d{4,}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00( BC)?', '<timestamp>', 'g');
    END IF;
    RETURN 'ERROR ' || state || ': ' || message || CASE WHEN hint <> '' THEN ' (HINT: ' || hint || ')' ELSE '' END;
END
$$;

-- The 8 bytes of rand_b (last 8 bytes, the 2 variant bits cleared).
CREATE FUNCTION pg_temp.rand_b(u uuid) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT set_byte(substr(uuid_send(u), 9), 0, get_byte(uuid_send(u), 8) & 63)
$$;

-- The largest version-7 UUID of the millisecond of t (every fraction and
-- random bit set), built from the smallest one.
CREATE FUNCTION pg_temp.uuidv7_ceiling(t timestamptz) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT overlay(uuidv7_from_timestamp(t)::text PLACING '7fff-bfff-ffffffffffff' FROM 15)::uuid
$$;

------------------------------------------------------------------------------
-- uuidv7_timestamp
------------------------------------------------------------------------------

-- RFC 9562 appendix A.6: unix_ts_ms 0x017F22E279B0 is 2022-02-22 19:22:22 UTC.
SELECT uuidv7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') AS rfc_example,
       uuidv7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') = '2022-02-22 19:22:22+00' AS rfc_example_ok,
       uuidv7_timestamp('017f22e279b07cc398c4dc0c0c07398f') = '2022-02-22 19:22:22+00' AS other_spelling_ok;

-- Not version 7, or not the RFC variant: NULL. NULL in, NULL out (STRICT).
SELECT uuidv7_timestamp(gen_random_uuid()) IS NULL AS v4_is_null,
       uuidv7_timestamp('00000000-0000-0000-0000-000000000000') IS NULL AS nil_is_null,
       uuidv7_timestamp('ffffffff-ffff-ffff-ffff-ffffffffffff') IS NULL AS max_is_null,
       uuidv7_timestamp('017F22E2-79B0-6CC3-98C4-DC0C0C07398F') IS NULL AS v6_is_null,
       uuidv7_timestamp('017F22E2-79B0-7CC3-08C4-DC0C0C07398F') IS NULL AS variant_0_is_null,
       uuidv7_timestamp('017F22E2-79B0-7CC3-C8C4-DC0C0C07398F') IS NULL AS variant_110_is_null,
       uuidv7_timestamp('017F22E2-79B0-7CC3-B8C4-DC0C0C07398F') = '2022-02-22 19:22:22+00' AS variant_10_other_bits,
       uuidv7_timestamp(NULL) IS NULL AS null_is_null;

-- The 48-bit field is big-endian milliseconds: its ends and single bits.
SELECT uuidv7_timestamp('00000000-0000-7000-8000-000000000000') AS ms_0,
       uuidv7_timestamp('00000000-0001-7000-8000-000000000000') AS ms_1,
       uuidv7_timestamp('00000001-0000-7000-8000-000000000000') AS ms_2_to_16,
       uuidv7_timestamp('80000000-0000-7fff-bfff-ffffffffffff') AS ms_2_to_47,
       uuidv7_timestamp('ffffffff-ffff-7fff-bfff-ffffffffffff') AS ms_max;

------------------------------------------------------------------------------
-- uuidv7(): version, variant, randomness, time
------------------------------------------------------------------------------

CREATE TEMP TABLE fresh AS
SELECT i, u, uuid_send(u) AS b
FROM (SELECT i, uuidv7() AS u FROM generate_series(1, 100000) AS i) s;

SELECT count(*) AS n,
       count(DISTINCT u) AS distinct_uuids,
       count(*) FILTER (WHERE get_byte(b, 6) >> 4 = 7) AS version_7,
       count(*) FILTER (WHERE get_byte(b, 8) >> 6 = 2) AS variant_10,
       count(*) FILTER (WHERE substr(u::text, 15, 1) = '7'
                          AND substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')) AS text_form_ok,
       count(*) FILTER (WHERE uuidv7_timestamp(u) IS NOT NULL) AS decodable,
       count(DISTINCT pg_temp.rand_b(u)) AS distinct_rand_b
FROM fresh;

-- Every one of the 62 rand_b bits is set in 45% to 55% of the values (for
-- random bits that is more than 30 standard deviations of room).
SELECT count(*) AS rand_b_bits,
       count(*) FILTER (WHERE share BETWEEN 0.45 AND 0.55) AS balanced_bits
FROM (
    SELECT byte, bit, avg(get_bit(b, byte * 8 + bit)) AS share
    FROM fresh,
         generate_series(8, 15) AS byte,
         generate_series(0, 7) AS bit
    WHERE byte > 8 OR bit < 6
    GROUP BY byte, bit
) s;

-- In generation order the values, and their 60-bit tick prefixes (bytes 0-7:
-- milliseconds, version, fraction), strictly increase.
SELECT count(*) FILTER (WHERE u <= prev_u) AS uuid_not_increasing,
       count(*) FILTER (WHERE substr(b, 1, 8) <= substr(prev_b, 1, 8)) AS ticks_not_increasing
FROM (SELECT u, b, lag(u) OVER w AS prev_u, lag(b) OVER w AS prev_b
      FROM fresh WINDOW w AS (ORDER BY i)) s;

-- The decoded time is the current time, truncated to the millisecond. The
-- 100,000 values above may have left this backend's ascending clock up to
-- 100,000 ticks (24.4 ms) ahead of the real one (docs/reference.md): let the
-- real one pass it first.
SELECT pg_sleep(0.03) AS slept \gset
SELECT clock_timestamp() AS t0 \gset
SELECT uuidv7() AS u \gset
SELECT clock_timestamp() AS t1 \gset
SELECT uuidv7_timestamp(:'u') >= date_trunc('milliseconds', timestamptz :'t0') AS not_before_call,
       uuidv7_timestamp(:'u') <= timestamptz :'t1' AS not_after_call,
       uuidv7_timestamp(:'u') = date_trunc('milliseconds', uuidv7_timestamp(:'u')) AS whole_ms;
-- The 12-bit fraction counts 1/4096 ms: milliseconds + fraction / 4096 is the
-- time of the call to within a tick (t0, t1 are whole microseconds).
SELECT tick_us >= extract(epoch FROM timestamptz :'t0') * 1000000 - 1 AS ticks_not_before_call,
       tick_us <= extract(epoch FROM timestamptz :'t1') * 1000000 + 1 AS ticks_not_after_call
FROM (SELECT extract(epoch FROM uuidv7_timestamp(:'u')) * 1000000
             + ((get_byte(b, 6) & 15) * 256 + get_byte(b, 7)) * 1000.0 / 4096 AS tick_us
      FROM (SELECT uuid_send(:'u') AS b) s) s;
-- Across statements of one backend, still increasing.
SELECT uuidv7() > :'u' AS next_statement_greater;

DROP TABLE fresh;

-- 1,000,000 values from one backend strictly increase in generation order.
SELECT count(*) AS n,
       count(*) FILTER (WHERE u <= prev) AS not_increasing,
       count(*) FILTER (WHERE get_byte(uuid_send(u), 6) >> 4 <> 7 OR get_byte(uuid_send(u), 8) >> 6 <> 2) AS not_v7
FROM (SELECT u, lag(u) OVER (ORDER BY i) AS prev
      FROM (SELECT i, uuidv7() AS u FROM generate_series(1, 1000000) AS i) s) s;

-- As a column default.
CREATE TEMP TABLE with_default (id uuid PRIMARY KEY DEFAULT uuidv7(), n integer);
INSERT INTO with_default (n) SELECT generate_series(1, 1000);
SELECT count(*) AS rows,
       bool_and(uuidv7_timestamp(id) IS NOT NULL) AS all_v7,
       count(*) FILTER (WHERE id <= prev) AS not_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM with_default) s;
DROP TABLE with_default;

------------------------------------------------------------------------------
-- uuidv7(interval)
------------------------------------------------------------------------------

-- Shifted by the interval, as timestamptz + interval (calendar-aware), within
-- 5 seconds of the expected time; still valid version 7.
SELECT shift,
       abs(extract(epoch FROM uuidv7_timestamp(u) - (t + shift::interval))) < 5 AS time_ok,
       get_byte(uuid_send(u), 6) >> 4 AS version,
       get_byte(uuid_send(u), 8) >> 6 AS variant
FROM unnest(ARRAY['1 day', '-1 hour', '1 month', '-1 month', '1 year 2 mons 3 days 04:05:06.789',
                  '-50 years', '8000 years', '0', '-00:00:00.001']) AS shift,
     LATERAL (SELECT uuidv7(shift::interval) AS u, clock_timestamp() AS t) s
ORDER BY shift;

-- Many shifted values: valid version 7, distinct random bits.
SELECT count(*) AS n,
       count(*) FILTER (WHERE get_byte(uuid_send(u), 6) >> 4 = 7 AND get_byte(uuid_send(u), 8) >> 6 = 2) AS valid_v7,
       count(DISTINCT pg_temp.rand_b(u)) AS distinct_rand_b
FROM (SELECT uuidv7(g * interval '3 days 7 hours 11 minutes 13.017 seconds') AS u
      FROM generate_series(-1000, 1000) AS g) s;

-- The shift keeps the 12-bit fraction: a zero shift lands exactly on the
-- backend's next tick, so plain and zero-shifted values interleave in strict
-- order; a fixed shift keeps the order of its own values too.
SELECT count(*) FILTER (WHERE u <= prev) AS zero_shift_not_increasing
FROM (SELECT u, lag(u) OVER (ORDER BY i) AS prev
      FROM (SELECT i, CASE WHEN i % 2 = 0 THEN uuidv7() ELSE uuidv7('0') END AS u
            FROM generate_series(1, 100000) AS i) s) s;
SELECT shift,
       count(*) FILTER (WHERE u <= prev) AS not_increasing
FROM unnest(ARRAY['1 day', '-1 hour', '-00:00:00.000001', '1000 years 17.5 seconds']) AS shift,
     LATERAL (SELECT u, lag(u) OVER (ORDER BY i) AS prev
              FROM (SELECT i, uuidv7(shift::interval) AS u FROM generate_series(1, 20000) AS i) s) s
GROUP BY shift
ORDER BY shift;
-- A value shifted into the past sorts before the current time, one shifted
-- into the future after it.
SELECT uuidv7('-1 hour') < uuidv7() AS past_before, uuidv7('1 hour') > uuidv7() AS future_after;

-- NULL in, NULL out (STRICT).
SELECT uuidv7(NULL) IS NULL AS strict_shift;

-- Near the ends of the 48-bit range: one minute inside is fine, one minute
-- outside is an error (the shift is computed from the current time).
SELECT uuidv7_timestamp(uuidv7(timestamptz '1970-01-01 00:00:00+00' - clock_timestamp() + interval '1 minute'))
         BETWEEN '1970-01-01 00:00:55+00' AND '1970-01-01 00:01:05+00' AS near_1970_ok,
       uuidv7_timestamp(uuidv7(timestamptz '10889-08-02 05:31:50.655+00' - clock_timestamp() - interval '1 minute'))
         BETWEEN '10889-08-02 05:30:45.655+00' AND '10889-08-02 05:30:55.655+00' AS near_10889_ok;

------------------------------------------------------------------------------
-- uuidv7_from_timestamp
------------------------------------------------------------------------------

-- Constant input, so the values can be printed.
SELECT uuidv7_from_timestamp('1970-01-01 00:00:00+00') AS ms_0,
       uuidv7_from_timestamp('1970-01-01 00:00:00.001+00') AS ms_1,
       uuidv7_from_timestamp('1970-01-01 00:00:00.000999+00') AS ms_0_again,
       uuidv7_from_timestamp('2022-02-22 19:22:22+00') AS rfc_example_ms,
       uuidv7_from_timestamp('2022-02-22 20:22:22.0009+01') AS same_ms_other_zone;
-- The last valid millisecond is 2^48 - 1 ms after 1970-01-01: exactly
-- 10889-08-02 05:31:50.655+00.
SELECT timestamptz 'epoch' + (281474976710655 / 86400000) * interval '1 day'
                           + (281474976710655 % 86400000) * interval '1 ms' AS last_valid_ms;
SELECT uuidv7_from_timestamp('10889-08-02 05:31:50.655+00') AS last_ms,
       uuidv7_from_timestamp('10889-08-02 05:31:50.655999+00') AS last_ms_end,
       uuidv7_timestamp(uuidv7_from_timestamp('10889-08-02 05:31:50.655999+00')) AS last_ms_decoded;

-- The RFC example lies in its millisecond: floor <= it < next floor.
SELECT uuidv7_from_timestamp('2022-02-22 19:22:22+00') <= '017F22E2-79B0-7CC3-98C4-DC0C0C07398F' AS floor_le,
       uuidv7_from_timestamp('2022-02-22 19:22:22.001+00') > '017F22E2-79B0-7CC3-98C4-DC0C0C07398F' AS next_floor_gt,
       uuidv7_from_timestamp('2022-02-22 19:22:21.999+00') < '017F22E2-79B0-7CC3-98C4-DC0C0C07398F' AS previous_floor_lt;

-- Over the whole range (every 97 days and a bit, plus both ends): version 7,
-- variant 10, every fraction and random bit zero, the time rounds trip to the
-- millisecond, and increasing timestamps give strictly increasing UUIDs.
CREATE TEMP TABLE floors AS
SELECT t, uuidv7_from_timestamp(t) AS u, uuid_send(uuidv7_from_timestamp(t)) AS b
FROM (SELECT generate_series(timestamptz '1970-01-01 00:00:00+00', '10889-08-02 00:00:00+00',
                             interval '97 days 01:02:03.004005') AS t
      UNION ALL SELECT '10889-08-02 05:31:50.655+00'
      UNION ALL SELECT '10889-08-02 05:31:50.654999+00') s;
SELECT count(*) AS n,
       count(*) FILTER (WHERE substr(b, 7) = '\x70008000000000000000'::bytea) AS low_bits_7_8_zero,
       count(*) FILTER (WHERE uuidv7_timestamp(u) = date_trunc('milliseconds', t)) AS round_trip,
       count(*) FILTER (WHERE u <= prev) AS not_increasing
FROM (SELECT t, u, b, lag(u) OVER (ORDER BY t) AS prev FROM floors) s;
-- Adjacent milliseconds: the largest UUID of a millisecond sorts below the
-- smallest of the next one, and above the smallest of its own.
SELECT count(*) AS n,
       count(*) FILTER (WHERE pg_temp.uuidv7_ceiling(t - interval '1 ms') < uuidv7_from_timestamp(t)) AS previous_ms_below,
       count(*) FILTER (WHERE pg_temp.uuidv7_ceiling(t) > uuidv7_from_timestamp(t)) AS own_ms_above,
       count(*) FILTER (WHERE uuidv7_timestamp(pg_temp.uuidv7_ceiling(t)) = date_trunc('milliseconds', t)) AS ceiling_decodes
FROM floors
WHERE t > '1970-01-01 00:00:00+00';
DROP TABLE floors;

-- Generated values lie between the floor of their millisecond (inclusive) and
-- the floor of the next one (exclusive): uuidv7_from_timestamp(t) <= any
-- UUID of t's millisecond, > any UUID of the millisecond before. Values now
-- and shifted across the range.
CREATE TEMP TABLE generated AS
SELECT uuidv7() AS u FROM generate_series(1, 20000)
UNION ALL
SELECT uuidv7(g * interval '11 days 13:17:19.023029') FROM generate_series(-1500, 2000) AS g
UNION ALL
SELECT uuidv7(g * interval '1 year 1 month') FROM generate_series(-50, 8000, 7) AS g;
SELECT count(*) AS n,
       count(*) FILTER (WHERE uuidv7_from_timestamp(uuidv7_timestamp(u)) <= u) AS floor_le,
       count(*) FILTER (WHERE uuidv7_from_timestamp(uuidv7_timestamp(u) + interval '1 ms') > u) AS next_floor_gt,
       count(*) FILTER (WHERE uuidv7_from_timestamp(uuidv7_timestamp(u) + interval '0.999 ms') <= u) AS sub_ms_floor_le
FROM generated;
DROP TABLE generated;

-- A half-open range of UUIDs [from_timestamp(a), from_timestamp(b)) holds
-- exactly the values whose time, truncated to the millisecond, is in
-- [a, b) truncated to the millisecond.
CREATE TEMP TABLE ranged AS
SELECT g, uuidv7(g * interval '00:00:00.1237') AS u FROM generate_series(-500, 500) AS g;
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (u >= uuidv7_from_timestamp(a) AND u < uuidv7_from_timestamp(b))
                          = (uuidv7_timestamp(u) >= date_trunc('milliseconds', a)
                             AND uuidv7_timestamp(u) < date_trunc('milliseconds', b))) AS agree
FROM ranged,
     (SELECT uuidv7_timestamp(u) + d AS a, uuidv7_timestamp(u) + d + interval '7 ms' AS b
      FROM ranged, unnest(ARRAY[interval '0', '-1 ms', '1 ms', '0.5 ms']) AS d
      WHERE g % 10 = 0) bounds;
DROP TABLE ranged;

-- A range scan on a uuid primary key uses the index.
CREATE TEMP TABLE events (id uuid PRIMARY KEY, note integer);
INSERT INTO events SELECT uuidv7(-g * interval '1 minute'), g FROM generate_series(0, 4999) AS g;
ANALYZE events;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM events WHERE id >= uuidv7_from_timestamp('2020-01-01 00:00:00+00');
EXPLAIN (COSTS OFF)
SELECT id FROM events
WHERE id >= uuidv7_from_timestamp(now() - interval '1 day') AND id < uuidv7_from_timestamp(now());
-- It finds the same rows as decoding every id (2999.5 minutes back: the
-- rows of shifts 0..2999, as long as this runs within 30 s of the insert).
SELECT clock_timestamp() - interval '2999.5 minutes' AS since \gset
SELECT count(*) AS rows_by_index,
       count(*) = (SELECT count(*) FROM events WHERE uuidv7_timestamp(id) >= date_trunc('milliseconds', timestamptz :'since')) AS same_as_decoded,
       min(note) AS min_note, max(note) AS max_note
FROM events WHERE id >= uuidv7_from_timestamp(:'since');
RESET enable_seqscan;
DROP TABLE events;

------------------------------------------------------------------------------
-- Errors: SQLSTATE 22008 (datetime_field_overflow) with a message naming the
-- time and a hint with the range, never a crash.
------------------------------------------------------------------------------
CREATE TEMP TABLE calls (n serial, query text, mask boolean DEFAULT false, outcome text);
INSERT INTO calls (query, mask) VALUES
-- Shifts before 1970, past the 48-bit range, past the timestamp range.
    ('SELECT uuidv7(''-100 years'')', true),
    ('SELECT uuidv7(''-2100 years'')', true),
    ('SELECT uuidv7(''9000 years'')', true),
    ('SELECT uuidv7(''300000 years'')', true),
    ('SELECT uuidv7(''-300000 years'')', true),
    ('SELECT uuidv7(''-2147483648 days'')', true),
    ('SELECT uuidv7(''2147483647 mons'')', true),
    ('SELECT uuidv7(''-9223372036854 seconds'')', true),
-- Timestamps that are not finite or outside 1970-01-01 .. 10889-08-02 05:31:50.655.
    ('SELECT uuidv7_from_timestamp(''infinity'')', false),
    ('SELECT uuidv7_from_timestamp(''-infinity'')', false),
    ('SELECT uuidv7_from_timestamp(''1969-12-31 23:59:59.999+00'')', false),
    ('SELECT uuidv7_from_timestamp(''1969-12-31 23:59:59.999999+00'')', false),
    ('SELECT uuidv7_from_timestamp(''4714-11-24 00:00:00+00 BC'')', false),
    ('SELECT uuidv7_from_timestamp(''10889-08-02 05:31:50.656+00'')', false),
    ('SELECT uuidv7_from_timestamp(''10900-01-01'')', false),
    ('SELECT uuidv7_from_timestamp(''294276-12-31 23:59:59.999999+00'')', false),
-- ... and the values just inside.
    ('SELECT uuidv7_from_timestamp(''1970-01-01 00:00:00+00'')', false),
    ('SELECT uuidv7_from_timestamp(''10889-08-02 05:31:50.655999+00'')', false),
    ('SELECT uuidv7_from_timestamp(NULL)', false);
UPDATE calls SET outcome = pg_temp.outcome(query, mask);
SELECT n, query, outcome FROM calls ORDER BY n;
DROP TABLE calls;

-- The backend survived every error and still makes increasing values.
SELECT uuidv7() AS a \gset
SELECT uuidv7() > :'a' AS still_increasing;

------------------------------------------------------------------------------
-- uuidv7_at(timestamptz): a UUIDv7 of a given time with fresh random bits
------------------------------------------------------------------------------
-- Its time decodes to the millisecond of ts; it lies in that millisecond's
-- range of UUIDs; version 7, RFC variant.
SELECT t, uuidv7_timestamp(uuidv7_at(t)) AS decoded,
       uuidv7_at(t) >= uuidv7_from_timestamp(t) AS at_or_above_floor,
       uuidv7_at(t) <= pg_temp.uuidv7_ceiling(t) AS at_or_below_ceiling,
       substr(uuidv7_at(t)::text, 15, 1) || (get_byte(uuid_send(uuidv7_at(t)), 8) >> 6)::text AS version_variant
FROM (VALUES (timestamptz '1970-01-01 00:00:00+00'), ('1970-01-01 00:00:00.000999+00'),
             ('2022-02-22 19:22:22.5+00'), ('2001-09-09 01:46:40.123456+00'),
             ('10889-08-02 05:31:50.655999+00')) AS v(t);
-- The microseconds are the fraction: one microsecond later is a larger
-- 60-bit tick prefix (bytes 0-7 without the variant), so UUIDs of times a
-- microsecond apart sort by time.
CREATE TEMP TABLE at_us AS
SELECT g, uuidv7_at(timestamptz '2030-01-01 00:00:00+00' + g * interval '1 microsecond') AS u
FROM generate_series(0, 2999) AS g;
SELECT count(*) AS n,
       array_agg(g ORDER BY u) = array_agg(g ORDER BY g) AS sorted_by_time,
       count(DISTINCT substr(uuid_send(u), 1, 8)) AS distinct_tick_prefixes
FROM at_us;
DROP TABLE at_us;
-- Random bits: 2,000 UUIDs of one time are distinct, and every one of the 62
-- rand_b bits is set in 40% to 60% of them (about 9 standard deviations).
CREATE TEMP TABLE at_same AS
SELECT uuidv7_at('2024-06-01 12:00:00.000250+00') AS u FROM generate_series(1, 2000);
SELECT count(DISTINCT u) AS distinct_values,
       count(DISTINCT substr(uuid_send(u), 1, 8)) AS tick_prefixes
FROM at_same;
-- (get_bit numbers a byte's bits from the lowest: byte 8's top two are the
-- variant.)
SELECT count(*) AS rand_b_bits,
       count(*) FILTER (WHERE share BETWEEN 0.4 AND 0.6) AS balanced_bits
FROM (
    SELECT byte, bit, avg(get_bit(uuid_send(u), byte * 8 + bit)) AS share
    FROM at_same, generate_series(8, 15) AS byte, generate_series(0, 7) AS bit
    WHERE byte > 8 OR bit < 6
    GROUP BY byte, bit
) s;
DROP TABLE at_same;
-- It does not touch this backend's ascending clock: uuidv7() after a
-- uuidv7_at() far in the future is still of the present.
SELECT uuidv7_at('3000-01-01 00:00:00+00') > uuidv7() AS future_above_now,
       uuidv7_timestamp(uuidv7()) < '2999-01-01' AS uuidv7_still_now;
-- Errors: not finite, before 1970, past the 48-bit range; NULL in, NULL out.
CREATE TEMP TABLE calls (n serial, query text);
INSERT INTO calls (query) VALUES
    ('SELECT uuidv7_at(''infinity'')'),
    ('SELECT uuidv7_at(''-infinity'')'),
    ('SELECT uuidv7_at(''1969-12-31 23:59:59.999999+00'')'),
    ('SELECT uuidv7_at(''10889-08-02 05:31:50.656+00'')'),
    ('SELECT uuidv7_at(NULL)');
SELECT n, query, pg_temp.outcome(query) AS outcome FROM calls ORDER BY n;
DROP TABLE calls;
