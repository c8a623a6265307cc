-- snowflake 1.0 -> 1.1 (ALTER EXTENSION snowflake UPDATE TO '1.1').
--
-- Every object that snowflake--1.1.sql adds or changes compared with
-- snowflake--1.0.sql is added or changed here too: test/upgrade.sh installs
-- 1.0, updates it, and fails on any difference from a fresh 1.1 install
-- (functions, signatures, volatility, strictness, parallel safety, views,
-- comments, grants).

\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit
