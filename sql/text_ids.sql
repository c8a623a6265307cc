-- Text forms of ids (extension 1.3): snowflake_encode, snowflake_decode_text,
-- the TypeID functions and the ULID text of a UUID.
--
-- None of them needs shared state, so test/regress.sh runs this file with
-- snowflake preloaded and again without shared_preload_libraries (the output
-- must be the same). Fresh values are never printed, only their properties;
-- printed texts follow from constant input. The TypeID specification's own
-- vectors (test/vectors/typeid) are checked by test/pgtap/06_typeid_vectors.sql.

SET client_min_messages = error;  -- no preload warning in the run without preload
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

-- Runs one query and returns its single value as text, 'NULL', or the
-- SQLSTATE, message, detail and hint of its error.
CREATE FUNCTION pg_temp.outcome(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    result text;
    state text;
    message text;
    detail text;
    hint text;
BEGIN
    EXECUTE query INTO result;
    RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                            detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    RETURN 'ERROR ' || state || ': ' || message
        || CASE WHEN detail <> '' THEN E'\n  DETAIL: ' || detail ELSE '' END
        || CASE WHEN hint <> '' THEN E'\n  HINT: ' || hint ELSE '' END;
END
$$;

------------------------------------------------------------------------------
-- Fixed values: the smallest and largest ids and a few between
------------------------------------------------------------------------------
SELECT id, snowflake_encode(id) AS base32_default, snowflake_encode(id, 'base32') AS base32,
       snowflake_encode(id, 'base62') AS base62, snowflake_encode(id, 'decimal') AS decimal
FROM (VALUES (0::bigint), (1), (31), (32), (61), (62), (1234567890123456789),
             (9223372036854775806), (9223372036854775807)) AS v(id)
ORDER BY id;

------------------------------------------------------------------------------
-- A spread of ids: every power of two and its neighbours, a stride over the
-- whole range, and seeded random ids
------------------------------------------------------------------------------
SELECT setseed(0.33);
CREATE TEMP TABLE spread AS
SELECT DISTINCT id FROM (
    SELECT (2::numeric ^ k + d)::bigint AS id
    FROM generate_series(0, 62) AS k, generate_series(-1, 1) AS d
    WHERE 2::numeric ^ k + d BETWEEN 0 AND 9223372036854775807
  UNION ALL
    SELECT i * 92233720368547758 FROM generate_series(0, 100) AS i
  UNION ALL
    SELECT (random() * 9223372036854775807::numeric)::bigint FROM generate_series(1, 2000)
  UNION ALL
    SELECT 9223372036854775807
) AS s;
SELECT count(*) > 2000 AS enough_ids FROM spread;

-- Round trips, fixed width, and text order equal to id order under COLLATE "C".
SELECT f AS format,
       bool_and(snowflake_decode_text(snowflake_encode(id, f), f) = id) AS round_trip,
       min(length(snowflake_encode(id, f))) AS min_length,
       max(length(snowflake_encode(id, f))) AS max_length,
       array_agg(id ORDER BY snowflake_encode(id, f) COLLATE "C") = array_agg(id ORDER BY id) AS text_order_is_id_order
FROM spread, (VALUES ('base32'), ('base62'), ('decimal')) AS fmt(f)
GROUP BY f
ORDER BY f;
-- Decimal text is not fixed width, so its order is not id order (shown so
-- that the order check above can fail).
SELECT array_agg(id ORDER BY snowflake_encode(id, 'decimal') COLLATE "C") = array_agg(id ORDER BY id)
       AS decimal_text_order_is_id_order
FROM spread;
-- The default format is base32, both ways.
SELECT bool_and(snowflake_encode(id) = snowflake_encode(id, 'base32')) AS encode_default_base32,
       bool_and(snowflake_decode_text(snowflake_encode(id, 'base32')) = id) AS decode_default_base32
FROM spread;

------------------------------------------------------------------------------
-- Lenient base32 (Crockford): either case, I and L as 1, O as 0, hyphens
------------------------------------------------------------------------------
SELECT t, snowflake_decode_text(t, 'base32') AS id
FROM (VALUES ('0000000000001'), ('000000000000i'), ('000000000000I'), ('000000000000l'),
             ('000000000000L'), ('00000000000O1'), ('00000000000o1'), ('0000-0000-0000-1'),
             ('-0000000000001-'), ('12ABCDEFGHJKM'), ('12abcdefghjkm'), ('12-abcd-efgh-jkm'),
             ('7ZZZZZZZZZZZZ'), ('7zzzzzzzzzzzz')) AS v(t);
-- base62 is case-sensitive: 'a' and 'A' are different digits.
SELECT snowflake_decode_text('0000000000a', 'base62') AS lower_a,
       snowflake_decode_text('0000000000A', 'base62') AS upper_a;

------------------------------------------------------------------------------
-- Bad input: every class is an error with its SQLSTATE, never an id
------------------------------------------------------------------------------
CREATE TEMP TABLE calls (n serial, query text);
INSERT INTO calls (query) VALUES
-- the format is named exactly
    ($$SELECT snowflake_encode(1, 'Base32')$$),
    ($$SELECT snowflake_encode(1, 'hex')$$),
    ($$SELECT snowflake_decode_text('1', '')$$),
    ($$SELECT snowflake_decode_text('1', ' decimal')$$),
-- negative ids have no text
    ($$SELECT snowflake_encode(-1, 'base32')$$),
    ($$SELECT snowflake_encode(-9223372036854775808, 'base62')$$),
    ($$SELECT snowflake_encode(-1, 'decimal')$$),
-- base32: length, alphabet (U, punctuation, space), the first character, empty
    ($$SELECT snowflake_decode_text('000000000001', 'base32')$$),
    ($$SELECT snowflake_decode_text('00000000000001', 'base32')$$),
    ($$SELECT snowflake_decode_text('000000000000U', 'base32')$$),
    ($$SELECT snowflake_decode_text('00000*0000001', 'base32')$$),
    ($$SELECT snowflake_decode_text('0000000000001 ', 'base32')$$),
    ($$SELECT snowflake_decode_text('8000000000000', 'base32')$$),
    ($$SELECT snowflake_decode_text('Z000000000000', 'base32')$$),
    ($$SELECT snowflake_decode_text('', 'base32')$$),
    ($$SELECT snowflake_decode_text('-------------', 'base32')$$),
-- base62: length, alphabet, above the largest id
    ($$SELECT snowflake_decode_text('0000000001', 'base62')$$),
    ($$SELECT snowflake_decode_text('000000000001', 'base62')$$),
    ($$SELECT snowflake_decode_text('00000-00001', 'base62')$$),
    ($$SELECT snowflake_decode_text('AzL8n0Y58m8', 'base62')$$),
    ($$SELECT snowflake_decode_text('zzzzzzzzzzz', 'base62')$$),
-- decimal: empty, signs, spaces, exponent, above the largest id, 20 digits
    ($$SELECT snowflake_decode_text('', 'decimal')$$),
    ($$SELECT snowflake_decode_text('-1', 'decimal')$$),
    ($$SELECT snowflake_decode_text('+1', 'decimal')$$),
    ($$SELECT snowflake_decode_text(' 1', 'decimal')$$),
    ($$SELECT snowflake_decode_text('1e5', 'decimal')$$),
    ($$SELECT snowflake_decode_text('9223372036854775808', 'decimal')$$),
    ($$SELECT snowflake_decode_text('99999999999999999999', 'decimal')$$),
-- a text of another format is not read as this one
    ($$SELECT snowflake_decode_text(snowflake_encode(12345, 'base62'), 'base32')$$),
    ($$SELECT snowflake_decode_text(snowflake_encode(12345, 'base32'), 'base62')$$),
    ($$SELECT snowflake_decode_text(snowflake_encode(12345, 'base32'), 'decimal')$$),
-- STRICT: NULL in, NULL out
    ($$SELECT snowflake_encode(NULL, 'base32')$$),
    ($$SELECT snowflake_encode(1, NULL)$$),
    ($$SELECT snowflake_decode_text(NULL, 'base32')$$),
    ($$SELECT snowflake_decode_text('1', NULL)$$),
-- TypeID prefixes: upper case, digits, '_' at either end, 64 characters
    ($$SELECT snowflake_uuid_to_typeid('00000000-0000-0000-0000-000000000000', 'User')$$),
    ($$SELECT snowflake_uuid_to_typeid('00000000-0000-0000-0000-000000000000', 'user1')$$),
    ($$SELECT snowflake_uuid_to_typeid('00000000-0000-0000-0000-000000000000', '_user')$$),
    ($$SELECT snowflake_uuid_to_typeid('00000000-0000-0000-0000-000000000000', 'user_')$$),
    ($$SELECT uuidv7_typeid(repeat('a', 64))$$),
    ($$SELECT uuidv7_typeid('order-item')$$),
-- TypeIDs: no prefix with '_', upper case, a bad suffix, too short, the first character
    ($$SELECT snowflake_typeid_to_uuid('_01h455vb4pex5vsknk084sn02q')$$),
    ($$SELECT snowflake_typeid_to_uuid('user_01H455VB4PEX5VSKNK084SN02Q')$$),
    ($$SELECT snowflake_typeid_to_uuid('user_01h455vb4pex5vsknk084sn0')$$),
    ($$SELECT snowflake_typeid_to_uuid('user_01h455vb4pex5vsknk084sn02u')$$),
    ($$SELECT snowflake_typeid_to_uuid('01h455vb4pex5vsknk084sn0')$$),
    ($$SELECT snowflake_typeid_to_uuid('user_81h455vb4pex5vsknk084sn02q')$$),
    ($$SELECT snowflake_typeid_prefix('User_01h455vb4pex5vsknk084sn02q')$$),
-- ULIDs: length, alphabet, the first character
    ($$SELECT snowflake_ulid_to_uuid('01H455VB4PEX5VSKNK084SN02')$$),
    ($$SELECT snowflake_ulid_to_uuid('01H455VB4PEX5VSKNK084SN02QQ')$$),
    ($$SELECT snowflake_ulid_to_uuid('01H455VB4PEX5VSKNK084SN02U')$$),
    ($$SELECT snowflake_ulid_to_uuid('81H455VB4PEX5VSKNK084SN02Q')$$),
    ($$SELECT snowflake_ulid_to_uuid('01H455VB-PEX5VSKNK084SN02Q')$$);
\pset format unaligned
\pset tuples_only on
SELECT n || '. ' || query || E'\n  ' || pg_temp.outcome(query) FROM calls ORDER BY n;
\pset format aligned
\pset tuples_only off

-- A bad value is quoted in an error up to 100 bytes.
SELECT length(pg_temp.outcome($$SELECT snowflake_decode_text(repeat('0', 1000), 'base32')$$)) < 600
       AS long_value_clipped;

------------------------------------------------------------------------------
-- TypeID and ULID
------------------------------------------------------------------------------
-- The TypeID specification's example, both ways, and its ULID text.
SELECT snowflake_uuid_to_typeid('01890a5d-ac96-774b-bcce-b302099a8057', 'user') AS typeid,
       snowflake_typeid_to_uuid('user_01h455vb4pex5vsknk084sn02q') AS uuid,
       snowflake_typeid_prefix('user_01h455vb4pex5vsknk084sn02q') AS prefix,
       snowflake_uuid_to_ulid('01890a5d-ac96-774b-bcce-b302099a8057') AS ulid;
-- No prefix: 26 characters and no '_'; the prefix is ''.
SELECT snowflake_uuid_to_typeid('01890a5d-ac96-774b-bcce-b302099a8057', '') AS typeid,
       snowflake_typeid_prefix('01h455vb4pex5vsknk084sn02q') = '' AS empty_prefix;
-- A prefix of 63 characters with '_' inside.
SELECT snowflake_typeid_prefix(snowflake_uuid_to_typeid(gen_random_uuid(), 'a_' || repeat('b', 61)))
       = 'a_' || repeat('b', 61) AS long_prefix;
-- The smallest and largest UUIDs.
SELECT u, snowflake_uuid_to_typeid(u, 'x') AS typeid, snowflake_uuid_to_ulid(u) AS ulid
FROM (VALUES ('00000000-0000-0000-0000-000000000000'::uuid),
             ('ffffffff-ffff-ffff-ffff-ffffffffffff')) AS v(u);
-- ULIDs are read in either case.
SELECT snowflake_ulid_to_uuid('01h455vb4pex5vsknk084sn02q') AS lower,
       snowflake_ulid_to_uuid('01H455VB4PEX5VSKNK084SN02Q') AS upper;

-- Random UUIDs round trip through both texts, and text order is UUID order.
CREATE TEMP TABLE uuids AS SELECT gen_random_uuid() AS u FROM generate_series(1, 1000);
SELECT bool_and(snowflake_typeid_to_uuid(snowflake_uuid_to_typeid(u, 'item')) = u) AS typeid_round_trip,
       bool_and(snowflake_ulid_to_uuid(snowflake_uuid_to_ulid(u)) = u) AS ulid_round_trip,
       bool_and(snowflake_typeid_prefix(snowflake_uuid_to_typeid(u, 'item')) = 'item') AS prefix_kept,
       array_agg(u ORDER BY snowflake_uuid_to_typeid(u, 'item') COLLATE "C") = array_agg(u ORDER BY u)
           AS typeid_order_is_uuid_order,
       array_agg(u ORDER BY snowflake_uuid_to_ulid(u) COLLATE "C") = array_agg(u ORDER BY u)
           AS ulid_order_is_uuid_order
FROM uuids;

-- uuidv7_typeid: a new UUIDv7 each call, the prefix kept, increasing, and
-- not ahead of the clock by more than the calls can push it: a call within
-- the last one's tick (1/4096 ms) takes the next tick (docs/reference.md), so
-- these 100 calls lead clock_timestamp() by about 100 ticks (24.4 us) at most,
-- which shows in uuidv7_timestamp() when it crosses a millisecond: under 1 ms.
CREATE TEMP TABLE fresh AS
SELECT n, uuidv7_typeid('order_item') AS t, clock_timestamp() AS at
FROM generate_series(1, 100) AS n;
SELECT count(DISTINCT t) AS distinct_typeids,
       bool_and(snowflake_typeid_prefix(t) = 'order_item') AS prefix_kept,
       bool_and(length(t) = length('order_item_') + 26) AS length_ok,
       bool_and(uuidv7_timestamp(snowflake_typeid_to_uuid(t)) IS NOT NULL) AS all_version_7,
       bool_and(uuidv7_timestamp(snowflake_typeid_to_uuid(t)) < at + interval '1 millisecond')
           AS under_1_ms_ahead,
       array_agg(n ORDER BY t COLLATE "C") = array_agg(n ORDER BY n) AS increasing
FROM fresh;
SELECT length(uuidv7_typeid('')) AS no_prefix_length, position('_' IN uuidv7_typeid('')) AS underscore_at;

-- The volatility and strictness the reference promises.
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility, p.proisstrict AS strict,
       p.proparallel AS parallel, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc p
WHERE p.oid IN ('snowflake_encode(bigint, text)'::regprocedure, 'snowflake_decode_text(text, text)'::regprocedure,
                'uuidv7_typeid(text)'::regprocedure, 'snowflake_uuid_to_typeid(uuid, text)'::regprocedure,
                'snowflake_typeid_to_uuid(text)'::regprocedure, 'snowflake_typeid_prefix(text)'::regprocedure,
                'snowflake_uuid_to_ulid(uuid)'::regprocedure, 'snowflake_ulid_to_uuid(text)'::regprocedure)
ORDER BY p.oid::regprocedure::text;
