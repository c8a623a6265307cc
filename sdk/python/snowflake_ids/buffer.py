"""snowflake_ids.buffer: the ID buffer (issue 32), for processes that hold no
worker id of their own. It takes ids in batches from the nodes' HTTP endpoint
(GET /v1/ids/batch?count=N, docs/reference.md "HTTP API") and hands them out
one at a time; the standard library only (http.client), no native code, so it
imports where snowflake_ids._native was never built.

    from snowflake_ids.buffer import IdBuffer
    with IdBuffer(urls="http://lb:8080", token="...") as buf:
        buf.next_id()

A background thread refills (one request at a time), another asks /readyz of
the nodes left out. docs/sdk.md "The ID buffer".
"""

import http.client
import json
import os
import random
import re
import socket
import threading
import time
import urllib.parse
import weakref
from email.utils import parsedate_to_datetime

from .errors import AuthError, ClosedError, ConfigError, NotReadyError, ProtocolError, UnavailableError

__all__ = ["IdBuffer", "next_batch_size", "parse_batch", "MAX_BATCH"]

MAX_BATCH = 10000  # the endpoint's cap
_INT64_MAX = (1 << 63) - 1
_FAST_BATCH_S = 1.0  # a batch used up faster: ask for twice as many
_SLOW_BATCH_S = 120.0  # a batch that lasted longer: ask for half as many
_MAX_BODY = 1 << 20
_MAX_RETRY_AFTER_S = 60.0
_DECIMAL = re.compile(r"[0-9]{1,19}\Z")


