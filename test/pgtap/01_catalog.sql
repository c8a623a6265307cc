-- The SQL API of snowflake as the catalog records it: signatures, argument
-- names, return types, volatility, strictness, parallel safety, comments,
-- the statistics view and the privileges of snowflake_stats_reset().
-- (The uuidv7 functions and those of text ids and layouts are tested separately.)
BEGIN;
SELECT plan(69);

SELECT has_extension('snowflake', 'extension snowflake is installed');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'snowflake'), '1.3', 'version 1.3');
SELECT is(current_setting('snowflake.worker_id'), '42', 'this instance runs with snowflake.worker_id = 42');

-- Signatures.
SELECT has_function('public', 'snowflake_nextval', ARRAY[]::name[], 'snowflake_nextval()');
SELECT has_function('public', 'snowflake_nextval_batch', ARRAY['integer'], 'snowflake_nextval_batch(integer)');
SELECT has_function('public', 'snowflake_timestamp', ARRAY['bigint'], 'snowflake_timestamp(bigint)');
SELECT has_function('public', 'snowflake_timestamp', ARRAY['bigint', 'timestamp with time zone'], 'snowflake_timestamp(bigint, timestamptz)');
SELECT has_function('public', 'snowflake_worker_id', ARRAY['bigint'], 'snowflake_worker_id(bigint)');
SELECT has_function('public', 'snowflake_sequence', ARRAY['bigint'], 'snowflake_sequence(bigint)');
SELECT has_function('public', 'snowflake_decode', ARRAY['bigint'], 'snowflake_decode(bigint)');
SELECT has_function('public', 'snowflake_decode', ARRAY['bigint', 'timestamp with time zone'], 'snowflake_decode(bigint, timestamptz)');
SELECT has_function('public', 'snowflake_from_timestamp', ARRAY['timestamp with time zone'], 'snowflake_from_timestamp(timestamptz)');
SELECT has_function('public', 'snowflake_compose', ARRAY['timestamp with time zone', 'integer', 'integer'], 'snowflake_compose(timestamptz, integer, integer)');
SELECT has_function('public', 'snowflake_stats', ARRAY[]::name[], 'snowflake_stats()');
SELECT has_function('public', 'snowflake_stats_reset', ARRAY[]::name[], 'snowflake_stats_reset()');
SELECT has_function('public', 'snowflake_advance_floor', ARRAY['bigint'], 'snowflake_advance_floor(bigint)');

-- Return types.
SELECT function_returns('public', 'snowflake_nextval', ARRAY[]::name[], 'bigint');
SELECT function_returns('public', 'snowflake_nextval_batch', ARRAY['integer'], 'setof bigint');
SELECT function_returns('public', 'snowflake_timestamp', ARRAY['bigint'], 'timestamp with time zone');
SELECT function_returns('public', 'snowflake_timestamp', ARRAY['bigint', 'timestamp with time zone'], 'timestamp with time zone');
SELECT function_returns('public', 'snowflake_worker_id', ARRAY['bigint'], 'integer');
SELECT function_returns('public', 'snowflake_sequence', ARRAY['bigint'], 'integer');
SELECT function_returns('public', 'snowflake_decode', ARRAY['bigint'], 'record');
SELECT function_returns('public', 'snowflake_decode', ARRAY['bigint', 'timestamp with time zone'], 'record');
SELECT function_returns('public', 'snowflake_from_timestamp', ARRAY['timestamp with time zone'], 'bigint');
SELECT function_returns('public', 'snowflake_compose', ARRAY['timestamp with time zone', 'integer', 'integer'], 'bigint');
SELECT function_returns('public', 'snowflake_stats', ARRAY[]::name[], 'record');
SELECT function_returns('public', 'snowflake_stats_reset', ARRAY[]::name[], 'void');
SELECT function_returns('public', 'snowflake_advance_floor', ARRAY['bigint'], 'void');

