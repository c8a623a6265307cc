-- snowflake_convert (extension 1.3): its catalog entry (signature, argument
-- names and defaults, result, volatility, strictness, parallel safety,
-- security, language, search_path, comment, privileges) and, briefly, that a
-- table owner who is no superuser may call it and a dry run changes nothing.
-- Every path and every refusal: sql/convert.sql.
BEGIN;
SELECT plan(16);

SELECT has_function('public', 'snowflake_convert',
                    ARRAY['regclass', 'name', 'boolean', 'boolean', 'boolean', 'boolean'],
                    'snowflake_convert(regclass, name, boolean, boolean, boolean, boolean)');
SELECT function_returns('public', 'snowflake_convert',
                        ARRAY['regclass', 'name', 'boolean', 'boolean', 'boolean', 'boolean'], 'setof text');
SELECT is(pg_get_function_arguments('snowflake_convert(regclass, name, boolean, boolean, boolean, boolean)'::regprocedure),
          'tab regclass, col name DEFAULT ''id''::name, drop_sequence boolean DEFAULT false, widen boolean DEFAULT false, raise_floor boolean DEFAULT false, dry_run boolean DEFAULT false',
          'argument names and defaults: the options are off unless asked for');
SELECT function_lang_is('public', 'snowflake_convert',
                        ARRAY['regclass', 'name', 'boolean', 'boolean', 'boolean', 'boolean'], 'plpgsql');
SELECT volatility_is('public', 'snowflake_convert',
                     ARRAY['regclass', 'name', 'boolean', 'boolean', 'boolean', 'boolean'], 'volatile');
SELECT isnt_strict('public', 'snowflake_convert',
                   ARRAY['regclass', 'name', 'boolean', 'boolean', 'boolean', 'boolean'],
                   'not STRICT: a NULL argument is an error (22004), not a silent empty result');
SELECT is((SELECT proparallel FROM pg_proc WHERE oid = 'snowflake_convert(regclass, name, boolean, boolean, boolean, boolean)'::regprocedure),
          'u'::"char", 'PARALLEL UNSAFE (it runs DDL)');
SELECT isnt_definer('public', 'snowflake_convert',
                    ARRAY['regclass', 'name', 'boolean', 'boolean', 'boolean', 'boolean'],
                    'SECURITY INVOKER: it alters tables with the caller''s rights');
SELECT is((SELECT proconfig FROM pg_proc WHERE oid = 'snowflake_convert(regclass, name, boolean, boolean, boolean, boolean)'::regprocedure),
          ARRAY['search_path=pg_catalog, pg_temp'], 'its search_path is pinned');
SELECT isnt(obj_description('snowflake_convert(regclass, name, boolean, boolean, boolean, boolean)'::regprocedure, 'pg_proc'),
            NULL, 'snowflake_convert has a COMMENT');

-- Not revoked from PUBLIC: it checks ownership itself, and ALTER TABLE
-- checks it again.
CREATE ROLE regress_sf_convert;
SELECT function_privs_are('public', 'snowflake_convert',
                          ARRAY['regclass', 'name', 'boolean', 'boolean', 'boolean', 'boolean'],
                          'regress_sf_convert', ARRAY['EXECUTE'], 'an ordinary role may execute snowflake_convert()');
CREATE TABLE tap_convert (id bigserial PRIMARY KEY);
ALTER TABLE tap_convert OWNER TO regress_sf_convert;
ALTER SEQUENCE tap_convert_id_seq OWNER TO regress_sf_convert;
SET LOCAL ROLE regress_sf_convert;
SELECT results_eq($$ SELECT * FROM snowflake_convert('tap_convert', dry_run => true) $$,
                  ARRAY['LOCK TABLE public.tap_convert IN ACCESS EXCLUSIVE MODE',
                        'ALTER TABLE ONLY public.tap_convert ALTER COLUMN id SET DEFAULT public.snowflake_nextval()'],
                  'a dry run by the owner returns the statements');
SELECT is(pg_get_expr(adbin, adrelid), 'nextval(''tap_convert_id_seq''::regclass)', 'a dry run changes nothing')
FROM pg_attrdef WHERE adrelid = 'tap_convert'::regclass;
SELECT results_eq($$ SELECT count(*)::int FROM snowflake_convert('tap_convert', drop_sequence => true) $$,
                  ARRAY[3], 'the owner converts the table and drops the sequence');
SELECT is(pg_get_expr(adbin, adrelid), 'snowflake_nextval()', 'the column draws snowflake_nextval()')
FROM pg_attrdef WHERE adrelid = 'tap_convert'::regclass;
RESET ROLE;
SELECT throws_ok($$ SET LOCAL ROLE regress_sf_convert; SELECT snowflake_convert('snowflake_stats') $$,
                 '42809', '"public.snowflake_stats" is not a table', 'a view is refused with 42809');

SELECT * FROM finish();
ROLLBACK;
