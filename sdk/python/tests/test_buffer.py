"""The ID buffer (snowflake_ids.buffer) against small fake nodes in this
process: ids only from 200 answers, refills in the background, the batch size
adapting, bad answers, 401, 429 and 503 with Retry-After, a slowloris node, a
refused port, balancing, close during a wait, a fork child emptied, and the
import without the native extension. test/sdk_python.sh."""

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse

from snowflake_ids.buffer import IdBuffer, next_batch_size, parse_batch
import snowflake_ids

from helpers import in_fork

_next = [1 << 50]
_next_lock = threading.Lock()


class FakeNode:
    """A node on a loopback port: handler(node, h, path, query) answers each
    request (None: batches of fresh increasing ids, /readyz 200). Records the
    requests and every id it handed out in a 200."""

    def __init__(self, handler=None):
        self.handler = handler
        self.requests = []
        self.issued = set()
        self.lock = threading.Lock()
        node = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # one write per answer (no Nagle delay between headers and body)

            def log_message(self, *a):
                pass

            def do_GET(self):
                u = urllib.parse.urlsplit(self.path)
                q = urllib.parse.parse_qs(u.query)
                with node.lock:
                    node.requests.append({"path": u.path, "count": int(q.get("count", ["0"])[0]),
                                          "at": time.monotonic(), "auth": self.headers.get("Authorization")})
                try:
                    (node.handler or FakeNode.default)(node, self, u.path, q)
                except OSError:
                    pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request, client_address):
                pass  # a client that went away (the buffer cut a request)

        self.server = Server(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @staticmethod
    def default(node, h, path, q):
        if path == "/readyz":
            return node.reply(h, 200, b'{"status":"ok"}')
        node.batch(h, int(q["count"][0]))

    def batch(self, h, count):
        with _next_lock:
            ids = list(range(_next[0], _next[0] + count))
            _next[0] += count
        with self.lock:
            self.issued.update(ids)
        self.reply(h, 200, json.dumps({"ids": [str(i) for i in ids]}).encode())

    @staticmethod
    def reply(h, status, body=b"", headers=None):
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def batches(self):
        with self.lock:
            return [r for r in self.requests if r["path"] == "/v1/ids/batch"]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def dead_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "http://127.0.0.1:%d" % port


def until(what, cond, timeout=10.0):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.005)


BAD = {
    "not JSON": b'{"ids":["1",',
    "no ids array": b'{"id":"1"}',
    "ids as numbers": b'{"ids":[1125899906842624,1125899906842625]}',
    "a non-decimal id": b'{"ids":["1125899906842624","12a"]}',
    "a signed id": b'{"ids":["-5"]}',
    "an id beyond int64": b'{"ids":["9223372036854775807","9223372036854775808"]}',
    "ids not increasing": b'{"ids":["1125899906842625","1125899906842624"]}',
    "an id twice": b'{"ids":["1125899906842624","1125899906842624"]}',
    "more ids than asked": b'{"ids":["1","2","3"]}',
    "no ids": b'{"ids":[]}',
    "not UTF-8": b'{"ids":["\xff"]}',
}


