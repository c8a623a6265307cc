-- Decoders and constructors: snowflake_timestamp, snowflake_worker_id,
-- snowflake_sequence, snowflake_decode (with the configured epoch and with an
-- explicit one), snowflake_compose and snowflake_from_timestamp.
--
-- The instance runs with the default snowflake.epoch, 2025-01-01 00:00:00+00.
-- The last millisecond of its 41-bit range is 2^41 - 1 = 2199023255551 ms
-- after it. Composed ids are checked against the bit layout computed in SQL:
--   id = (ms << 22) | (worker << 12) | sequence
-- (PostgreSQL gives << and | the same precedence: hence the parentheses.)

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

CREATE TEMP TABLE layout AS
SELECT timestamptz '2025-01-01 00:00:00+00' AS epoch,
       timestamptz '2025-01-01 00:00:00+00' + 2199023255551 * interval '1 millisecond' AS last_ms,
       timestamptz '2010-11-04 01:42:54.657+00' AS twitter_epoch;

-- The layout's last millisecond is the one the configured epoch allows.
SELECT last_ms = timestamptz '2094-09-07 15:47:35.551+00' AS last_ms_as_expected,
       twitter_epoch = timestamptz 'epoch' + 1288834974657 * interval '1 millisecond' AS twitter_epoch_is_1288834974657_ms
FROM layout;

-- Round trips at the edges of every field.
CREATE TEMP TABLE cases AS
SELECT label, ts, worker, seq, snowflake_compose(ts, worker, seq) AS id
FROM layout,
LATERAL (VALUES
    ('epoch, worker 0, sequence 0',           epoch,                               0,    0),
    ('epoch, worker 1023, sequence 4095',     epoch,                               1023, 4095),
    ('epoch + 1 ms, worker 1, sequence 1',    epoch + interval '1 millisecond',    1,    1),
    ('ordinary',                              timestamptz '2030-06-15 12:34:56.789+00', 42, 7),
    ('a ms before the end, worker 0, seq 0',  last_ms - interval '1 millisecond',  0,    0),
    ('last ms, worker 0, sequence 0',         last_ms,                             0,    0),
    ('last ms, worker 1023, sequence 4095',   last_ms,                             1023, 4095),
    ('last ms, worker 512, sequence 2048',    last_ms,                             512,  2048)
) AS v(label, ts, worker, seq);

SELECT label,
       id >= 0 AS nonnegative,
       id = (((extract(epoch FROM ts - epoch) * 1000)::bigint << 22)
             | (worker::bigint << 12) | seq::bigint) AS layout_bits,
       snowflake_timestamp(id) = ts AS ts_ok,
       snowflake_timestamp(id, epoch) = ts AS ts_epoch_ok,
       snowflake_worker_id(id) = worker AS worker_ok,
       snowflake_sequence(id) = seq AS seq_ok,
       (snowflake_decode(id)).ts = ts
         AND (snowflake_decode(id)).worker_id = worker
         AND (snowflake_decode(id)).sequence = seq AS decode_ok,
       (snowflake_decode(id, epoch)).ts = ts
         AND (snowflake_decode(id, epoch)).worker_id = worker
         AND (snowflake_decode(id, epoch)).sequence = seq AS decode_epoch_ok,
       snowflake_timestamp(id, twitter_epoch) = twitter_epoch + (ts - epoch) AS other_epoch_ok,
       (snowflake_decode(id, twitter_epoch)).worker_id = worker AS other_epoch_worker_ok
FROM cases, layout
ORDER BY id, label;

-- The extreme ids: 0 is the epoch, max bigint the last millisecond with
-- every worker and sequence bit set.
SELECT label, id = 0 AS is_zero, id = 9223372036854775807 AS is_max_bigint
FROM cases
WHERE label IN ('epoch, worker 0, sequence 0', 'last ms, worker 1023, sequence 4095')
ORDER BY id;

-- snowflake_decode() returns the columns ts, worker_id, sequence.
SELECT d.ts = l.epoch + interval '1 second' AS ts_ok, d.worker_id, d.sequence
FROM snowflake_decode(4194304::bigint * 1000 + 4096 * 3 + 5) AS d, layout AS l;
SELECT d.ts = l.twitter_epoch + interval '1 second' AS ts_ok, d.worker_id, d.sequence
FROM layout AS l, snowflake_decode(4194304::bigint * 1000 + 4096 * 3 + 5, l.twitter_epoch) AS d;

-- Times inside a millisecond are floored to it.
SELECT snowflake_timestamp(snowflake_compose('2025-06-01 00:00:00.0009+00', 1, 2))
         = '2025-06-01 00:00:00+00' AS floored,
       snowflake_compose('2025-06-01 00:00:00.0009+00', 1, 2)
         = snowflake_compose('2025-06-01 00:00:00+00', 1, 2) AS same_id,
       snowflake_compose('2025-01-01 00:00:00.000999+00', 0, 0) = 0 AS first_ms_floored;

-- The Twitter example: id 1212161410438242304 under Twitter's epoch
-- 1288834974657 ms (2010-11-04 01:42:54.657+00). Twitter ids share this
-- layout (41 bits of time, 10 bits of machine, 12 bits of sequence).
SELECT snowflake_worker_id(1212161410438242304) = (1212161410438242304 >> 12) & 1023 AS worker_bits,
       snowflake_sequence(1212161410438242304) = 1212161410438242304 & 4095 AS sequence_bits,
       snowflake_timestamp(1212161410438242304, twitter_epoch)
         = timestamptz 'epoch' + ((1212161410438242304 >> 22) + 1288834974657) * interval '1 millisecond' AS time_bits,
       (snowflake_decode(1212161410438242304, twitter_epoch)).ts
         = snowflake_timestamp(1212161410438242304, twitter_epoch) AS decode_agrees
