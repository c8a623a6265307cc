-- The TypeID specification's vectors (test/vectors/typeid/valid.yml and
-- invalid.yml, version 0.3.0), checked through SQL. test/pgtap.sh loads the
-- files into typeid_valid and typeid_invalid and counts each file's entries
-- apart from the loading (typeid_vector_files), so a case lost on the way
-- fails here; the plan follows from the tables, one test per check of each
-- case.
BEGIN;
SELECT plan((SELECT 3 + 3 * (SELECT count(*) FROM typeid_valid) + 2 * (SELECT count(*) FROM typeid_invalid))::int);

SELECT is((SELECT count(*)::int FROM typeid_valid), (SELECT entries FROM typeid_vector_files WHERE file = 'valid'),
          'every entry of valid.yml is loaded');
SELECT is((SELECT count(*)::int FROM typeid_invalid),
          (SELECT entries FROM typeid_vector_files WHERE file = 'invalid'),
          'every entry of invalid.yml is loaded');
SELECT ok((SELECT count(*) FROM typeid_valid) > 0 AND (SELECT count(*) FROM typeid_invalid) > 0,
          'both files have cases');

-- Valid: decodes to its UUID and prefix, and the UUID and prefix encode to it.
SELECT is(snowflake_typeid_to_uuid(typeid), uuid, 'valid ' || name || ': snowflake_typeid_to_uuid')
FROM typeid_valid ORDER BY name;
SELECT is(snowflake_typeid_prefix(typeid), prefix, 'valid ' || name || ': snowflake_typeid_prefix')
FROM typeid_valid ORDER BY name;
SELECT is(snowflake_uuid_to_typeid(uuid, prefix), typeid, 'valid ' || name || ': snowflake_uuid_to_typeid')
FROM typeid_valid ORDER BY name;

-- Invalid: refused as bad text by both decoders.
SELECT throws_ok(format('SELECT snowflake_typeid_to_uuid(%L)', typeid), '22P02', NULL,
                 'invalid ' || name || ': snowflake_typeid_to_uuid refuses it')
FROM typeid_invalid ORDER BY name;
SELECT throws_ok(format('SELECT snowflake_typeid_prefix(%L)', typeid), '22P02', NULL,
                 'invalid ' || name || ': snowflake_typeid_prefix refuses it')
FROM typeid_invalid ORDER BY name;

SELECT * FROM finish();
ROLLBACK;
