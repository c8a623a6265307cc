"""A WSGI application as a gunicorn-style preload runs it (test_gunicorn.py):
the generator is made at import, in gunicorn's master, before the workers
are forked. Each worker's first call is refused (SF003: never an id under
the master's lease); post_fork (gunicorn.conf.py) waits for the worker's
own lease. Answers "id pid worker_id" per request."""

import os

import snowflake_ids

gen = snowflake_ids.Generator(etcd_endpoints=os.environ["SNOWFLAKE_TEST_ETCD"], lease_prefix="/sdk-gunicorn",
                              worker_ids="760-767", timeout=20)
with open(os.environ["APP_MASTER_FILE"], "w") as f:
    f.write("%d %d\n" % (os.getpid(), gen.stats()["worker_id"]))


def application(environ, start_response):
    i = gen.next_id()
    body = ("%d %d %d\n" % (i, os.getpid(), gen.stats()["worker_id"])).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
