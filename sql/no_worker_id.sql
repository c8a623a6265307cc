-- snowflake preloaded without snowflake.worker_id
-- (test/regress/no_worker_id.conf): ids are refused with an error naming the
-- setting (SQLSTATE 55000); statistics and decoders work.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set SHOW_CONTEXT never

CREATE EXTENSION snowflake;
SHOW snowflake.worker_id;

SELECT snowflake_nextval();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_nextval_batch(10);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_nextval_batch(1000001);
\echo :LAST_ERROR_SQLSTATE

-- The statistics show the worker id as NULL and nothing issued.
SELECT worker_id IS NULL AS worker_id_null,
       epoch = '2025-01-01 00:00:00+00' AS default_epoch,
       ids_issued,
       last_timestamp IS NULL AS last_timestamp_null,
       overflow_waits
FROM snowflake_stats;
SELECT snowflake_stats_reset();

-- Decoders and constructors need no worker id.
SELECT snowflake_worker_id(snowflake_compose('2030-01-01 00:00:00+00', 1023, 4095)) AS worker_id,
       snowflake_timestamp(snowflake_from_timestamp('2030-01-01 00:00:00+00')) = '2030-01-01 00:00:00+00' AS ts_ok;

DROP EXTENSION snowflake;
