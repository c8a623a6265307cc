-- A node with snowflake.layout = 'js-safe' (test/pgtap.sh's second
-- instance, worker 42): its ids, decoders and constructors in that layout,
-- and its refusals. 90_concurrency.sql runs after this file on the same node.
BEGIN;
SELECT plan(16);

SELECT is(current_setting('snowflake.layout'), 'js-safe', 'the node runs js-safe');
SELECT results_eq($$ SELECT layout, ids_per_ms FROM snowflake_stats $$,
                  $$ VALUES ('js-safe'::text, 64) $$,
                  'snowflake_stats names the layout and its 64 ids a millisecond');
SELECT is((SELECT lifetime_end - epoch FROM snowflake_stats), interval '1 millisecond' * 2199023255552,
          'its lifetime is 2^41 ms from the epoch');

CREATE TEMP TABLE js_ids ON COMMIT DROP AS
SELECT id FROM snowflake_nextval_batch(5000) AS id
UNION ALL SELECT snowflake_nextval() FROM generate_series(1, 1000);
SELECT is((SELECT count(DISTINCT id) FROM js_ids), 6000::bigint, '6,000 distinct ids');
SELECT ok((SELECT max(id) < 9007199254740992 FROM js_ids), 'every id below 2^53');
SELECT ok((SELECT bool_and(snowflake_worker_id(id) = 42 AND (id >> 6) & 63 = 42) FROM js_ids),
          'worker 42, in bits 11 to 6');
SELECT ok((SELECT bool_and(snowflake_sequence(id) = id & 63) FROM js_ids), 'the sequence in bits 5 to 0');
SELECT ok((SELECT bool_and((snowflake_decode_as(id, 'js-safe', current_setting('snowflake.epoch')::timestamptz)).ts
                           = snowflake_timestamp(id)) FROM js_ids),
          'snowflake_timestamp() agrees with snowflake_decode_as(id, ''js-safe'', epoch)');

SELECT is(snowflake_compose(current_setting('snowflake.epoch')::timestamptz + interval '1 millisecond' * 2199023255551,
                            63, 63),
          9007199254740991::bigint, 'the last id of the lifetime is 2^53 - 1');
SELECT is(snowflake_from_timestamp(current_setting('snowflake.epoch')::timestamptz + interval '5 milliseconds'),
          5::bigint << 12, 'snowflake_from_timestamp(): the millisecond above 12 bits');

SELECT throws_ok($$ SELECT snowflake_worker_id(9007199254740992) $$, '22003', NULL,
                 'an id at 2^53 is no id of this node (22003)');
SELECT throws_ok($$ SELECT snowflake_decode(9223372036854775807) $$, '22003', NULL,
                 'nor is the largest bigint');
SELECT throws_ok($$ SELECT snowflake_advance_floor(9007199254740992) $$, '22003', NULL,
                 'snowflake_advance_floor() refuses it too');
SELECT throws_ok($$ SELECT snowflake_compose(now(), 64, 0) $$, '22023', 'worker id 64 is out of range',
                 'worker id 64 does not fit 6 bits');
SELECT throws_ok($$ SELECT snowflake_compose(now(), 0, 64) $$, '22023', 'sequence 64 is out of range',
                 'sequence 64 does not fit 6 bits');
SELECT is((SELECT provolatile FROM pg_proc WHERE oid = 'snowflake_worker_id(bigint)'::regprocedure), 's',
          'a decoder that reads the node''s layout is STABLE');

SELECT * FROM finish();
ROLLBACK;
