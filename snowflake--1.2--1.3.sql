-- snowflake 1.2 -> 1.3 (ALTER EXTENSION snowflake UPDATE TO '1.3').
--
-- Every object that snowflake--1.3.sql adds or changes compared with
-- snowflake--1.2.sql is added or changed here too (test/upgrade.sh compares
-- an updated database with a fresh install).

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

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

-- UUID version 7 (1.3) --------------------------------------------------------

CREATE FUNCTION uuidv7_at(ts timestamptz)
RETURNS uuid
AS 'MODULE_PATHNAME', 'snowflake_uuidv7_at'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION uuidv7_at(timestamptz) IS
'new UUID version 7 of the time ts (to the microsecond) with fresh random bits, for backfilling rows whose time is known';