-- Volatility: generators and statistics VOLATILE; the decoders and
-- constructors of this file read snowflake.layout (and, without an epoch
-- argument, snowflake.epoch), server settings, so they are STABLE. The
-- IMMUTABLE ones take the layout and epoch as arguments
-- (snowflake_decode_as() and the others of test/pgtap/09_layouts.sql).
SELECT volatility_is('public', 'snowflake_nextval', ARRAY[]::name[], 'volatile');
SELECT volatility_is('public', 'snowflake_nextval_batch', ARRAY['integer'], 'volatile');
SELECT volatility_is('public', 'snowflake_timestamp', ARRAY['bigint'], 'stable');
SELECT volatility_is('public', 'snowflake_timestamp', ARRAY['bigint', 'timestamp with time zone'], 'stable');
SELECT volatility_is('public', 'snowflake_worker_id', ARRAY['bigint'], 'stable');
SELECT volatility_is('public', 'snowflake_sequence', ARRAY['bigint'], 'stable');
SELECT volatility_is('public', 'snowflake_decode', ARRAY['bigint'], 'stable');
SELECT volatility_is('public', 'snowflake_decode', ARRAY['bigint', 'timestamp with time zone'], 'stable');
SELECT volatility_is('public', 'snowflake_from_timestamp', ARRAY['timestamp with time zone'], 'stable');
SELECT volatility_is('public', 'snowflake_compose', ARRAY['timestamp with time zone', 'integer', 'integer'], 'stable');
SELECT volatility_is('public', 'snowflake_stats', ARRAY[]::name[], 'volatile');
SELECT volatility_is('public', 'snowflake_stats_reset', ARRAY[]::name[], 'volatile');
SELECT volatility_is('public', 'snowflake_advance_floor', ARRAY['bigint'], 'volatile');
SELECT is_strict('public', 'snowflake_advance_floor', ARRAY['bigint']);

-- Decoders, constructors and the batch generator are STRICT.
SELECT is_strict('public', 'snowflake_nextval_batch', ARRAY['integer']);
SELECT is_strict('public', 'snowflake_timestamp', ARRAY['bigint']);
SELECT is_strict('public', 'snowflake_timestamp', ARRAY['bigint', 'timestamp with time zone']);
SELECT is_strict('public', 'snowflake_worker_id', ARRAY['bigint']);
SELECT is_strict('public', 'snowflake_sequence', ARRAY['bigint']);
SELECT is_strict('public', 'snowflake_decode', ARRAY['bigint']);
SELECT is_strict('public', 'snowflake_decode', ARRAY['bigint', 'timestamp with time zone']);
SELECT is_strict('public', 'snowflake_from_timestamp', ARRAY['timestamp with time zone']);
SELECT is_strict('public', 'snowflake_compose', ARRAY['timestamp with time zone', 'integer', 'integer']);

-- snowflake_nextval(), the decoders and the constructors are PARALLEL SAFE.
SELECT is_empty($$
    SELECT p.oid::regprocedure::text, p.proparallel
    FROM pg_proc p
    WHERE p.oid IN ('snowflake_nextval()'::regprocedure,
                    'snowflake_timestamp(bigint)'::regprocedure,
                    'snowflake_timestamp(bigint, timestamptz)'::regprocedure,
                    'snowflake_worker_id(bigint)'::regprocedure,
                    'snowflake_sequence(bigint)'::regprocedure,
                    'snowflake_decode(bigint)'::regprocedure,
                    'snowflake_decode(bigint, timestamptz)'::regprocedure,
                    'snowflake_from_timestamp(timestamptz)'::regprocedure,
                    'snowflake_compose(timestamptz, integer, integer)'::regprocedure)
      AND p.proparallel <> 's'
$$, 'snowflake_nextval, decoders and constructors are PARALLEL SAFE');

