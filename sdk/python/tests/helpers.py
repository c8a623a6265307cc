"""What the tests share: a temporary directory, a forked child's result."""

import json
import os
import shutil
import tempfile
import traceback


class TempDir:
    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="snowflake-sdk-python-")
        self.n = 0

    def mark(self):
        self.n += 1
        return os.path.join(self.path, "mark-%d" % self.n)

    def remove(self):
        shutil.rmtree(self.path, ignore_errors=True)


def in_fork(fn):
    """Runs fn() in a child of os.fork() and returns what it returned (made of
    JSON), or raises AssertionError with the child's traceback."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = {"ok": fn()}
        except BaseException:
            out = {"error": traceback.format_exc()}
        with os.fdopen(w, "w") as f:
            json.dump(out, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not text:
        raise AssertionError("the forked child failed (status %d)" % status)
    out = json.loads(text)
    if "error" in out:
        raise AssertionError("in the forked child:\n" + out["error"])
    return out["ok"]


def error_of(fn):
    """The snowflake_ids.Error fn() raised, as a dict (for a child's answer)."""
    import snowflake_ids
    try:
        fn()
    except snowflake_ids.Error as e:
        return {"class": type(e).__name__, "sqlstate": e.sqlstate, "hint": e.hint, "message": e.message}
    return None
