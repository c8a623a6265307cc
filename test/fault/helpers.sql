-- SQL helpers of the fault-injection suite (test/fault/run.sh), created in
-- each throwaway instance.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;

-- Every id the cases keep. ord is the order of insertion (one session at a
-- time, or per client with pgbench); seen, when set, is the largest id
-- committed before the statement that issued this one started: every id must
-- be above it, whichever connection issued the earlier one.
CREATE TABLE ids (
    ord bigserial,
    client int NOT NULL DEFAULT -1,
    id bigint PRIMARY KEY,
    seen bigint,
    phase text NOT NULL DEFAULT ''
);
-- The same for load that need not survive a crash.
CREATE UNLOGGED TABLE load_ids (LIKE ids INCLUDING ALL);

-- Seconds of real time (not faked: /proc/uptime), for deadlines that must
-- hold while the clock is moved.
CREATE FUNCTION real_uptime() RETURNS float8 LANGUAGE sql VOLATILE AS
$$ SELECT split_part(pg_read_file('/proc/uptime'), ' ', 1)::float8 $$;

-- One snowflake_nextval() with its error, if any, instead of raising it.
CREATE FUNCTION try_nextval(OUT id bigint, OUT state text, OUT msg text, OUT detail text,
                            OUT hint text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    id := snowflake_nextval();
    state := '00000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
END $$;

-- The time a clock error's hint names as the one ids resume at.
CREATE FUNCTION resume_at(hint text) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS
$$ SELECT substring(hint FROM 'ids resume when the clock (?:passes|reaches) (.*)\.$')::timestamptz $$;

-- The millisecond bits of an id.
CREATE FUNCTION id_ms(id bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$ SELECT id >> 22 $$;

-- Unix seconds of an id's time.
CREATE FUNCTION id_unix(id bigint) RETURNS numeric LANGUAGE sql STABLE AS
$$ SELECT extract(epoch FROM snowflake_timestamp(id)) $$;

-- clock_probe(mode, timeout_s, label): what a session sees while the test
-- moves the clock under it.
-- mode 'step': issues ids as fast as it can (so that the last id is always
--   fresh) until snowflake_nextval() raises an error, then
-- (both modes) retries until it issues an id again.
-- mode 'resume': only the second part (after a restart).
-- application_name shows the phase to the test: probe:issuing, probe:refused,
-- probe:done. Deadlines are in real time. The last id before the error and
-- the first after it are kept in ids with phase = label.
CREATE FUNCTION clock_probe(mode text, timeout_s float8, label text,
    OUT before_id bigint,   -- last id issued before the error (0: none)
    OUT issued bigint,      -- ids issued before the error
    OUT state text,         -- SQLSTATE of the first error (NULL: none before the deadline)
    OUT msg text, OUT detail text, OUT hint text,
    OUT refusals bigint,    -- calls refused before ids resumed
    OUT other_states text,  -- SQLSTATEs other than the first seen while waiting
    OUT after_id bigint,    -- first id after the error (NULL: none before the deadline)
    OUT violations bigint)  -- ids not above the one before
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    cur bigint;
    deadline float8 := real_uptime() + timeout_s;
    st text;
BEGIN
    before_id := 0; issued := 0; refusals := 0; violations := 0; other_states := '';
    IF mode = 'step' THEN
        PERFORM set_config('application_name', 'probe:issuing', false);
        BEGIN
            LOOP
                cur := snowflake_nextval();
                IF cur <= before_id THEN violations := violations + 1; END IF;
                before_id := cur;
                issued := issued + 1;
                IF issued % 2000 = 0 AND real_uptime() > deadline THEN EXIT; END IF;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                                    detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
        END;
        IF state IS NULL THEN
            PERFORM set_config('application_name', 'probe:done', false);
            RETURN;
        END IF;
        refusals := 1;
        INSERT INTO ids(id, phase) VALUES (before_id, label || ':before');
    ELSE
        before_id := coalesce((SELECT max(id) FROM ids), 0);
    END IF;

    PERFORM set_config('application_name', 'probe:refused', false);
    LOOP
        BEGIN
            after_id := snowflake_nextval();
            EXIT;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
            IF state IS NULL THEN
                state := st;
                GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL,
                                        hint = PG_EXCEPTION_HINT;
            ELSIF st <> state AND position(st IN other_states) = 0 THEN
                other_states := other_states || st || ' ';
            END IF;
            refusals := refusals + 1;
        END;
        -- No pg_sleep(): it measures its delay with the (faked) wall clock
        -- and would sleep for years if the clock were set back meanwhile.
        IF real_uptime() > deadline THEN EXIT; END IF;
    END LOOP;
    IF after_id IS NOT NULL THEN
        IF after_id <= before_id THEN violations := violations + 1; END IF;
        INSERT INTO ids(id, phase) VALUES (after_id, label || ':after');
    END IF;
    PERFORM set_config('application_name', 'probe:done', false);
END $$;

-- Ids not above the one before them, per client in insertion order, plus
-- ids not above the largest committed before their statement began.
CREATE FUNCTION order_violations(tbl regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format($q$
        SELECT count(*) FROM (
            SELECT id, seen, lag(id) OVER (PARTITION BY client ORDER BY ord) AS prev FROM %s
        ) s WHERE id <= prev OR id <= seen $q$, tbl) INTO n;
    RETURN n;
END $$;

-- One snowflake_nextval() and how long it took in milliseconds (by the
-- server's clock: use it only while the clock is not being moved).
CREATE FUNCTION timed_nextval(OUT id bigint, OUT state text, OUT ms float8)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    SELECT r.id, r.state INTO id, state FROM try_nextval() r;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
