-- snowflake_nextval(), snowflake_nextval_batch() and the statistics of the
-- generator, on an instance that preloads snowflake with
-- snowflake.worker_id = 42 (test/regress/preload.conf).
--
-- Ids and times depend on the clock: only their properties are printed.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- One id: positive, of this worker, made about now.
SELECT id > 0 AS positive,
       snowflake_worker_id(id) AS worker,
       abs(extract(epoch FROM snowflake_timestamp(id) - now())) < 1 AS within_a_second,
       snowflake_sequence(id) BETWEEN 0 AND 4095 AS sequence_in_range
FROM (SELECT snowflake_nextval() AS id) s;

-- The decoded time is the clock's, to the millisecond.
SELECT snowflake_timestamp(id) BETWEEN date_trunc('milliseconds', t0) AND t1 AS clock_time
FROM (SELECT clock_timestamp() AS t0, snowflake_nextval() AS id, clock_timestamp() AS t1) s;

-- 100,000 calls: strictly increasing in call order, all distinct, all of
-- worker 42.
WITH ids AS MATERIALIZED (
    SELECT n, snowflake_nextval() AS id FROM generate_series(1, 100000) AS n
), pairs AS (
    SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids
)
SELECT count(*) AS ids,
       count(DISTINCT id) AS distinct_ids,
       bool_and(prev < id) AS strictly_increasing,
       bool_and(snowflake_worker_id(id) = 42) AS all_worker_42
FROM pairs;

-- Ids of later statements are larger than those of earlier ones.
CREATE TEMP TABLE earlier AS SELECT snowflake_nextval() AS id;
SELECT snowflake_nextval() > id AS later_is_larger FROM earlier;
DROP TABLE earlier;

-- Batches: n distinct, strictly increasing ids of worker 42.
SELECT n AS requested, ids, distinct_ids, strictly_increasing, all_worker_42, all_recent
FROM (VALUES (1), (5000), (100000)) AS v(n),
LATERAL (
    SELECT count(*) AS ids,
           count(DISTINCT id) AS distinct_ids,
           coalesce(bool_and(prev < id), true) AS strictly_increasing,
           bool_and(snowflake_worker_id(id) = 42) AS all_worker_42,
           bool_and(abs(extract(epoch FROM snowflake_timestamp(id) - now())) < 5) AS all_recent
    FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
          FROM snowflake_nextval_batch(n) WITH ORDINALITY AS b(id, ord)) s
) r;

-- A batch follows the ids issued before it, and single ids follow the batch.
CREATE TEMP TABLE before_batch AS SELECT snowflake_nextval() AS id;
CREATE TEMP TABLE batch AS SELECT id FROM snowflake_nextval_batch(10000) AS b(id);
SELECT (SELECT min(id) FROM batch) > (SELECT id FROM before_batch) AS batch_after_single,
       snowflake_nextval() > (SELECT max(id) FROM batch) AS single_after_batch;
DROP TABLE before_batch, batch;

