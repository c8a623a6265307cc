-- Ids of any layout (extension 1.3): the catalog entries of
-- snowflake_decode_as, snowflake_compose_as, snowflake_from_timestamp_as and
-- snowflake_layouts (return types, volatility, strictness, parallel safety,
-- comments, argument names), the properties that tie them to the decoders of
-- the node's layout, and the SQLSTATE of each kind of error. Published ids and
-- the messages with their details and hints are in sql/layouts.sql.
BEGIN;
SELECT plan(26);
SET LOCAL timezone = 'UTC';

CREATE TEMP TABLE layout_functions ON COMMIT DROP AS
SELECT unnest(ARRAY['snowflake_decode_as(bigint, text)', 'snowflake_decode_as(bigint, text, timestamptz)',
                    'snowflake_compose_as(timestamptz, integer, integer, text)',
                    'snowflake_compose_as(timestamptz, integer, integer, text, timestamptz)',
                    'snowflake_from_timestamp_as(timestamptz, text)',
                    'snowflake_from_timestamp_as(timestamptz, text, timestamptz)',
                    'snowflake_layouts()']::regprocedure[]) AS f;
SELECT is((SELECT count(*)::int FROM layout_functions), 7, 'seven functions of layouts');

-- Return types.
SELECT function_returns('public', 'snowflake_decode_as', ARRAY['bigint', 'text'], 'record');
SELECT function_returns('public', 'snowflake_decode_as', ARRAY['bigint', 'text', 'timestamp with time zone'], 'record');
SELECT function_returns('public', 'snowflake_compose_as', ARRAY['timestamp with time zone', 'integer', 'integer', 'text'], 'bigint');
SELECT function_returns('public', 'snowflake_compose_as',
                        ARRAY['timestamp with time zone', 'integer', 'integer', 'text', 'timestamp with time zone'], 'bigint');
SELECT function_returns('public', 'snowflake_from_timestamp_as', ARRAY['timestamp with time zone', 'text'], 'bigint');
SELECT function_returns('public', 'snowflake_from_timestamp_as',
                        ARRAY['timestamp with time zone', 'text', 'timestamp with time zone'], 'bigint');
SELECT function_returns('public', 'snowflake_layouts', ARRAY[]::name[], 'setof record');

-- Every one depends on its arguments only: IMMUTABLE, PARALLEL SAFE,
-- commented; all but snowflake_layouts() (no arguments) STRICT.
SELECT is_empty($$ SELECT f::text FROM layout_functions JOIN pg_proc p ON p.oid = f WHERE p.provolatile <> 'i' $$,
                'the functions of layouts are IMMUTABLE');
SELECT is_empty($$ SELECT f::text FROM layout_functions JOIN pg_proc p ON p.oid = f WHERE p.proparallel <> 's' $$,
                'the functions of layouts are PARALLEL SAFE');
SELECT is_empty($$ SELECT f::text FROM layout_functions JOIN pg_proc p ON p.oid = f
                   WHERE NOT p.proisstrict AND p.pronargs > 0 $$,
                'the functions of layouts with arguments are STRICT');
SELECT is_empty($$ SELECT f::text FROM layout_functions WHERE coalesce(obj_description(f, 'pg_proc'), '') = '' $$,
                'every function of layouts has a COMMENT');
SELECT is(snowflake_compose_as(layout => 'discord', sequence => 7, worker_id => 32, ts => '2016-04-30 11:18:25.796+00'),
          175928847299117063::bigint, 'named notation');

-- Properties: the profile twitter is the node's layout; each profile's text
-- form names the same layout; ids order by time under every profile.
SELECT is_empty($$
    SELECT ms FROM generate_series(0, 2199023255551, 2199023255551 / 97) AS ms,
           LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00' + ms * interval '1 ms' AS ts) AS t
    WHERE snowflake_compose_as(ts, 1023, 4095, 'twitter', '2025-01-01 00:00:00+00')
          <> (ms << 22) | (1023 << 12) | 4095
$$, 'twitter composes the bits of the node''s layout');
SELECT is_empty($$
    SELECT name FROM snowflake_layouts()
    WHERE epoch IS NOT NULL
      AND snowflake_compose_as(epoch + interval '1 day', 3, 2, layout, epoch)
          <> snowflake_compose_as(epoch + interval '1 day', 3, 2, name)
$$, 'a profile''s text form and its name build the same ids (with the profile''s epoch)');
SELECT is_empty($$
    SELECT name FROM snowflake_layouts(),
           LATERAL (SELECT coalesce(epoch, '2025-01-01 00:00:00+00') AS e) AS x
    WHERE snowflake_compose_as(e + interval '1 year', workers - 1, ids_per_unit - 1, layout, e)
          >= snowflake_from_timestamp_as(e + interval '1 year' + unit_ms * interval '1 ms', layout, e)
$$, 'under every profile the next unit''s first id is above the last id of this one');
SELECT is_empty($$
    SELECT name FROM snowflake_layouts(),
           LATERAL (SELECT coalesce(epoch, '2025-01-01 00:00:00+00') AS e) AS x
    WHERE snowflake_compose_as(e, workers - 1, ids_per_unit - 1, layout, e) >= 2 ^ id_bits
$$, 'ids stay below 2^id_bits');

-- The SQLSTATE of each kind of error.
SELECT throws_ok($$ SELECT snowflake_decode_as(1, 'twiter') $$, '22023', 'invalid layout "twiter"', 'an unknown profile');
SELECT throws_ok($$ SELECT snowflake_decode_as(1, 'time 42, worker 10, sequence 12', '2025-01-01+00') $$, '22023',
                 'invalid layout "time 42, worker 10, sequence 12"', 'a layout wider than 63 bits');
SELECT throws_ok($$ SELECT snowflake_decode_as(1, 'js-safe') $$, '22023', 'layout "js-safe" has no epoch of its own',
                 'an epoch is needed for a layout without one');
SELECT throws_ok($$ SELECT snowflake_decode_as(9007199254740992, 'js-safe', '2025-01-01+00') $$, '22023',
                 'snowflake id 9007199254740992 does not fit layout "js-safe"', 'an id above the layout''s bits');
SELECT throws_ok($$ SELECT snowflake_decode_as(-1, 'discord') $$, '22023', 'snowflake id -1 is negative', 'a negative id');
SELECT throws_ok($$ SELECT snowflake_compose_as('2016-01-01+00', 1024, 0, 'discord') $$, '22023',
                 'worker id 1024 is out of range', 'a worker id beyond the layout''s');
SELECT throws_ok($$ SELECT snowflake_compose_as('2016-01-01+00', 0, 256, 'sonyflake') $$, '22023',
                 'sequence 256 is out of range', 'a sequence beyond the layout''s');
SELECT throws_ok($$ SELECT snowflake_compose_as('2014-12-31 23:59:59.999+00', 0, 0, 'discord') $$, '22008',
                 'timestamp 2014-12-31 23:59:59.999+00 is outside the id range of layout "discord"', 'a time before the epoch');
SELECT throws_ok($$ SELECT snowflake_from_timestamp_as('2025-01-01+00', 'worker 4, time 30, sequence 2', '2025-01-01+00') $$,
                 '22023', 'layout "worker 4, time 30, sequence 2" does not order ids by time',
                 'no range-scan bound when time is not the top field');

SELECT * FROM finish();
ROLLBACK;
