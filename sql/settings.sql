-- The snowflake.* settings on an instance started with
-- shared_preload_libraries = 'snowflake' and snowflake.worker_id = 42; the
-- epoch and the clock tolerance keep their defaults.

SHOW snowflake.worker_id;
SHOW snowflake.epoch;
SHOW snowflake.clock_tolerance_ms;

SELECT name, setting, unit, context, vartype, boot_val, reset_val, min_val, max_val, source
FROM pg_settings
WHERE name LIKE 'snowflake.%'
ORDER BY name;

-- The generator uses the configured worker id.
SELECT snowflake_worker_id(snowflake_nextval()) = current_setting('snowflake.worker_id')::integer AS uses_setting;

-- worker_id and epoch need a restart; clock_tolerance_ms a reload. None can
-- be changed in a session.
SET snowflake.worker_id = 7;
\echo :LAST_ERROR_SQLSTATE
SET snowflake.worker_id = 2000;
\echo :LAST_ERROR_SQLSTATE
SET snowflake.epoch = '2020-01-01 00:00:00+00';
\echo :LAST_ERROR_SQLSTATE
SET snowflake.clock_tolerance_ms = 10;
\echo :LAST_ERROR_SQLSTATE
SELECT set_config('snowflake.clock_tolerance_ms', '10', false);
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET LOCAL snowflake.clock_tolerance_ms = 10;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
ALTER DATABASE contrib_regression SET snowflake.worker_id = 7;
\echo :LAST_ERROR_SQLSTATE
ALTER ROLE CURRENT_USER SET snowflake.clock_tolerance_ms = 10;
\echo :LAST_ERROR_SQLSTATE

-- Still the configured values.
SHOW snowflake.worker_id;
SHOW snowflake.clock_tolerance_ms;

-- "snowflake" is a reserved prefix: unknown names are rejected.
SET snowflake.nonexistent = 1;
\echo :LAST_ERROR_SQLSTATE
SHOW snowflake.nonexistent;
\echo :LAST_ERROR_SQLSTATE
SELECT current_setting('snowflake.nonexistent', true) IS NULL AS missing_ok_is_null;

-- Values are range-checked by the GUC machinery before they reach a file.
ALTER SYSTEM SET snowflake.worker_id = 1024;
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.worker_id = -2;
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.clock_tolerance_ms = 10001;
\echo :LAST_ERROR_SQLSTATE
-- A backup worker id needs leased ids: refused without a coordinator.
ALTER SYSTEM SET snowflake.clock_backwards = failover;
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.clock_backwards = sometimes;
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.epoch = 'not a time';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.epoch = 'now';
\echo :LAST_ERROR_SQLSTATE
-- An epoch the clock does not fit (later than now, or with less than a year
-- of its range left) is a valid setting: a clock that is wrong at boot must
-- not keep the server from starting. The server warns at start, and ids are
-- refused (SF002) while the clock is outside the range.
ALTER SYSTEM SET snowflake.epoch = '2999-01-01 00:00:00+00';
ALTER SYSTEM SET snowflake.epoch = '1900-01-01 00:00:00+00';
ALTER SYSTEM RESET snowflake.epoch;
-- A time zone name, or no offset at all, would tie the epoch to a time zone
-- setting (and an unknown zone name must never raise from the check hook).
ALTER SYSTEM SET snowflake.epoch = '2024-01-01 00:00:00 Foo/Bar';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.epoch = '2024-01-01 00:00:00 Europe/Berlin';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.epoch = '2024-01-01';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.epoch = '2024-02-30 00:00:00+00';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET snowflake.nonexistent = 1;
\echo :LAST_ERROR_SQLSTATE

-- clock_tolerance_ms follows a reload. A new session starts with the values
-- the postmaster reloaded (this one would only pick them up when idle).
ALTER SYSTEM SET snowflake.clock_tolerance_ms = 7;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
\c -
SHOW snowflake.clock_tolerance_ms;
-- worker_id only on a restart: after a reload it is still 42, pending.
ALTER SYSTEM SET snowflake.worker_id = 7;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
\c -
SHOW snowflake.worker_id;
SELECT name, pending_restart FROM pg_settings WHERE name LIKE 'snowflake.%' ORDER BY name;
SELECT snowflake_worker_id(snowflake_nextval()) AS worker_after_reload;
ALTER SYSTEM RESET snowflake.worker_id;
ALTER SYSTEM RESET snowflake.clock_tolerance_ms;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
\c -
SHOW snowflake.clock_tolerance_ms;
SELECT name, pending_restart FROM pg_settings WHERE name LIKE 'snowflake.%' ORDER BY name;