-- Batch sizes outside 1 to 1,000,000 are errors naming the size.
SELECT * FROM snowflake_nextval_batch(0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_nextval_batch(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_nextval_batch(1000001);
\echo :LAST_ERROR_SQLSTATE
-- STRICT: a NULL count returns no rows.
SELECT count(*) AS rows_for_null FROM snowflake_nextval_batch(NULL);

-- As a column default of a bigint primary key.
CREATE TABLE events (
    id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    n integer GENERATED ALWAYS AS IDENTITY,
    note text
);
INSERT INTO events (note) VALUES ('first');
INSERT INTO events (note) SELECT 'bulk ' || g FROM generate_series(1, 5000) AS g;
INSERT INTO events (note) VALUES ('last');
SELECT count(*) AS rows,
       count(DISTINCT id) AS distinct_ids,
       bool_and(prev < id) AS increasing_in_insert_order,
       bool_and(snowflake_worker_id(id) = 42) AS all_worker_42
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM events) s;
-- Explicit ids are still accepted; a duplicate is the primary key's error
-- (terse: the detail would show the id).
\set VERBOSITY terse
INSERT INTO events (id, note) SELECT id, 'again' FROM events WHERE note = 'first';
\set VERBOSITY default
DROP TABLE events;

-- The statistics view: one row, these columns, these types.
SELECT count(*) AS rows FROM snowflake_stats;
SELECT attname, format_type(atttypid, atttypmod) AS type
FROM pg_attribute
WHERE attrelid = 'snowflake_stats'::regclass AND attnum > 0
ORDER BY attnum;
SELECT worker_id,
       epoch = '2025-01-01 00:00:00+00' AS default_epoch,
       ids_issued > 0 AS ids_issued_positive,
       last_timestamp BETWEEN now() - interval '1 minute' AND clock_timestamp() AS last_timestamp_recent,
       overflow_waits >= 0 AS overflow_waits_nonnegative,
       clock_backwards_events >= 0 AS clock_backwards_events_nonnegative,
       clock_backwards_max_ms >= 0 AS clock_backwards_max_ms_nonnegative,
       clock_backwards_errors >= 0 AS clock_backwards_errors_nonnegative,
       since <= clock_timestamp() AS since_in_past,
       high_water_mark >= last_timestamp AS high_water_mark_covers_last_id,
       reservations > 0 AS reservations_positive,
       reservation_waits >= 0 AS reservation_waits_nonnegative,
       startup_waits >= 0 AS startup_waits_nonnegative
FROM snowflake_stats;
-- The high-water mark lives in the data directory: 32 bytes.
SELECT size AS mark_file_size FROM pg_stat_file('snowflake.mark');
-- The view and the function agree on the static columns.
SELECT (SELECT worker_id FROM snowflake_stats()) = (SELECT worker_id FROM snowflake_stats) AS same_worker,
       (SELECT epoch FROM snowflake_stats()) = (SELECT epoch FROM snowflake_stats) AS same_epoch;

-- ids_issued grows by exactly the number of ids taken (nothing else takes
-- ids while this runs).
CREATE TEMP TABLE stats_before AS SELECT * FROM snowflake_stats;
SELECT count(snowflake_nextval()) FROM generate_series(1, 1234);
SELECT count(*) FROM snowflake_nextval_batch(4321);
SELECT count(*) FROM snowflake_nextval_batch(1);
SELECT s.ids_issued - b.ids_issued AS ids_taken,
       s.overflow_waits >= b.overflow_waits AS overflow_waits_monotonic,
       s.last_timestamp >= b.last_timestamp AS last_timestamp_monotonic,
       s.since = b.since AS since_unchanged
FROM snowflake_stats s, stats_before b;
-- A failed batch takes no ids.
DROP TABLE stats_before;
CREATE TEMP TABLE stats_before AS SELECT * FROM snowflake_stats;
SELECT * FROM snowflake_nextval_batch(0);
SELECT s.ids_issued - b.ids_issued AS ids_taken FROM snowflake_stats s, stats_before b;
DROP TABLE stats_before;

-- snowflake_stats_reset() zeroes the counters and moves since.
SELECT since AS since_before_reset FROM snowflake_stats \gset
SELECT snowflake_stats_reset();
-- (reservations may grow again at once: the background worker renews the
-- high-water mark on its own.)
SELECT ids_issued,
       overflow_waits,
       clock_backwards_events,
       clock_backwards_max_ms,
       clock_backwards_errors,
       reservation_waits,
       startup_waits,
       since > :'since_before_reset' AS since_moved,
       since <= clock_timestamp() AS since_in_past,
       worker_id
FROM snowflake_stats;
SELECT count(snowflake_nextval()) FROM generate_series(1, 10);
SELECT ids_issued FROM snowflake_stats;
-- Reset keeps the generator going: later ids are still larger.
CREATE TEMP TABLE before_reset AS SELECT snowflake_nextval() AS id;
SELECT snowflake_stats_reset();
SELECT snowflake_nextval() > id AS increasing_across_reset FROM before_reset;
DROP TABLE before_reset;

-- snowflake_nextval() is PARALLEL SAFE: ids made in parallel workers are
-- unique, of worker 42, and counted.
CREATE TABLE parallel_rows AS SELECT g FROM generate_series(1, 100000) AS g;
ANALYZE parallel_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- (VERBOSE: the parallel scan's output is the snowflake_nextval() call.)
EXPLAIN (COSTS OFF, VERBOSE)
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(snowflake_worker_id(id) = 42) AS all_worker_42
FROM (SELECT snowflake_nextval() AS id FROM parallel_rows) s;
CREATE TEMP TABLE stats_before AS SELECT * FROM snowflake_stats;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(snowflake_worker_id(id) = 42) AS all_worker_42
FROM (SELECT snowflake_nextval() AS id FROM parallel_rows) s;
SELECT s.ids_issued - b.ids_issued AS ids_taken FROM snowflake_stats s, stats_before b;
-- The same with the whole query forced into a parallel worker.
-- (force_parallel_mode is debug_parallel_query from PostgreSQL 16 on.)
DO $$ BEGIN EXECUTE format('SET %I = on', CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END); END $$;
SELECT snowflake_worker_id(snowflake_nextval()) AS worker_in_parallel_worker;
DO $$ BEGIN EXECUTE format('RESET %I', CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END); END $$;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE parallel_rows, stats_before;

-- snowflake_stats_reset() is for superusers; other roles may make ids and
-- read the statistics.
CREATE ROLE regress_snowflake_user;
SET ROLE regress_snowflake_user;
SELECT snowflake_stats_reset();
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_worker_id(snowflake_nextval()) AS worker_as_user;
SELECT count(*) AS stats_function_rows_as_user FROM snowflake_stats();
-- The view is granted to PUBLIC, like the function behind it.
SELECT count(*) AS stats_view_rows_as_user FROM snowflake_stats;
RESET ROLE;
-- A superuser may grant it.
GRANT EXECUTE ON FUNCTION snowflake_stats_reset() TO regress_snowflake_user;
SET ROLE regress_snowflake_user;
SELECT snowflake_stats_reset();
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_stats_reset() FROM regress_snowflake_user;
DROP ROLE regress_snowflake_user;