class BufferTest(unittest.TestCase):
    def setUp(self):
        self.cleanups = []

    def tearDown(self):
        for fn in reversed(self.cleanups):
            fn()

    def node(self, handler=None):
        n = FakeNode(handler)
        self.cleanups.append(n.close)
        return n

    def buffer(self, urls, **kw):
        b = IdBuffer(urls, **kw)
        self.cleanups.append(b.close)
        return b

    def assertError(self, cls, sqlstate, fn):
        with self.assertRaises(cls) as cm:
            v = fn()
            self.fail("expected %s, got %r" % (cls.__name__, v))
        e = cm.exception
        self.assertIsInstance(e, snowflake_ids.Error)
        self.assertEqual(e.sqlstate, sqlstate, str(e))
        self.assertTrue(e.hint)
        return e

    def test_ids_come_from_200_answers_increasing_with_the_token(self):
        n = self.node()
        b = self.buffer(n.url, token="secret", min_batch=50, max_batch=50)
        prev = -1
        for _ in range(500):
            i = b.next_id()
            self.assertIsInstance(i, int)
            self.assertGreater(i, prev)
            self.assertIn(i, n.issued)
            prev = i
        self.assertTrue(all(r["auth"] == "Bearer secret" for r in n.batches()))
        t = b.try_next_id()
        self.assertTrue(t is None or t in n.issued)

    def test_the_refill_runs_before_the_batch_is_used_up(self):
        n = self.node()
        b = self.buffer(n.url, min_batch=100, max_batch=100, refill_at=40)
        b.next_id()
        for _ in range(60):
            self.assertIsNotNone(b.try_next_id())
        # 39 left, below refill_at: the spare comes in while they are held.
        until("the spare batch", lambda: b.available > 39)
        self.assertEqual(b.available, 139)
        self.assertEqual(len(n.batches()), 2)

    def test_the_batch_size_adapts(self):
        self.assertEqual(next_batch_size(100, 0.01, 100, 1000), 200)
        self.assertEqual(next_batch_size(800, 0.01, 100, 1000), 1000)
        self.assertEqual(next_batch_size(400, 30, 100, 1000), 400)
        self.assertEqual(next_batch_size(400, 300, 100, 1000), 200)
        self.assertEqual(next_batch_size(150, 300, 100, 1000), 100)
        n = self.node()
        b = self.buffer(n.url, min_batch=10, max_batch=1280)
        for _ in range(4000):
            b.next_id()
        counts = [r["count"] for r in n.batches()]
        self.assertEqual(counts[0], 10)
        self.assertIn(1280, counts)
        self.assertTrue(all(10 <= c <= 1280 for c in counts), counts)
        self.assertEqual(counts, sorted(counts))

    def test_parse_batch_refuses_every_bad_answer(self):
        for what, body in BAD.items():
            with self.subTest(what):
                with self.assertRaises(snowflake_ids.ProtocolError):
                    parse_batch(body, 2)
        self.assertEqual(parse_batch(b'{"ids":["0","9223372036854775807"]}', 2), [0, (1 << 63) - 1])

    def test_a_node_answering_a_bad_batch_is_left_out(self):
        for what, body in BAD.items():
            with self.subTest(what):
                def bad_handler(node, h, path, q, body=body):
                    if path == "/readyz":
                        return FakeNode.default(node, h, path, q)
                    node.reply(h, 200, body)
                bad = self.node(bad_handler)
                good = self.node()
                alone = self.buffer(bad.url, min_batch=2, max_batch=2, probe_interval=0.05)
                e = self.assertError(snowflake_ids.UnavailableError, "08006", lambda: alone.next_id(timeout=0.3))
                self.assertIn("bad batch", e.detail)
                self.assertIsNone(alone.try_next_id())
                two = self.buffer([bad.url, good.url], min_batch=2, max_batch=2, probe_interval=0.05)
                for _ in range(40):
                    self.assertIn(two.next_id(), good.issued)
                alone.close()
                two.close()

    def test_a_401_is_an_auth_error_with_a_hint_about_the_token(self):
        n = self.node(lambda node, h, path, q: node.reply(
            h, 401, b'{"code":"28000","message":"a valid bearer token is required"}', {"WWW-Authenticate": "Bearer"}))
        b = self.buffer(n.url, token="wrong")
        e = self.assertError(snowflake_ids.AuthError, "28000", lambda: b.next_id(timeout=5))
        self.assertIn("token", e.hint)
        self.assertIn("401", e.message)
        self.assertIsInstance(e, PermissionError)
        # Within a second of it: the same error at once, without a request.
        self.assertError(snowflake_ids.AuthError, "28000", lambda: b.next_id(timeout=5))
        self.assertEqual(len(n.requests), 1)

    def test_a_429_is_honoured_until_its_retry_after(self):
        refused = []

        def handler(node, h, path, q):
            if not refused:
                refused.append(time.monotonic())
                return node.reply(h, 429, b'{"code":"53400","message":"too many ids requested over HTTP"}',
                                  {"Retry-After": "1"})
            FakeNode.default(node, h, path, q)
        n = self.node(handler)
        b = self.buffer(n.url, min_batch=5)
        self.assertIn(b.next_id(timeout=5), n.issued)
        # No request within the Retry-After after the refused one (a refill
        # for the spare may follow the second at any time: not counted).
        first = n.requests[0]
        self.assertGreaterEqual(len(n.requests), 2)
        for later in n.requests[1:]:
            self.assertGreaterEqual(later["at"] - first["at"], 1.0 - 0.005)

    def test_a_429s_retry_after_ms_is_the_wait_not_retry_afters_whole_seconds(self):
        refused = []

        def handler(node, h, path, q):
            if not refused:
                refused.append(time.monotonic())
                # As the nodes answer a batch over their ceiling: the seconds
                # rounded up, and the milliseconds.
                return node.reply(h, 429, b'{"code":"53400","message":"too many ids requested over HTTP"}',
                                  {"Retry-After": "30", "Retry-After-Ms": "150"})
            FakeNode.default(node, h, path, q)
        n = self.node(handler)
        b = self.buffer(n.url, min_batch=5)
        # Retry-After alone would keep the only node out for 30 s, past this
        # wait.
        self.assertIn(b.next_id(timeout=10), n.issued)
        first = n.requests[0]
        self.assertGreaterEqual(len(n.requests), 2)
        for later in n.requests[1:]:
            self.assertGreaterEqual(later["at"] - first["at"], 0.150 - 0.005)

    def test_unreadable_waits_are_one_second(self):
        from snowflake_ids.buffer import _retry_after
        for headers in ({}, {"Retry-After": "soon"}, {"Retry-After": "\u00b2"}, {"Retry-After-Ms": "\u00b2"},
                        {"Retry-After-Ms": "-5"}):
            self.assertEqual(_retry_after(headers), 1.0, headers)
        self.assertEqual(_retry_after({"Retry-After-Ms": "250", "Retry-After": "9"}), 0.25)
        self.assertEqual(_retry_after({"Retry-After-Ms": "99999999"}), 60.0)

    def test_a_503_leaves_the_node_out_until_its_readyz_answers_200(self):
        log = []
        state = {"ready_after": 3, "refused": 0}

        def handler(node, h, path, q):
            if path == "/readyz":
                state["ready_after"] -= 1
                ok = state["ready_after"] <= 0
                log.append("ready" if ok else "unready")
                return node.reply(h, 200 if ok else 503, b"", {"Retry-After": "1"})
            state["refused"] += 1
            if state["refused"] == 1:
                log.append("503")
                return node.reply(h, 503, b'{"code":"SF003","message":"no worker id lease is held"}',
                                  {"Retry-After": "1"})
            log.append("batch")
            FakeNode.default(node, h, path, q)
        n = self.node(handler)
        b = self.buffer(n.url, min_batch=5, probe_interval=0.02)
        self.assertIn(b.next_id(timeout=8), n.issued)
        self.assertEqual(log[:5], ["503", "unready", "unready", "ready", "batch"])
        # Two nodes, the first refusing: the ids come from the other.
        state.update(ready_after=1000, refused=0)
        other = self.node()
        two = self.buffer([n.url, other.url], min_batch=5, probe_interval=0.02)
        for _ in range(20):
            i = two.next_id(timeout=8)
            self.assertTrue(i in other.issued or i in n.issued)
        self.assertTrue(other.issued)

    def test_a_slowloris_node_is_cut_at_the_timeout_and_left_out(self):
        stop = threading.Event()
        self.cleanups.append(stop.set)

        def slow(node, h, path, q):
            if path == "/readyz":
                return FakeNode.default(node, h, path, q)
            h.send_response(200)
            h.send_header("Content-Length", "100000")
            h.end_headers()
            h.wfile.write(b'{"ids":["1')
            while not stop.wait(0.05):
                h.wfile.write(b"1")
                h.wfile.flush()
        s = self.node(slow)
        good = self.node()
        alone = self.buffer(s.url, timeout=0.3, min_batch=2)
        self.assertError(snowflake_ids.UnavailableError, "08006", lambda: alone.next_id(timeout=1.5))
        two = self.buffer([s.url, good.url], timeout=0.3, min_batch=2, probe_interval=60)
        for _ in range(30):
            self.assertIn(two.next_id(timeout=5), good.issued)

    def test_a_refused_port_is_left_out(self):
        good = self.node()
        b = self.buffer([dead_url(), good.url], min_batch=10, max_batch=10)
        # Until the buffer has tried the dead port (each refill draws which
        # node it asks): every id is the good node's meanwhile.
        n = 0
        while b.stats()["nodes"][0]["failures"] == 0:
            n += 1
            self.assertLess(n, 100000, "the dead port was never tried")
            self.assertIn(b.next_id(timeout=5), good.issued)
        for _ in range(100):
            self.assertIn(b.next_id(timeout=5), good.issued)
        dead = b.stats()["nodes"][0]
        self.assertFalse(dead["up"])
        self.assertGreaterEqual(dead["failures"], 1)

    def test_several_nodes_share_the_refills_and_a_slow_one_is_not_starved(self):
        def slow_handler(node, h, path, q):
            time.sleep(0.02)
            FakeNode.default(node, h, path, q)
        slow = self.node(slow_handler)
        nodes = [slow, self.node(), self.node()]
        b = self.buffer([n.url for n in nodes], min_batch=10, max_batch=10)
        for _ in range(2000):
            b.next_id()
        for n in nodes:
            self.assertTrue(n.batches(), n.url + " was asked")
        self.assertGreaterEqual(len(slow.batches()), 2, "the slow node was asked again")

    def test_close_ends_a_wait_at_once(self):
        hung = self.node(lambda node, h, path, q: time.sleep(30))
        b = self.buffer(hung.url, timeout=60)
        got = []

        def waiter():
            try:
                b.next_id(timeout=60)
            except snowflake_ids.Error as e:
                got.append(e)
        t = threading.Thread(target=waiter)
        t.start()
        until("the request", lambda: hung.requests and b.stats()["waiting"] == 1)
        b.close()
        t.join(10)
        self.assertFalse(t.is_alive(), "close() ended the wait")
        self.assertIsInstance(got[0], snowflake_ids.ClosedError)
        self.assertEqual(got[0].sqlstate, "55000")
        self.assertError(snowflake_ids.ClosedError, "55000", b.next_id)
        self.assertError(snowflake_ids.ClosedError, "55000", b.try_next_id)
        b.close()

    def test_every_wait_is_bounded(self):
        hung = self.node(lambda node, h, path, q: time.sleep(30) if path != "/readyz" else FakeNode.default(
            node, h, path, q))
        b = self.buffer(hung.url, timeout=60)
        e = self.assertError(snowflake_ids.NotReadyError, "57014", lambda: b.next_id(timeout=0.2))
        self.assertIsInstance(e, TimeoutError)
        self.assertIn("1 request(s) in flight", e.detail)
        b.close()

    def test_a_fork_child_never_hands_out_its_parents_ids(self):
        n = self.node()
        b = self.buffer(n.url, min_batch=100, max_batch=100, refill_at=10)
        first = b.next_id()
        until("the buffer full", lambda: b.available == 99)
        held = list(range(first + 1, first + 100))
        self.assertTrue(all(i in n.issued for i in held))
        asked = len(n.batches())

        def child():
            ids = [b.next_id(timeout=5) for _ in range(150)]
            return ids
        ids = in_fork(child)
        self.assertFalse(set(ids) & set(held) or first in ids, "the child handed out its parent's ids")
        self.assertTrue(all(i in n.issued for i in ids))
        self.assertGreater(len(n.batches()), asked)
        # The parent goes on with its own.
        self.assertEqual([b.next_id() for _ in range(99)], held)

    def test_bad_arguments_are_config_errors(self):
        for args, kw in [(([],), {}), (("ftp://x",), {}), (("http://x",), {"max_batch": 10001}),
                         (("http://x",), {"min_batch": 0}), (("http://x",), {"min_batch": 50, "max_batch": 10}),
                         (("http://x",), {"timeout": 0}), ((5,), {})]:
            with self.subTest(args=args, kw=kw):
                with self.assertRaises(snowflake_ids.ConfigError):
                    IdBuffer(*args, **kw)
        with self.assertRaises(TypeError):
            IdBuffer("http://x", bogus=1)

    def test_the_buffer_imports_without_the_native_extension(self):
        # A copy of the package without _native*.so: the buffer and the error
        # classes import and work; the generator says what is missing.
        import shutil
        import tempfile
        d = tempfile.mkdtemp(prefix="snowflake-sdk-python-")
        self.cleanups.append(lambda: shutil.rmtree(d, ignore_errors=True))
        src = os.path.dirname(snowflake_ids.__file__)
        shutil.copytree(src, os.path.join(d, "snowflake_ids"),
                        ignore=shutil.ignore_patterns("_native*", "__pycache__"))
        n = self.node()
        code = """
import sys
from snowflake_ids.buffer import IdBuffer
import snowflake_ids
assert snowflake_ids.__file__.startswith(sys.argv[1]), snowflake_ids.__file__
with IdBuffer(sys.argv[2], min_batch=5) as b:
    i = b.next_id(timeout=5)
assert "snowflake_ids._native" not in sys.modules
try:
    snowflake_ids.Generator
except ImportError as e:
    print(i, "ImportError")
"""
        out = subprocess.run([sys.executable, "-c", code, d, n.url], cwd=d, capture_output=True, text=True,
                             timeout=60, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        self.assertEqual(out.returncode, 0, out.stderr)
        i, what = out.stdout.split()
        self.assertIn(int(i), n.issued)
        self.assertEqual(what, "ImportError")


if __name__ == "__main__":
    unittest.main()
