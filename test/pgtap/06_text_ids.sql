-- Text ids (extension 1.3): the catalog entries of snowflake_encode,
-- snowflake_decode_text, uuidv7_typeid and the TypeID and ULID functions
-- (signatures, argument names and defaults, return types, volatility,
-- strictness, parallel safety, comments) and the SQLSTATE of each kind of
-- error. Values, round trips, order and the messages are in
-- sql/text_ids.sql; the TypeID specification's vectors in 07_typeid_vectors.sql.
BEGIN;
SELECT plan(47);

-- Signatures and return types.
SELECT function_returns('public', 'snowflake_encode', ARRAY['bigint', 'text'], 'text');
SELECT function_returns('public', 'snowflake_decode_text', ARRAY['text', 'text'], 'bigint');
SELECT function_returns('public', 'uuidv7_typeid', ARRAY['text'], 'text');
SELECT function_returns('public', 'snowflake_uuid_to_typeid', ARRAY['uuid', 'text'], 'text');
SELECT function_returns('public', 'snowflake_typeid_to_uuid', ARRAY['text'], 'uuid');
SELECT function_returns('public', 'snowflake_typeid_prefix', ARRAY['text'], 'text');
SELECT function_returns('public', 'snowflake_uuid_to_ulid', ARRAY['uuid'], 'text');
SELECT function_returns('public', 'snowflake_ulid_to_uuid', ARRAY['text'], 'uuid');

-- The generator is VOLATILE; everything else depends only on its arguments.
SELECT volatility_is('public', 'uuidv7_typeid', ARRAY['text'], 'volatile');
SELECT volatility_is('public', 'snowflake_encode', ARRAY['bigint', 'text'], 'immutable');
SELECT volatility_is('public', 'snowflake_decode_text', ARRAY['text', 'text'], 'immutable');
SELECT volatility_is('public', 'snowflake_uuid_to_typeid', ARRAY['uuid', 'text'], 'immutable');
SELECT volatility_is('public', 'snowflake_typeid_to_uuid', ARRAY['text'], 'immutable');
SELECT volatility_is('public', 'snowflake_typeid_prefix', ARRAY['text'], 'immutable');
SELECT volatility_is('public', 'snowflake_uuid_to_ulid', ARRAY['uuid'], 'immutable');
SELECT volatility_is('public', 'snowflake_ulid_to_uuid', ARRAY['text'], 'immutable');

-- All STRICT, all PARALLEL SAFE, all commented.
SELECT is_strict('public', 'uuidv7_typeid', ARRAY['text']);
SELECT is_strict('public', 'snowflake_encode', ARRAY['bigint', 'text']);
SELECT is_strict('public', 'snowflake_decode_text', ARRAY['text', 'text']);
SELECT is_strict('public', 'snowflake_uuid_to_typeid', ARRAY['uuid', 'text']);
SELECT is_strict('public', 'snowflake_typeid_to_uuid', ARRAY['text']);
SELECT is_strict('public', 'snowflake_typeid_prefix', ARRAY['text']);
SELECT is_strict('public', 'snowflake_uuid_to_ulid', ARRAY['uuid']);
SELECT is_strict('public', 'snowflake_ulid_to_uuid', ARRAY['text']);
CREATE TEMP TABLE text_id_functions ON COMMIT DROP AS
SELECT unnest(ARRAY['snowflake_encode(bigint, text)', 'snowflake_decode_text(text, text)', 'uuidv7_typeid(text)',
                    'snowflake_uuid_to_typeid(uuid, text)', 'snowflake_typeid_to_uuid(text)',
                    'snowflake_typeid_prefix(text)', 'snowflake_uuid_to_ulid(uuid)',
                    'snowflake_ulid_to_uuid(text)']::regprocedure[]) AS f;
SELECT is((SELECT count(*)::int FROM text_id_functions), 8, 'eight functions of text ids');
SELECT is_empty($$ SELECT f::text FROM text_id_functions JOIN pg_proc p ON p.oid = f WHERE p.proparallel <> 's' $$,
                'the functions of text ids are PARALLEL SAFE');
SELECT is_empty($$ SELECT f::text FROM text_id_functions WHERE coalesce(obj_description(f, 'pg_proc'), '') = '' $$,
                'every function of text ids has a COMMENT');

-- Argument names and defaults (callers may use named notation).
SELECT results_eq($$
    SELECT f::text, pg_get_function_arguments(f) FROM text_id_functions ORDER BY f::text
$$, $$ VALUES
    ('snowflake_decode_text(text,text)', 't text, format text DEFAULT ''base32''::text'),
    ('snowflake_encode(bigint,text)', 'id bigint, format text DEFAULT ''base32''::text'),
    ('snowflake_typeid_prefix(text)', 't text'),
    ('snowflake_typeid_to_uuid(text)', 't text'),
    ('snowflake_ulid_to_uuid(text)', 't text'),
    ('snowflake_uuid_to_typeid(uuid,text)', 'u uuid, prefix text'),
    ('snowflake_uuid_to_ulid(uuid)', 'u uuid'),
    ('uuidv7_typeid(text)', 'prefix text')
$$, 'argument names and defaults of the functions of text ids');
SELECT is(snowflake_decode_text(format => 'base62', t => snowflake_encode(format => 'base62', id => 42)), 42::bigint,
          'named notation works both ways');

