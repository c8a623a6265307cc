-- A node whose snowflake.layout is js-safe (test/regress/js_safe.conf:
-- worker 42): every id it issues is below 2^53 = 9007199254740992, so a
-- JavaScript number (a JSON number parsed as a double) holds it exactly;
-- the decoders and constructors read and build ids in its layout.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

SHOW snowflake.layout;
SELECT layout, ids_per_ms, lifetime_end = epoch + interval '1 millisecond' * 2199023255552 AS lifetime_41_bits
FROM snowflake_stats;

-- 20,000 ids, single and in batches: distinct, increasing in the order
-- issued, below 2^53, worker 42, sequences 0 to 63.
CREATE TEMP TABLE ids (n bigserial, id bigint);
INSERT INTO ids (id) SELECT snowflake_nextval() FROM generate_series(1, 10000);
INSERT INTO ids (id) SELECT snowflake_nextval_batch(1000) FROM generate_series(1, 10);
SELECT count(*) AS ids,
       count(DISTINCT id) AS distinct_ids,
       max(id) < 9007199254740992 AS below_2_53,
       min(id) > 0 AS positive,
       bool_and(snowflake_worker_id(id) = 42) AS worker_42,
       min(snowflake_sequence(id)) AS min_seq,
       max(snowflake_sequence(id)) AS max_seq
FROM ids;
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s
WHERE id <= prev;
-- A double holds each id exactly: JSON numbers read by JavaScript.
SELECT bool_and(id::float8::numeric = id::numeric) AS exact_as_double,
       bool_and((to_json(id)::text)::float8::bigint = id) AS exact_through_json
FROM ids;
-- The decoders agree with the layout argument's, in the node's epoch.
SELECT bool_and((d).ts = snowflake_timestamp(id) AND (d).worker_id = 42
                AND (d).sequence = snowflake_sequence(id)) AS decoders_agree
FROM (SELECT id, snowflake_decode_as(id, 'js-safe', current_setting('snowflake.epoch')::timestamptz) AS d
      FROM ids) s;
SELECT bool_and(snowflake_decode(id) = snowflake_decode(id, current_setting('snowflake.epoch')::timestamptz))
       AS epoch_forms_agree
FROM ids;

-- Constructors: the node's layout, its bounds.
SELECT snowflake_compose('2025-01-01 00:00:00.001+00', 63, 63) AS compose_1ms,
       snowflake_compose('2025-01-01 00:00:00.001+00', 63, 63)
         = snowflake_compose_as('2025-01-01 00:00:00.001+00', 63, 63, 'js-safe', '2025-01-01 00:00:00+00')
         AS same_as_explicit,
       snowflake_from_timestamp('2025-01-01 00:00:00.002+00') AS from_2ms;
SELECT snowflake_compose('2025-01-01 00:00:00+00', 64, 0);
SELECT snowflake_compose('2025-01-01 00:00:00+00', 0, 64);
-- The last id of the lifetime is 2^53 - 1.
SELECT snowflake_compose(current_setting('snowflake.epoch')::timestamptz
                           + interval '1 millisecond' * 2199023255551, 63, 63) AS last_id;

-- An id above the layout's 53 bits is no id of this node.
SELECT snowflake_worker_id(9007199254740992);
SELECT snowflake_decode(1152921504606846976);
SELECT snowflake_advance_floor(9007199254740992);