-- Argument names (callers may use named notation) and OUT columns.
SELECT results_eq($$
    SELECT p.proname::text COLLATE "default", pg_get_function_arguments(p.oid)
    FROM pg_proc p
    WHERE p.proname LIKE 'snowflake\_%'
      AND p.pronamespace = 'public'::regnamespace
    ORDER BY p.proname, p.pronargs
$$, $$ VALUES
    ('snowflake_advance_floor', 'after_id bigint'),
    ('snowflake_compose', 'ts timestamp with time zone, worker_id integer, sequence integer'),
    ('snowflake_compose_as', 'ts timestamp with time zone, worker_id integer, sequence integer, layout text'),
    ('snowflake_compose_as', 'ts timestamp with time zone, worker_id integer, sequence integer, layout text, epoch timestamp with time zone'),
    ('snowflake_convert', 'tab regclass, col name DEFAULT ''id''::name, drop_sequence boolean DEFAULT false, widen boolean DEFAULT false, raise_floor boolean DEFAULT false, dry_run boolean DEFAULT false'),
    ('snowflake_decode', 'id bigint, OUT ts timestamp with time zone, OUT worker_id integer, OUT sequence integer'),
    ('snowflake_decode', 'id bigint, epoch timestamp with time zone, OUT ts timestamp with time zone, OUT worker_id integer, OUT sequence integer'),
    ('snowflake_decode_as', 'id bigint, layout text, OUT ts timestamp with time zone, OUT worker_id integer, OUT sequence integer'),
    ('snowflake_decode_as', 'id bigint, layout text, epoch timestamp with time zone, OUT ts timestamp with time zone, OUT worker_id integer, OUT sequence integer'),
    ('snowflake_decode_text', 't text, format text DEFAULT ''base32''::text'),
    ('snowflake_encode', 'id bigint, format text DEFAULT ''base32''::text'),
    ('snowflake_from_timestamp', 'ts timestamp with time zone'),
    ('snowflake_from_timestamp_as', 'ts timestamp with time zone, layout text'),
    ('snowflake_from_timestamp_as', 'ts timestamp with time zone, layout text, epoch timestamp with time zone'),
    ('snowflake_layouts', 'OUT name text, OUT layout text, OUT id_bits integer, OUT workers integer, OUT ids_per_unit integer, OUT unit_ms integer, OUT lifetime_years numeric, OUT epoch timestamp with time zone, OUT lifetime_end timestamp with time zone, OUT note text'),
    ('snowflake_nextval', ''),
    ('snowflake_nextval_batch', 'count integer'),
    ('snowflake_sequence', 'id bigint'),
    ('snowflake_stats', 'OUT worker_id integer, OUT epoch timestamp with time zone, OUT ids_issued bigint, OUT last_timestamp timestamp with time zone, OUT overflow_waits bigint, OUT clock_backwards_events bigint, OUT clock_backwards_max_ms bigint, OUT clock_backwards_errors bigint, OUT since timestamp with time zone, OUT high_water_mark timestamp with time zone, OUT reservations bigint, OUT reservation_waits bigint, OUT startup_waits bigint, OUT reservation_window_ms bigint, OUT last_mark_write_ms bigint, OUT lease_state text, OUT lease_id bigint, OUT lease_deadline timestamp with time zone, OUT lease_renewals bigint, OUT lease_failures bigint, OUT lease_last_error text, OUT clock_synchronized boolean, OUT clock_max_error_ms double precision, OUT clock_est_error_ms double precision, OUT clock_health_refusals bigint, OUT coordinator text, OUT lease_session text, OUT lease_granted_ttl_ms bigint, OUT backup_worker_id integer, OUT backup_until timestamp with time zone, OUT clock_failovers bigint, OUT http_worker_id integer, OUT layout text, OUT ids_per_ms integer, OUT lifetime_end timestamp with time zone'),
    ('snowflake_stats_reset', ''),
    ('snowflake_timestamp', 'id bigint'),
    ('snowflake_timestamp', 'id bigint, epoch timestamp with time zone'),
    ('snowflake_typeid_prefix', 't text'),
    ('snowflake_typeid_to_uuid', 't text'),
    ('snowflake_ulid_to_uuid', 't text'),
    ('snowflake_uuid_to_typeid', 'u uuid, prefix text'),
    ('snowflake_uuid_to_ulid', 'u uuid'),
    ('snowflake_worker_id', 'id bigint')
$$, 'argument names and OUT columns of every snowflake_* function');

-- Every function of the API is commented, and so is the view.
SELECT is_empty($$
    SELECT p.oid::regprocedure::text
    FROM pg_proc p
    WHERE p.proname LIKE 'snowflake\_%'
      AND p.pronamespace = 'public'::regnamespace
      AND coalesce(obj_description(p.oid, 'pg_proc'), '') = ''
$$, 'every snowflake_* function has a COMMENT');
SELECT is((SELECT count(*)::int FROM pg_proc p
           WHERE p.proname LIKE 'snowflake\_%' AND p.pronamespace = 'public'::regnamespace),
          28, 'twenty-eight snowflake_* functions (the seven of text ids: test/pgtap/06_text_ids.sql; snowflake_convert: test/pgtap/08_convert.sql; the seven of layouts: test/pgtap/09_layouts.sql)');
