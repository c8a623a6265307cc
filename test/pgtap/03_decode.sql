-- Properties of the decoders, the constructors and the generator.
BEGIN;
SELECT plan(20);
SET LOCAL timezone = 'UTC';

-- Edge values of every field round trip.
CREATE TEMP TABLE cases ON COMMIT DROP AS
SELECT ts, w, s, snowflake_compose(ts, w, s) AS id
FROM (VALUES
    (timestamptz '2025-01-01 00:00:00+00', 0, 0),
    (timestamptz '2025-01-01 00:00:00+00', 1023, 4095),
    (timestamptz '2030-06-15 12:34:56.789+00', 42, 7),
    (timestamptz '2025-01-01 00:00:00+00' + 2199023255550 * interval '1 ms', 1, 4094),
    (timestamptz '2025-01-01 00:00:00+00' + 2199023255551 * interval '1 ms', 1023, 4095)
) AS v(ts, w, s);

SELECT results_eq(
    'SELECT snowflake_timestamp(id), snowflake_worker_id(id), snowflake_sequence(id) FROM cases ORDER BY id',
    'SELECT ts, w, s FROM cases ORDER BY id',
    'snowflake_timestamp/worker_id/sequence invert snowflake_compose');
SELECT results_eq(
    'SELECT d.ts, d.worker_id, d.sequence FROM cases, snowflake_decode(id) AS d ORDER BY id',
    'SELECT ts, w, s FROM cases ORDER BY id',
    'snowflake_decode(id) inverts snowflake_compose');
SELECT results_eq(
    $$SELECT d.ts, d.worker_id, d.sequence FROM cases, snowflake_decode(id, '2025-01-01 00:00:00+00') AS d ORDER BY id$$,
    'SELECT ts, w, s FROM cases ORDER BY id',
    'snowflake_decode(id, epoch) with the configured epoch agrees');
SELECT results_eq(
    $$SELECT snowflake_timestamp(id, '2010-11-04 01:42:54.657+00') FROM cases ORDER BY id$$,
    $$SELECT timestamptz '2010-11-04 01:42:54.657+00' + (ts - timestamptz '2025-01-01 00:00:00+00') FROM cases ORDER BY id$$,
    'another epoch shifts every decoded time by the difference of the epochs');
SELECT results_eq(
    'SELECT id FROM cases ORDER BY id',
    $$SELECT (((extract(epoch FROM ts - timestamptz '2025-01-01 00:00:00+00') * 1000)::bigint << 22)
              | (w::bigint << 12) | s::bigint) FROM cases ORDER BY 1$$,
    'composed ids follow the bit layout: ms << 22 | worker << 12 | sequence');
SELECT is(snowflake_compose(timestamptz '2025-01-01 00:00:00+00' + 2199023255551 * interval '1 ms', 1023, 4095),
          9223372036854775807, 'the last ms with every worker and sequence bit is max bigint');
SELECT is(snowflake_timestamp(0), timestamptz '2025-01-01 00:00:00+00', 'id 0 is the epoch');

-- The Twitter example (epoch 1288834974657 ms).
SELECT is(snowflake_timestamp(1212161410438242304, '2010-11-04 01:42:54.657+00'),
          timestamptz 'epoch' + ((1212161410438242304 >> 22) + 1288834974657) * interval '1 ms',
          'Twitter id 1212161410438242304: time');
SELECT is(snowflake_worker_id(1212161410438242304), ((1212161410438242304 >> 12) & 1023)::int,
          'Twitter id 1212161410438242304: worker bits');
SELECT is(snowflake_sequence(1212161410438242304), (1212161410438242304 & 4095)::int,
          'Twitter id 1212161410438242304: sequence bits');

-- snowflake_from_timestamp(t): the smallest id of t's millisecond.
SELECT ok(bool_and(snowflake_from_timestamp(t) <= snowflake_compose(t, w, s)
                   AND snowflake_from_timestamp(t) > snowflake_compose(t - interval '1 ms', w, s)),
          'snowflake_from_timestamp(t) <= any id at t, > any id of the ms before')
FROM (VALUES (timestamptz '2025-01-01 00:00:00.001+00'), ('2026-02-03 04:05:06.0075+00'), ('2060-01-01 00:00:00+00')) AS t(t),
     (VALUES (0), (1), (42), (1023)) AS w(w), (VALUES (0), (1), (4095)) AS s(s);
SELECT ok(snowflake_from_timestamp(clock_timestamp()) <= snowflake_nextval(),
          'snowflake_from_timestamp(now) <= the next id');

-- The generator.
SELECT is(snowflake_worker_id(snowflake_nextval()), 42, 'ids carry worker 42');
SELECT ok(abs(extract(epoch FROM snowflake_timestamp(snowflake_nextval()) - clock_timestamp())) < 1,
          'ids carry the current time');
SELECT ok(bool_and(prev < id), '20,000 ids strictly increasing')
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
      FROM (SELECT n, snowflake_nextval() AS id FROM generate_series(1, 20000) AS n) s) t;
SELECT results_eq(
    'SELECT count(*), count(DISTINCT id) FROM snowflake_nextval_batch(50000) AS id',
    'VALUES (50000::bigint, 50000::bigint)',
    'a batch of 50,000 has 50,000 distinct ids');
SELECT ok(bool_and(prev < id), 'a batch is strictly increasing')
FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
      FROM snowflake_nextval_batch(10000) WITH ORDINALITY AS b(id, ord)) s;

-- Statistics count what is taken.
CREATE TEMP TABLE before ON COMMIT DROP AS SELECT ids_issued FROM snowflake_stats;
SELECT is((SELECT count(*)::int FROM (SELECT snowflake_nextval() FROM generate_series(1, 777)) s), 777, 'took 777 ids');
SELECT is((SELECT s.ids_issued - b.ids_issued FROM snowflake_stats s, before b), 777::bigint,
          'ids_issued grew by exactly 777');
SELECT is((SELECT worker_id FROM snowflake_stats), 42, 'snowflake_stats shows worker 42');

SELECT * FROM finish();
ROLLBACK;
