#!/usr/bin/python3
"""A client of the nemesis suite (test/nemesis/run.sh): takes ids from one
node, one call after another, until it is terminated, and records every
attempt.

Usage: client.py NODE LABEL KIND OUT_FILE PAUSE_MS TARGET...
  KIND single: TARGET is SOCKET_DIR PORT; one id a call,
         INSERT INTO nemesis_ids VALUES (snowflake_nextval()) RETURNING id
         (autocommit: the id is acknowledged once the row is committed).
  KIND batch:  TARGET is SOCKET_DIR PORT COUNT; COUNT ids a call,
         snowflake_nextval_batch(COUNT) in one SELECT (autocommit).
  KIND http:   TARGET is HOST PORT COUNT TOKEN_FILE; COUNT ids a call,
         GET /v1/ids/batch?count=COUNT with the bearer token, over one
         kept-alive connection (run inside the node's network namespace).

One line per attempt, appended to OUT_FILE with a single write (a line is
whole even when the process is killed):
  <sent> <answered> <node> <label> <backend> <result>
sent, answered: seconds of CLOCK_BOOTTIME, the boot clock every process of
this machine shares (libfaketime, which moves the servers' wall clocks, is
told to leave it alone, and nothing steps it); backend: the backend's pid
(SQL), or "http<n>" for the client's n-th HTTP connection; result: the id
(single), or the ids of a batch as runs of consecutive values,
"b<first>+<n>,<first>+<n>,..." in the order they came (a 4,096-id batch is
one to a few runs: it fills one millisecond or spans two); or "E" and the
SQLSTATE of the error (HTTP: the "code" of the JSON error; "http<status>"
without one; the "E" keeps a SQLSTATE of digits, 25006 say, from reading as
an id), or "conn" when there was no connection (node down, the connection
broke, no answer in time: the outcome of that call is
unknown and it is not counted as an id).
"""
import http.client
import json
import os
import sys
import time

INSERT = "INSERT INTO nemesis_ids (id) VALUES (snowflake_nextval()) RETURNING id"
BATCH = ("SELECT array_agg(i ORDER BY n) FROM snowflake_nextval_batch(%s) WITH ORDINALITY AS b(i, n)")


def boot_now():
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def runs_text(ids):
    """The ids as runs of consecutive values, in the order given."""
    out = []
    first = prev = None
    for i in ids:
        if prev is not None and i == prev + 1:
            prev = i
            continue
        if first is not None:
            out.append("%d+%d" % (first, prev - first + 1))
        first = prev = i
    if first is not None:
        out.append("%d+%d" % (first, prev - first + 1))
    return "b" + ",".join(out)


def sql_client(record, node, label, host, port, pause, statement, batch):
    import psycopg2  # only the SQL clients need it

    conn = None
    pid = 0
    while True:
        if conn is None:
            sent = boot_now()
            try:
                conn = psycopg2.connect(host=host, port=port, user="postgres", dbname="postgres",
                                        connect_timeout=3,
                                        application_name="nemesis-client-%s-%s" % (node, label))
                conn.autocommit = True
                cur = conn.cursor()
                pid = conn.get_backend_pid()
            except psycopg2.Error:
                conn = None
                record(sent, boot_now(), 0, "conn")
                time.sleep(0.1)
                continue
        sent = boot_now()
        try:
            cur.execute(statement)
            (value,) = cur.fetchone()
            answered = boot_now()
            record(sent, answered, pid, runs_text(value) if batch else value)
            if pause > 0:
                time.sleep(pause)
        except psycopg2.Error as e:
            answered = boot_now()
            if e.pgcode is not None and conn.closed == 0:
                record(sent, answered, pid, "E" + e.pgcode)
            else:
                record(sent, answered, pid, "conn")
                try:
                    conn.close()
                except psycopg2.Error:
                    pass
                conn = None
            time.sleep(0.02)


def http_client(record, host, port, count, token_file, pause):
    with open(token_file) as f:
        token = f.read().strip()
    headers = {"Authorization": "Bearer " + token}
    path = "/v1/ids/batch?count=%d" % count
    conn = None
    conns = 0
    while True:
        if conn is None:
            conn = http.client.HTTPConnection(host, port, timeout=5)
            conns += 1
            pid = "http%d" % conns
        sent = boot_now()
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException):
            record(sent, boot_now(), pid, "conn")
            conn.close()
            conn = None
            time.sleep(0.1)
            continue
        answered = boot_now()
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if resp.status == 200 and isinstance(doc, dict) and isinstance(doc.get("ids"), list):
            record(sent, answered, pid, runs_text(int(x) for x in doc["ids"]))
            if pause > 0:
                time.sleep(pause)
            continue
        code = doc.get("code") if isinstance(doc, dict) else None
        record(sent, answered, pid, "E" + code if isinstance(code, str) and code.isalnum() else "http%d" % resp.status)
        if resp.will_close:
            conn.close()
            conn = None
        time.sleep(0.02)


def main():
    node, label, kind, out, pause_ms = sys.argv[1:6]
    target = sys.argv[6:]
    pause = float(pause_ms) / 1000.0
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(sent, answered, pid, result):
        os.write(fd, ("%.6f %.6f %s %s %s %s\n" % (sent, answered, node, label, pid, result)).encode())

    if kind == "single":
        sql_client(record, node, label, target[0], target[1], pause, INSERT, False)
    elif kind == "batch":
        sql_client(record, node, label, target[0], target[1], pause, BATCH % int(target[2]), True)
    elif kind == "http":
        http_client(record, target[0], int(target[1]), int(target[2]), target[3], pause)
    else:
        sys.exit("client.py: KIND is single, batch or http, not %r" % kind)


if __name__ == "__main__":
    main()