-- The SQLSTATE of each kind of error.
SELECT throws_ok($$ SELECT snowflake_encode(1, 'BASE32') $$, '22023', 'unknown snowflake id format "BASE32"',
                 'a format is named exactly');
SELECT throws_ok($$ SELECT snowflake_decode_text('1', 'hex') $$, '22023', 'unknown snowflake id format "hex"',
                 'an unknown format is refused when decoding too');
SELECT throws_ok($$ SELECT snowflake_encode(-1) $$, '22023', 'snowflake id -1 is negative',
                 'a negative id has no base32 text');
SELECT throws_ok($$ SELECT snowflake_encode(-1, 'base62') $$, '22023', 'snowflake id -1 is negative',
                 'a negative id has no base62 text');
SELECT throws_ok($$ SELECT snowflake_decode_text('0000000000U01') $$, '22P02', 'invalid base32 id: "0000000000U01"',
                 'a character outside base32 is refused');
SELECT throws_ok($$ SELECT snowflake_decode_text('8000000000000') $$, '22P02', 'invalid base32 id: "8000000000000"',
                 'base32 above the largest id is refused, not wrapped');
SELECT throws_ok($$ SELECT snowflake_decode_text('AzL8n0Y58m8', 'base62') $$, '22P02',
                 'invalid base62 id: "AzL8n0Y58m8"', 'base62 above the largest id is refused, not wrapped');
SELECT throws_ok($$ SELECT snowflake_decode_text('9223372036854775808', 'decimal') $$, '22P02',
                 'invalid decimal id: "9223372036854775808"', 'decimal above the largest id is refused');
SELECT throws_ok($$ SELECT uuidv7_typeid('Users') $$, '22023', 'invalid TypeID prefix: "Users"',
                 'uuidv7_typeid refuses an upper-case prefix');
SELECT throws_ok($$ SELECT snowflake_uuid_to_typeid(gen_random_uuid(), 'a1') $$, '22023',
                 'invalid TypeID prefix: "a1"', 'snowflake_uuid_to_typeid refuses a prefix with a digit');
SELECT throws_ok($$ SELECT snowflake_typeid_to_uuid('user_01H455VB4PEX5VSKNK084SN02Q') $$, '22P02',
                 'invalid TypeID: "user_01H455VB4PEX5VSKNK084SN02Q"', 'a TypeID is lower case');
SELECT throws_ok($$ SELECT snowflake_typeid_prefix('user-01h455vb4pex5vsknk084sn02q') $$, '22P02',
                 'invalid TypeID: "user-01h455vb4pex5vsknk084sn02q"', 'snowflake_typeid_prefix refuses a bad TypeID');
SELECT throws_ok($$ SELECT snowflake_ulid_to_uuid('81H455VB4PEX5VSKNK084SN02Q') $$, '22P02',
                 'invalid ULID: "81H455VB4PEX5VSKNK084SN02Q"', 'a ULID above 128 bits is refused');

-- The hint says what a valid value looks like; the detail names the position.
CREATE FUNCTION pg_temp.error_parts(query text, OUT state text, OUT detail text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    state := 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
END
$$;
SELECT is((SELECT detail FROM pg_temp.error_parts($$ SELECT snowflake_decode_text('00000*0000001') $$)),
          'At character 6: not a character of Crockford''s base32 (0-9 and A-Z without I, L, O, U).',
          'the detail of a bad character names its position');
SELECT ok((SELECT hint FROM pg_temp.error_parts($$ SELECT snowflake_decode_text('00000*0000001') $$))
          LIKE 'A base32 id is 13 characters%', 'the hint of a bad base32 id says what one looks like');
SELECT ok((SELECT hint FROM pg_temp.error_parts($$ SELECT snowflake_typeid_to_uuid('x') $$))
          LIKE 'A TypeID is %', 'the hint of a bad TypeID says what one looks like');
SELECT ok((SELECT hint FROM pg_temp.error_parts($$ SELECT snowflake_ulid_to_uuid('x') $$))
          LIKE 'A ULID is 26 characters%', 'the hint of a bad ULID says what one looks like');
SELECT is((SELECT state FROM pg_temp.error_parts($$ SELECT snowflake_decode_text('7ZZZZZZZZZZZZ') $$)),
          'no error', 'the largest id decodes');

SELECT * FROM finish();
ROLLBACK;
