-- snowflake 1.1 -> 1.2 (ALTER EXTENSION snowflake UPDATE TO '1.2').
--
-- Every object that snowflake--1.2.sql adds or changes compared with
-- snowflake--1.1.sql is added or changed here too (test/upgrade.sh compares
-- an updated database with a fresh install).

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.2'" to load this file. \quit

-- snowflake_stats() gains the coordinator (etcd, zookeeper or none), the
-- lease or session id as the coordinator prints it, and the TTL (session
-- timeout) the coordinator granted, and the clock failover to a backup
-- worker id (snowflake.clock_backwards): the view is made again over it.
DROP VIEW snowflake_stats;
DROP FUNCTION snowflake_stats();

CREATE FUNCTION snowflake_stats(
    OUT worker_id integer,
    OUT epoch timestamptz,
    OUT ids_issued bigint,
    OUT last_timestamp timestamptz,
    OUT overflow_waits bigint,
    OUT clock_backwards_events bigint,
    OUT clock_backwards_max_ms bigint,
    OUT clock_backwards_errors bigint,
    OUT since timestamptz,
    OUT high_water_mark timestamptz,
    OUT reservations bigint,
    OUT reservation_waits bigint,
    OUT startup_waits bigint,
    OUT reservation_window_ms bigint,
    OUT last_mark_write_ms bigint,
    OUT lease_state text,
    OUT lease_id bigint,
    OUT lease_deadline timestamptz,
    OUT lease_renewals bigint,
    OUT lease_failures bigint,
    OUT lease_last_error text,
    OUT clock_synchronized boolean,
    OUT clock_max_error_ms double precision,
    OUT clock_est_error_ms double precision,
    OUT clock_health_refusals bigint,
    OUT coordinator text,
    OUT lease_session text,
    OUT lease_granted_ttl_ms bigint,
    OUT backup_worker_id integer,
    OUT backup_until timestamptz,
    OUT clock_failovers bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_stats() IS
'counters of this node''s id generator since the server started or the last snowflake_stats_reset()';

CREATE VIEW snowflake_stats AS SELECT * FROM snowflake_stats();
COMMENT ON VIEW snowflake_stats IS
'counters of this node''s id generator, one row';
GRANT SELECT ON snowflake_stats TO PUBLIC;