def next_batch_size(size, life_s, lo, hi):
    """The size of the next batch after one that lasted life_s seconds."""
    if life_s < _FAST_BATCH_S:
        return min(hi, size * 2)
    if life_s > _SLOW_BATCH_S:
        return max(lo, size // 2)
    return size


def _protocol_error(message, url):
    return ProtocolError(
        "%s answered 200 with a bad batch: %s" % (url, message),
        hint="The node is left out until its /readyz answers 200; no id of that answer was handed out. "
             "Check that the URL is a snowflake node (snowflake.http_listen) or a load balancer in front of them.")


def parse_batch(body, count, url="the node"):
    """The ids (ints) of a 200 answer's body for a request of count; raises
    ProtocolError for anything but {"ids": [decimal strings]}, 1 to count of
    them, each within int64 and above the one before."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise _protocol_error("the body is not JSON", url) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("ids"), list):
        raise _protocol_error('the body has no "ids" array', url)
    ids = doc["ids"]
    if not 0 < len(ids) <= count:
        raise _protocol_error("%d ids for %d asked" % (len(ids), count), url)
    out = []
    prev = -1
    for i, s in enumerate(ids):
        if not isinstance(s, str) or not _DECIMAL.match(s):
            raise _protocol_error("id %d is not a decimal string: %.40r" % (i, s), url)
        v = int(s)
        if v > _INT64_MAX:
            raise _protocol_error("id %d (%s) is beyond int64" % (i, s), url)
        if v <= prev:
            raise _protocol_error("id %d (%s) is not above the one before (%d)" % (i, s, prev), url)
        prev = v
        out.append(v)
    return out


def _retry_after(headers):
    """How long an answer asks to wait, in seconds: its Retry-After-Ms (the
    nodes' 429 names the exact wait of their ceiling) if readable, else its
    Retry-After (seconds or an HTTP date); 1 when neither is readable, at
    most a minute."""
    ms = headers.get("Retry-After-Ms")
    if ms is not None and ms.strip().isascii() and ms.strip().isdigit():
        return min(int(ms.strip()) / 1000.0, _MAX_RETRY_AFTER_S)
    value = headers.get("Retry-After")
    s = 1.0
    if value is not None:
        value = value.strip()
        if value.isascii() and value.isdigit():
            s = float(value)
        else:
            try:
                s = parsedate_to_datetime(value).timestamp() - time.time()
            except (TypeError, ValueError, IndexError):
                pass
    return min(max(s, 0.0), _MAX_RETRY_AFTER_S)


class _Failure(Exception):
    """A failure of one node (connect error, timeout, 5xx): it is left out."""


class _Node:
    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ConfigError("not an http(s) URL: %r" % url)
        try:
            self.port = u.port or (443 if u.scheme == "https" else 80)
        except ValueError:
            raise ConfigError("not a URL: %r" % url) from None
        self.name = "%s://%s%s" % (u.scheme, u.netloc, u.path.rstrip("/"))
        self.https = u.scheme == "https"
        self.host = u.hostname
        self.prefix = u.path.rstrip("/")
        self.conn = None  # the refill thread's kept-alive connection
        self.up = True
        self.inflight = 0
        self.latency = 0.0
        self.not_before = 0.0
        self.next_probe = 0.0
        self.failures = 0
        self.batches = 0
        self.last_error = None

    def connection(self, timeout):
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=timeout)


_buffers = weakref.WeakSet()


def _after_fork_in_child():
    for b in list(_buffers):
        b._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class IdBuffer:
    """Ids from the nodes' HTTP endpoint, a batch at a time.

    urls: one URL (a load balancer) or several nodes (a list, or text with
    commas); token: the nodes' token (Authorization: Bearer); min_batch,
    max_batch: the range the batch size adapts in (100, 10000); refill_at:
    refill when the current batch has fewer ids left (half the batch size by
    default); timeout: one request's limit in seconds (5); wait: next_id()'s
    default wait in seconds (10); probe_interval: how often a node left out
    is asked /readyz (0.5 s).
    """

    def __init__(self, urls, token=None, *, min_batch=100, max_batch=MAX_BATCH, refill_at=None, timeout=5.0,
                 wait=10.0, probe_interval=0.5):
        if isinstance(urls, str):
            urls = [u.strip() for u in urls.split(",") if u.strip()]
        if not isinstance(urls, (list, tuple)) or not urls or not all(isinstance(u, str) for u in urls):
            raise ConfigError("urls must be a URL or a non-empty list of URLs (http://host:port of each node, "
                              "or of a load balancer)")
        if token is not None and not isinstance(token, str):
            raise ConfigError("token must be a str")

        def integer(name, v, lo, hi):
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ConfigError("%s must be an int from %d to %d" % (name, lo, hi))
            return v

        def seconds(name, v):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ConfigError("%s must be a number of seconds above 0" % name)
            return float(v)

        self._nodes = [_Node(u) for u in urls]
        self._token = token or None
        self._min = integer("min_batch", min_batch, 1, MAX_BATCH)
        self._max = integer("max_batch", max_batch, self._min, MAX_BATCH)
        self._refill_at = integer("refill_at", refill_at, 0, MAX_BATCH)
        self._timeout = seconds("timeout", timeout)
        self._wait = seconds("wait", wait)
        self._probe = seconds("probe_interval", probe_interval)
        self._size = self._min
        self._closed = False
        self._refills = 0
        self._reset()
        _buffers.add(self)
        self._start()

    def _reset(self):
        # The state a fork child starts from too: no ids, no threads.
        self._cond = threading.Condition(threading.Lock())
        self._cur = []
        self._pos = 0
        self._cur_start = 0.0
        self._spare = None
        self._waiters = 0
        self._failed = False  # the last request for a batch failed
        self._last_error = None
        self._auth_error = None
        self._auth_until = 0.0
        self._asked = False  # try_next_id() found the buffer empty
        self._socks = set()  # the sockets of requests in flight, which close() cuts
        self._threads = []
        self._pid = os.getpid()

    def _start(self):
        for target, name in ((self._refiller, "refill"), (self._prober, "probe")):
            t = threading.Thread(target=target, name="snowflake_ids.IdBuffer " + name, daemon=True)
            self._threads.append(t)
            t.start()

    def _forked(self):
        # In a fork child: drop the parent's ids (a child never hands out an
        # id its parent holds), its connections (without closing what the
        # parent uses) and its threads (they do not exist here); start anew.
        for n in self._nodes:
            n.conn = None
            n.inflight = 0
        self._reset()
        if not self._closed:
            self._start()

    # -- the caller's side --------------------------------------------------

    @property
    def available(self):
        """How many ids are held now."""
        with self._cond:
            return self._available()

    @property
    def closed(self):
        return self._closed

    def _available(self):
        return len(self._cur) - self._pos + (len(self._spare) if self._spare else 0)

    def try_next_id(self):
        """An id held now, or None; never waits."""
        with self._cond:
            if self._closed:
                raise self._closed_error()
            if self._available() == 0:
                self._asked = True
                self._cond.notify_all()
                return None
            return self._take()

    def next_id(self, timeout=None):
        """The next id (an int); waits at most timeout seconds (the buffer's
        wait, 10, when None) for a refill."""
        wait = self._wait if timeout is None else timeout
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
            raise ConfigError("timeout must be a number of seconds, 0 or more")
        deadline = time.monotonic() + wait
        with self._cond:
            while True:
                if self._closed:
                    raise self._closed_error()
                if self._available() > 0:
                    return self._take()
                if self._auth_error is not None and time.monotonic() < self._auth_until:
                    e = self._auth_error
                    raise AuthError(e.message, e.sqlstate, e.detail, e.hint)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._timeout_error(wait)
                self._waiters += 1
                self._cond.notify_all()
                try:
                    self._cond.wait(left)
                finally:
                    self._waiters -= 1

    def close(self):
        """Stops refills, ends every wait (ClosedError) and request, drops
        the ids held. Closing twice is allowed."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cur, self._pos, self._spare = [], 0, None
            socks = list(self._socks)
            self._cond.notify_all()
        for sock in socks:
            _cut(sock)
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(self._timeout + 1)
        for n in self._nodes:
            if n.conn is not None:
                n.conn.close()
                n.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "<snowflake_ids.IdBuffer %s%s>" % (", ".join(n.name for n in self._nodes),
                                                  " closed" if self._closed else "")

    def stats(self):
        with self._cond:
            return {
                "available": self._available(), "batch_size": self._size, "refills": self._refills,
                "waiting": self._waiters, "closed": self._closed,
                "last_error": str(self._last_error) if self._last_error else None,
                "nodes": [{"url": n.name, "up": n.up, "inflight": n.inflight, "latency_ms": round(n.latency * 1000, 1),
                           "batches": n.batches, "failures": n.failures, "last_error": n.last_error}
                          for n in self._nodes],
            }

    def _closed_error(self):
        return ClosedError("the ID buffer is closed", hint="Make a new IdBuffer.")

    def _detail(self):
        return "; ".join("%s: %s%s%s" % (n.name, "up" if n.up else "left out",
                                         ", %d request(s) in flight" % n.inflight if n.inflight else "",
                                         " (last error: %s)" % n.last_error if n.last_error else "")
                         for n in self._nodes)

    def _timeout_error(self, wait):
        if self._failed or not any(n.up for n in self._nodes):
            return UnavailableError(
                "no ids available: no node gave a good batch within %g s" % wait, detail=self._detail(),
                hint="The last request failed (connect error, timeout, 5xx or a bad answer: the detail says "
                     "which); a node that fails is left out until its /readyz answers 200. Check the nodes and "
                     "the urls; the buffer asks again on its own.")
        return NotReadyError(
            "no id within %g s: the refill has not come in" % wait, detail=self._detail(),
            hint="A node was slow or asked to wait (429 or 503 with Retry-After); retry, wait longer, or raise "
                 "min_batch or refill_at so that refills start earlier.")

    def _refill_level(self):
        return self._refill_at if self._refill_at is not None else max(1, self._size // 2)

    def _take(self):
        # Under the lock, with an id held.
        if self._pos >= len(self._cur):
            now = time.monotonic()
            if self._cur:
                self._size = next_batch_size(self._size, now - self._cur_start, self._min, self._max)
            self._cur, self._pos, self._cur_start, self._spare = self._spare, 0, now, None
        i = self._cur[self._pos]
        self._pos += 1
        if self._spare is None and len(self._cur) - self._pos < self._refill_level():
            self._cond.notify_all()
        return i

    # -- the refill thread --------------------------------------------------

    def _needs_refill(self):
        return self._spare is None and (len(self._cur) - self._pos < self._refill_level() or self._waiters > 0)

    def _deliver(self, ids):
        if self._pos >= len(self._cur):
            now = time.monotonic()
            if self._cur:
                self._size = next_batch_size(self._size, now - self._cur_start, self._min, self._max)
            self._cur, self._pos, self._cur_start = ids, 0, now
        else:
            self._spare = ids
        self._refills += 1
        self._failed = False
        self._asked = False
        self._auth_error = None
        self._cond.notify_all()

    def _pick(self):
        now = time.monotonic()
        ok = [n for n in self._nodes if n.up and n.not_before <= now]
        if len(ok) <= 1:
            return ok[0] if ok else None
        a, b = random.sample(ok, 2)
        if a.inflight != b.inflight:
            return a if a.inflight < b.inflight else b
        # The clearly faster one (under half the other's recent latency), else
        # either; the one not taken has its latency decay, so that a node once
        # slow is tried again rather than never.
        win, lose = (a, b) if random.random() < 0.5 else (b, a)
        if a.latency < b.latency / 2:
            win, lose = a, b
        elif b.latency < a.latency / 2:
            win, lose = b, a
        lose.latency *= 0.9
        return win

    def _refiller(self):
        cond = self._cond
        while True:
            with cond:
                while not self._closed and (not self._needs_refill() or time.monotonic() < self._auth_until or (
                        self._auth_error is not None and self._waiters == 0 and not self._asked)):
                    # After a 401 or 403: nothing more until a caller asks again.
                    if time.monotonic() < self._auth_until:
                        cond.wait(self._auth_until - time.monotonic())
                    else:
                        cond.wait()
                if self._closed or cond is not self._cond:
                    return
                node = self._pick()
                if node is None:
                    # Every node left out or asked us to wait: until a probe
                    # brings one back or the earliest Retry-After passes.
                    now = time.monotonic()
                    pause = min([self._probe] + [n.not_before - now for n in self._nodes
                                                 if n.up and n.not_before > now])
                    cond.wait(max(pause, 0.001))
                    continue
                count = self._size
                node.inflight += 1
            try:
                ids = self._fetch(node, count)
                err = None
            except Exception as e:  # every failure is the node's or the answer's
                ids, err = None, e
            with cond:
                node.inflight -= 1
                if self._closed or cond is not self._cond:
                    return
                if ids is not None:
                    node.batches += 1
                    self._deliver(ids)
                elif isinstance(err, AuthError):
                    self._last_error = self._auth_error = err
                    self._auth_until = time.monotonic() + 1.0
                    self._asked = False
                    cond.notify_all()
                elif isinstance(err, _RetryAfter):
                    self._last_error = err
                else:
                    self._leave_out(node, err)

    def _leave_out(self, node, err):
        node.up = False
        node.failures += 1
        node.last_error = str(err)
        node.next_probe = 0.0
        self._last_error = err
        self._failed = True
        self._cond.notify_all()

    def _request(self, node, conn, path, with_token):
        """(status, headers, body) of GET path, the whole answer within the
        buffer's timeout; the socket is cut when it passes (or at close())."""
        headers = {"Accept": "application/json"}
        if with_token and self._token:
            headers["Authorization"] = "Bearer " + self._token
        timer = threading.Timer(self._timeout, lambda: _cut(conn.sock))
        timer.daemon = True
        timer.start()
        start = time.monotonic()
        sock = None
        try:
            conn.request("GET", node.prefix + path, headers=headers)
            sock = conn.sock
            with self._cond:
                self._socks.add(sock)
            resp = conn.getresponse()
            body = resp.read(_MAX_BODY + 1)
            if len(body) > _MAX_BODY:
                raise _Failure("%s answered more than %d bytes" % (node.name, _MAX_BODY))
            if resp.will_close:
                conn.close()
        finally:
            timer.cancel()
            with self._cond:
                self._socks.discard(sock)
        if time.monotonic() - start >= self._timeout:
            raise _Failure("%s gave no complete answer within %g s" % (node.name, self._timeout))
        return resp.status, resp.headers, body

    def _fetch(self, node, count):
        path = "/v1/ids/batch?count=%d" % count
        start = time.monotonic()
        reused = node.conn is not None
        if node.conn is None:
            node.conn = node.connection(self._timeout)
        try:
            try:
                status, headers, body = self._request(node, node.conn, path, True)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A kept-alive connection the other side had closed: once
                # more on a new one.
                node.conn.close()
                if not reused or self._closed or time.monotonic() - start >= self._timeout:
                    raise
                node.conn = node.connection(self._timeout)
                status, headers, body = self._request(node, node.conn, path, True)
        except _Failure:
            node.conn.close()
            node.conn = None
            raise
        except (OSError, http.client.HTTPException) as e:
            node.conn.close()
            node.conn = None
            if time.monotonic() - start >= self._timeout:
                raise _Failure("%s gave no complete answer within %g s" % (node.name, self._timeout)) from None
            raise _Failure("%s: %s: %s" % (node.name, type(e).__name__, e)) from None
        ms = time.monotonic() - start
        node.latency = ms if node.latency == 0 else node.latency * 0.8 + ms * 0.2
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        what = ""
        if isinstance(doc, dict) and isinstance(doc.get("message"), str):
            what = ("%s %s" % (doc.get("code") or "", doc["message"])).strip()
        if status == 200:
            return parse_batch(body, count, node.name)
        if status in (401, 403):
            raise AuthError(
                "%s refused the request (%d%s)" % (node.name, status, ": " + what if what else ""),
                detail=doc.get("hint") if isinstance(doc, dict) else None,
                hint="Set the buffer's token to one of the nodes' tokens (snowflake.http_token_file or "
                     "snowflake.http_token); it is sent as \"Authorization: Bearer <token>\".")
        if status in (429, 503):
            node.not_before = time.monotonic() + _retry_after(headers)
        if status == 429:
            node.last_error = "429" + (" " + what if what else "")
            raise _RetryAfter("%s answered 429%s" % (node.name, ": " + what if what else ""))
        raise _Failure("%s answered %d%s" % (node.name, status, ": " + what if what else ""))

    # -- the probe thread ---------------------------------------------------

    def _prober(self):
        cond = self._cond
        while True:
            with cond:
                while not self._closed and cond is self._cond and all(n.up for n in self._nodes):
                    cond.wait()
                if self._closed or cond is not self._cond:
                    return
                now = time.monotonic()
                due = [n for n in self._nodes if not n.up and n.next_probe <= now]
                for n in due:
                    n.next_probe = now + self._probe
            for n in due:
                ok = self._probe_ready(n)
                with cond:
                    if ok and not self._closed:
                        n.up = True
                        cond.notify_all()
            with cond:
                if not self._closed and cond is self._cond:
                    now = time.monotonic()
                    nexts = [n.next_probe - now for n in self._nodes if not n.up]
                    if nexts:
                        cond.wait(max(min(nexts), 0.001))

    def _probe_ready(self, node):
        conn = node.connection(min(self._timeout, 2.0))
        timer = threading.Timer(min(self._timeout, 2.0), lambda: _cut(conn.sock))
        timer.daemon = True
        timer.start()
        try:
            conn.request("GET", node.prefix + "/readyz")
            with self._cond:
                self._socks.add(conn.sock)
            resp = conn.getresponse()
            resp.read(_MAX_BODY)
            return resp.status == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            timer.cancel()
            with self._cond:
                self._socks.discard(conn.sock)
            conn.close()


class _RetryAfter(Exception):
    """A 429: the node is asked again once its Retry-After has passed."""


def _cut(sock):
    # Ends a request at once: a read or write blocked on sock returns.
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