SELECT isnt(obj_description('snowflake_stats'::regclass, 'pg_class'), NULL, 'the view snowflake_stats has a COMMENT');

-- The statistics view.
SELECT has_view('public', 'snowflake_stats', 'view snowflake_stats exists');
SELECT columns_are('public', 'snowflake_stats', ARRAY[
    'worker_id', 'epoch', 'ids_issued', 'last_timestamp', 'overflow_waits',
    'clock_backwards_events', 'clock_backwards_max_ms', 'clock_backwards_errors', 'since',
    'high_water_mark', 'reservations', 'reservation_waits', 'startup_waits',
    'reservation_window_ms', 'last_mark_write_ms',
    'lease_state', 'lease_id', 'lease_deadline', 'lease_renewals', 'lease_failures', 'lease_last_error',
    'clock_synchronized', 'clock_max_error_ms', 'clock_est_error_ms', 'clock_health_refusals',
    'coordinator', 'lease_session', 'lease_granted_ttl_ms',
    'backup_worker_id', 'backup_until', 'clock_failovers', 'http_worker_id',
    'layout', 'ids_per_ms', 'lifetime_end'],
    'snowflake_stats has the documented columns');
SELECT results_eq($$ SELECT count(*)::int FROM snowflake_stats $$, $$ VALUES (1) $$, 'snowflake_stats has one row');
-- This instance runs the default snowflake.layout: twitter's 4096 ids a
-- millisecond, and a lifetime of 2^41 ms from the epoch.
SELECT results_eq($$ SELECT layout, ids_per_ms, lifetime_end - epoch FROM snowflake_stats $$,
                  $$ VALUES ('twitter', 4096, interval '1 millisecond' * 2199023255552) $$,
                  'snowflake_stats shows the layout twitter, 4096 ids a millisecond, 2^41 ms of lifetime');

-- snowflake_stats_reset() is revoked from PUBLIC; the rest is not.
CREATE ROLE regress_sf_tap;
SELECT isnt((SELECT proacl FROM pg_proc WHERE oid = 'snowflake_stats_reset()'::regprocedure), NULL,
            'snowflake_stats_reset() has an explicit ACL (not the PUBLIC default)');
SELECT is_empty($$
    SELECT a.privilege_type
    FROM pg_proc p, aclexplode(p.proacl) a
    WHERE p.oid = 'snowflake_stats_reset()'::regprocedure AND a.grantee = 0
$$, 'PUBLIC holds no privilege on snowflake_stats_reset()');
SELECT function_privs_are('public', 'snowflake_stats_reset', ARRAY[]::name[], 'regress_sf_tap', ARRAY[]::text[],
                          'an ordinary role may not execute snowflake_stats_reset()');
SELECT throws_ok($$ SET LOCAL ROLE regress_sf_tap; SELECT snowflake_stats_reset() $$,
                 '42501', 'permission denied for function snowflake_stats_reset',
                 'calling snowflake_stats_reset() as an ordinary role is denied');
-- snowflake_advance_floor() is revoked from PUBLIC too.
SELECT is_empty($$
    SELECT a.privilege_type
    FROM pg_proc p, aclexplode(p.proacl) a
    WHERE p.oid = 'snowflake_advance_floor(bigint)'::regprocedure AND a.grantee = 0
$$, 'PUBLIC holds no privilege on snowflake_advance_floor()');
SELECT isnt((SELECT proacl FROM pg_proc WHERE oid = 'snowflake_advance_floor(bigint)'::regprocedure), NULL,
            'snowflake_advance_floor() has an explicit ACL (not the PUBLIC default)');
SELECT throws_ok($$ SET LOCAL ROLE regress_sf_tap; SELECT snowflake_advance_floor(1) $$,
                 '42501', 'permission denied for function snowflake_advance_floor',
                 'calling snowflake_advance_floor() as an ordinary role is denied');
SELECT function_privs_are('public', 'snowflake_nextval', ARRAY[]::name[], 'regress_sf_tap', ARRAY['EXECUTE'],
                          'an ordinary role may execute snowflake_nextval()');

SELECT * FROM finish();
ROLLBACK;
