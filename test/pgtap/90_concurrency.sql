-- Ids from several backends at once. test/pgtap.sh ran pgbench before this
-- file: 4 clients, each transaction inserting one snowflake_nextval() and a
-- snowflake_nextval_batch(10) into the UNLOGGED table sf_concurrency (primary
-- key id; n is a bigserial in insertion order; client is pgbench's client
-- id). sf_concurrency_run records what was asked and the statistics and
-- clock around the run.
BEGIN;
SELECT plan(8);

SELECT is((SELECT count(*) FROM sf_concurrency),
          (SELECT clients::bigint * transactions * ids_per_transaction FROM sf_concurrency_run),
          'every id pgbench asked for was inserted');
SELECT is((SELECT count(DISTINCT id) FROM sf_concurrency), (SELECT count(*) FROM sf_concurrency),
          'no duplicate ids across backends');
SELECT is((SELECT count(DISTINCT client)::int FROM sf_concurrency), (SELECT clients FROM sf_concurrency_run),
          'every client inserted ids');
SELECT ok((SELECT bool_and(snowflake_worker_id(id) = 42) FROM sf_concurrency), 'every id decodes to worker 42');
SELECT ok((SELECT bool_and(id > 0) FROM sf_concurrency), 'every id is positive');
SELECT ok((SELECT bool_and(prev < id)
           FROM (SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM sf_concurrency) s),
          'the ids of each client strictly increase');
SELECT ok((SELECT bool_and(snowflake_timestamp(id) BETWEEN date_trunc('milliseconds', r.started) AND r.finished)
           FROM sf_concurrency, sf_concurrency_run r),
          'every id decodes to a time during the run');
SELECT is((SELECT ids_after - ids_before FROM sf_concurrency_run),
          (SELECT count(*) FROM sf_concurrency),
          'snowflake_stats.ids_issued grew by exactly the ids inserted');

SELECT * FROM finish();
ROLLBACK;
