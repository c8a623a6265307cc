-- snowflake without shared_preload_libraries (test/regress/no_preload.conf).
-- CREATE EXTENSION works and so do the decoders and constructors; everything
-- that needs the shared generator state fails with SQLSTATE 55000
-- (object_not_in_prerequisite_state) and a hint naming
-- shared_preload_libraries.
--
-- The configuration file sets snowflake.epoch = '2020-01-01 00:00:00+00'
-- (not the default): the decoders read it even though the setting is not
-- defined without preload.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set SHOW_CONTEXT never

CREATE EXTENSION snowflake;
SELECT extname, extversion FROM pg_extension WHERE extname = 'snowflake';
SELECT current_setting('shared_preload_libraries') AS shared_preload_libraries;

-- The generator and the statistics need the shared state.
SELECT snowflake_nextval();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_nextval_batch(10);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_stats();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_stats;
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_stats_reset();
\echo :LAST_ERROR_SQLSTATE
-- As a column default, the insert fails the same way.
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), note text);
INSERT INTO events (note) VALUES ('x');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows FROM events;
DROP TABLE events;
-- A bad batch size is reported as such.
SELECT * FROM snowflake_nextval_batch(0);
\echo :LAST_ERROR_SQLSTATE

-- Decoders and constructors work, under the configured epoch.
SELECT snowflake_timestamp(0) = '2020-01-01 00:00:00+00' AS configured_epoch;
SELECT snowflake_compose('2030-06-15 12:34:56.789+00', 42, 7) AS id \gset
SELECT snowflake_timestamp(:id) = '2030-06-15 12:34:56.789+00' AS ts_ok,
       snowflake_worker_id(:id) AS worker_id,
       snowflake_sequence(:id) AS sequence,
       (snowflake_decode(:id)).ts = '2030-06-15 12:34:56.789+00' AS decode_ts_ok,
       (snowflake_decode(:id)).worker_id AS decode_worker_id,
       (snowflake_decode(:id)).sequence AS decode_sequence,
       :id = (((extract(epoch FROM timestamptz '2030-06-15 12:34:56.789+00'
                                 - timestamptz '2020-01-01 00:00:00+00') * 1000)::bigint << 22)
              | (42 << 12) | 7) AS layout_bits;
SELECT snowflake_timestamp(:id, '2020-01-01 00:00:00+00') = '2030-06-15 12:34:56.789+00' AS ts_epoch_ok,
       (snowflake_decode(:id, '2010-11-04 01:42:54.657+00')).ts
         = timestamptz '2030-06-15 12:34:56.789+00' - (timestamptz '2020-01-01 00:00:00+00' - timestamptz '2010-11-04 01:42:54.657+00') AS other_epoch_ok;
SELECT snowflake_from_timestamp('2020-01-01 00:00:00+00') AS first_id,
       snowflake_from_timestamp('2030-06-15 12:34:56.789+00') = snowflake_compose('2030-06-15 12:34:56.789+00', 0, 0) AS from_timestamp_ok;
-- The 41-bit range of the configured epoch still bounds the constructors.
SELECT snowflake_from_timestamp('2019-12-31 23:59:59.999+00');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_compose('2030-01-01 00:00:00+00', 1024, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_worker_id(-1);
\echo :LAST_ERROR_SQLSTATE
-- STRICT.
SELECT snowflake_timestamp(NULL) IS NULL AS strict_timestamp,
       snowflake_compose(NULL, 1, 1) IS NULL AS strict_compose;

-- Without preload snowflake.epoch is only a placeholder, which any session may
-- SET; the decoders ignore a session's value and keep the configured one.
SET snowflake.epoch = '2999-01-01 00:00:00+00';
SELECT snowflake_timestamp(0) = '2999-01-01 00:00:00+00' AS session_epoch_used;
SET snowflake.epoch = 'not a time';
SELECT snowflake_timestamp(0);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_worker_id(0) AS worker_id_needs_no_epoch;
RESET snowflake.epoch;
SELECT snowflake_timestamp(0) = '2020-01-01 00:00:00+00' AS configured_epoch_again;

DROP EXTENSION snowflake;
