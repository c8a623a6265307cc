-- Error paths: the exact SQLSTATE and message of every kind of bad input.
BEGIN;
SELECT plan(27);
SET LOCAL timezone = 'UTC';
SET LOCAL datestyle = 'ISO, YMD';

-- Batch sizes: 1 to 1,000,000.
SELECT throws_ok('SELECT count(*) FROM snowflake_nextval_batch(0)', '22023', 'batch size 0 is out of range', 'batch of 0');
SELECT throws_ok('SELECT count(*) FROM snowflake_nextval_batch(-1)', '22023', 'batch size -1 is out of range', 'batch of -1');
SELECT throws_ok('SELECT count(*) FROM snowflake_nextval_batch(1000001)', '22023', 'batch size 1000001 is out of range', 'batch of 1000001');
SELECT lives_ok('SELECT count(*) FROM snowflake_nextval_batch(1000000)', 'batch of 1000000');

-- Negative ids.
SELECT throws_ok('SELECT snowflake_timestamp(-1)', '22023', 'snowflake id -1 is negative', 'snowflake_timestamp(-1)');
SELECT throws_ok($$SELECT snowflake_timestamp(-1, '2025-01-01 00:00:00+00')$$, '22023', 'snowflake id -1 is negative', 'snowflake_timestamp(-1, epoch)');
SELECT throws_ok('SELECT snowflake_worker_id(-1)', '22023', 'snowflake id -1 is negative', 'snowflake_worker_id(-1)');
SELECT throws_ok('SELECT snowflake_sequence(-9223372036854775808)', '22023', 'snowflake id -9223372036854775808 is negative', 'snowflake_sequence(min bigint)');
SELECT throws_ok('SELECT snowflake_decode(-1)', '22023', 'snowflake id -1 is negative', 'snowflake_decode(-1)');
SELECT throws_ok($$SELECT snowflake_decode(-4194304, '2025-01-01 00:00:00+00')$$, '22023', 'snowflake id -4194304 is negative', 'snowflake_decode(-4194304, epoch)');

-- Epochs that are not finite, or too late for the id's time.
SELECT throws_ok($$SELECT snowflake_timestamp(0, 'infinity')$$, '22008', 'epoch must be finite', 'snowflake_timestamp(0, infinity)');
SELECT throws_ok($$SELECT snowflake_timestamp(0, '-infinity')$$, '22008', 'epoch must be finite', 'snowflake_timestamp(0, -infinity)');
SELECT throws_ok($$SELECT snowflake_decode(0, 'infinity')$$, '22008', 'epoch must be finite', 'snowflake_decode(0, infinity)');
SELECT throws_ok($$SELECT snowflake_timestamp(9223372036854775807, '294276-12-31 23:59:59.999999+00')$$, '22008', 'epoch 294276-12-31 23:59:59.999999+00 plus 2199023255551 ms is out of range for timestamp with time zone', 'time past the range of timestamptz');

-- Timestamps outside the id range of the epoch.
SELECT throws_ok($$SELECT snowflake_from_timestamp('infinity')$$, '22008', 'timestamp must be finite', 'snowflake_from_timestamp(infinity)');
SELECT throws_ok($$SELECT snowflake_from_timestamp('-infinity')$$, '22008', 'timestamp must be finite', 'snowflake_from_timestamp(-infinity)');
SELECT throws_ok($$SELECT snowflake_from_timestamp('2024-12-31 23:59:59.999+00')$$, '22008',
                 'timestamp 2024-12-31 23:59:59.999+00 is outside the id range of snowflake.epoch', 'a ms before the epoch');
SELECT throws_ok($$SELECT snowflake_from_timestamp('2094-09-07 15:47:35.552+00')$$, '22008',
                 'timestamp 2094-09-07 15:47:35.552+00 is outside the id range of snowflake.epoch', 'the first ms past the 41-bit range');
SELECT throws_ok($$SELECT snowflake_compose('infinity', 0, 0)$$, '22008', 'timestamp must be finite', 'snowflake_compose(infinity, ...)');
SELECT throws_ok($$SELECT snowflake_compose('2024-12-31 23:59:59.999999+00', 0, 0)$$, '22008',
                 'timestamp 2024-12-31 23:59:59.999999+00 is outside the id range of snowflake.epoch', 'a microsecond before the epoch');

-- Worker ids 0..1023, sequences 0..4095.
SELECT throws_ok($$SELECT snowflake_compose('2025-01-01 00:00:00+00', -1, 0)$$, '22023', 'worker id -1 is out of range', 'worker -1');
SELECT throws_ok($$SELECT snowflake_compose('2025-01-01 00:00:00+00', 1024, 0)$$, '22023', 'worker id 1024 is out of range', 'worker 1024');
SELECT throws_ok($$SELECT snowflake_compose('2025-01-01 00:00:00+00', 0, -1)$$, '22023', 'sequence -1 is out of range', 'sequence -1');
SELECT throws_ok($$SELECT snowflake_compose('2025-01-01 00:00:00+00', 0, 4096)$$, '22023', 'sequence 4096 is out of range', 'sequence 4096');

-- NULL in, NULL out (STRICT), never an error.
SELECT is(snowflake_timestamp(NULL), NULL, 'snowflake_timestamp(NULL) is NULL');
SELECT is(snowflake_compose(now(), NULL, 0), NULL, 'snowflake_compose(now(), NULL, 0) is NULL');
SELECT is((SELECT count(*)::int FROM snowflake_nextval_batch(NULL)), 0, 'snowflake_nextval_batch(NULL) returns no rows');

SELECT * FROM finish();
ROLLBACK;
