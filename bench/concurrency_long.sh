#!/bin/bash
# The concurrency suite (test/concurrency.sh) at scale: 10 million ids
# (SNOWFLAKE_CONCURRENCY_IDS to change) from 8 pgbench clients mixing
# snowflake_nextval() and snowflake_nextval_batch(n) into an UNLOGGED table
# keyed by the id, with the same checks: no failed transaction, rows = ids
# requested, per-connection issue order, every id above those committed before
# its statement. Not run in CI: several minutes and a few GB in $TMPDIR.
set -uo pipefail
cd "$(dirname "$0")/.."
export SNOWFLAKE_CONCURRENCY_IDS=${SNOWFLAKE_CONCURRENCY_IDS:-10000000}
export SNOWFLAKE_CONCURRENCY_SHARED_BUFFERS=${SNOWFLAKE_CONCURRENCY_SHARED_BUFFERS:-1GB}
exec test/concurrency.sh