FROM layout;
-- The fields themselves, known from the arithmetic above.
SELECT 1212161410438242304 >> 22 AS ms_since_twitter_epoch,
       snowflake_worker_id(1212161410438242304) AS worker_id,
       snowflake_sequence(1212161410438242304) AS sequence,
       snowflake_timestamp(1212161410438242304, '2010-11-04 01:42:54.657+00') AS created_at;

-- snowflake_from_timestamp(t) is the smallest id of t's millisecond: no
-- larger than any id composed at t, larger than any id of the millisecond
-- before.
WITH times(t) AS (
    SELECT epoch + interval '1 millisecond' FROM layout
    UNION ALL SELECT timestamptz '2025-03-04 05:06:07.089+00'
    UNION ALL SELECT timestamptz '2025-03-04 05:06:07.0895+00'
    UNION ALL SELECT timestamptz '2040-12-31 23:59:59.999+00'
    UNION ALL SELECT last_ms FROM layout
), fields(w, s) AS (
    SELECT w, s FROM unnest(ARRAY[0, 1, 42, 1023]) AS w, unnest(ARRAY[0, 1, 4095]) AS s
)
SELECT t,
       bool_and(snowflake_from_timestamp(t) <= snowflake_compose(t, w, s)) AS not_above_ids_at_t,
       bool_and(snowflake_from_timestamp(t) > snowflake_compose(t - interval '1 millisecond', w, s)) AS above_previous_ms,
       bool_and(snowflake_from_timestamp(t) = snowflake_compose(t, 0, 0)) AS is_worker_0_sequence_0,
       bool_and(snowflake_from_timestamp(t) - snowflake_from_timestamp(t - interval '1 millisecond') = 4194304) AS one_ms_apart,
       bool_and(snowflake_timestamp(snowflake_from_timestamp(t)) = date_trunc('milliseconds', t)) AS decodes_to_ms_of_t
FROM times, fields
GROUP BY t
ORDER BY t;
SELECT snowflake_from_timestamp(epoch) = 0 AS epoch_is_zero,
       snowflake_from_timestamp(last_ms) = 2199023255551 << 22 AS last_ms_bits
FROM layout;

-- ... and below every id issued from now on, above every id issued before.
SELECT snowflake_from_timestamp(clock_timestamp()) <= snowflake_nextval() AS below_new_ids;
SELECT snowflake_nextval() < snowflake_from_timestamp(clock_timestamp() + interval '1 second') AS above_old_ids;

-- WHERE id >= snowflake_from_timestamp(t) is a range scan of the primary key.
CREATE TABLE readings (id bigint PRIMARY KEY, value integer);
INSERT INTO readings
SELECT snowflake_compose(timestamptz '2025-06-01 00:00:00+00' + g * interval '1 minute', g % 1024, g % 4096), g
FROM generate_series(0, 9999) AS g;
VACUUM ANALYZE readings;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM readings WHERE id >= snowflake_from_timestamp('2025-06-05 00:00:00+00');
EXPLAIN (COSTS OFF)
SELECT id FROM readings
WHERE id >= snowflake_from_timestamp('2025-06-05 00:00:00+00')
  AND id < snowflake_from_timestamp('2025-06-06 00:00:00+00');
RESET enable_seqscan;
RESET enable_bitmapscan;
-- The range holds exactly the rows of that day: 1440 minutes.
SELECT count(*) AS rows_in_day,
       bool_and(snowflake_timestamp(id) >= '2025-06-05 00:00:00+00'
                AND snowflake_timestamp(id) < '2025-06-06 00:00:00+00') AS all_in_day
FROM readings
WHERE id >= snowflake_from_timestamp('2025-06-05 00:00:00+00')
  AND id < snowflake_from_timestamp('2025-06-06 00:00:00+00');
SELECT count(*) AS rows_by_decoded_time
FROM readings
WHERE snowflake_timestamp(id) >= '2025-06-05 00:00:00+00'
  AND snowflake_timestamp(id) < '2025-06-06 00:00:00+00';

-- The decoders of an explicit layout and epoch are IMMUTABLE and may be
-- indexed; those that read snowflake.layout or snowflake.epoch (server
-- settings) are STABLE and may not.
CREATE INDEX readings_time ON readings
    (((snowflake_decode_as(id, 'twitter', '2025-01-01 00:00:00+00')).ts));
CREATE INDEX readings_worker ON readings
    (((snowflake_decode_as(id, 'twitter', '2025-01-01 00:00:00+00')).worker_id));
SELECT count(*) AS same_by_index FROM readings
WHERE (snowflake_decode_as(id, 'twitter', '2025-01-01 00:00:00+00')).worker_id = snowflake_worker_id(id);
CREATE INDEX readings_time_epoch ON readings (snowflake_timestamp(id, '2025-01-01 00:00:00+00'));
CREATE INDEX readings_worker_stable ON readings (snowflake_worker_id(id));
CREATE INDEX readings_time_stable ON readings (snowflake_timestamp(id));
DROP TABLE readings;
