-- pgbench script of the fault suite: one id per transaction into :tbl.
-- seen is the largest id committed before this statement began (the
-- MATERIALIZED CTE is read before the projection calls snowflake_nextval()):
-- the new id must be above it, whichever connection issued that one.
WITH m AS MATERIALIZED (SELECT coalesce(max(id), 0) AS seen FROM :tbl)
INSERT INTO :tbl(client, id, seen, phase) SELECT :client_id, snowflake_nextval(), seen, ':phase' FROM m;
