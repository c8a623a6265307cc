# gunicorn's settings for test_gunicorn.py: the preload, and the hook where a
# forked worker waits for a lease of its own before it serves.
import os

preload_app = True
workers = 2
bind = "127.0.0.1:" + os.environ["APP_PORT"]
accesslog = None


def post_fork(server, worker):
    import app
    first = None
    try:
        app.gen.next_id()
        first = "issued"
    except app.snowflake_ids.Error as e:
        first = e.sqlstate
    app.gen.wait_ready(20)
    # What this worker issued once it held its own lease: "first worker_id id...".
    ids = app.gen.next_ids(100)
    with open(os.environ["APP_WORKER_FILE"] + ".%d" % os.getpid(), "w") as f:
        f.write("%s %d %s\n" % (first, app.gen.stats()["worker_id"], " ".join(map(str, ids))))
