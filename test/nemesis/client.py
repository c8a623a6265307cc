#!/usr/bin/python3
"""A client of the nemesis suite (test/nemesis/run.sh): inserts ids into one
node, one call after another, until it is terminated, and records every
attempt.

Usage: client.py NODE INDEX SOCKET_DIR PORT OUT_FILE PAUSE_MS

One line per attempt, appended to OUT_FILE with a single write (a line is
whole even when the process is killed):
  <sent> <answered> <node> <index> <backend pid> <result>
sent, answered: Unix seconds (the real clock of this machine, which no fault
moves: the servers' clocks are moved by libfaketime inside the servers only);
result: the id the INSERT acknowledged (committed), or the SQLSTATE of the
error, or "conn" when there was no connection (node down, or the connection
broke: the outcome of that call is unknown and it is not counted as an id).
"""
import os
import sys
import time

import psycopg2
import psycopg2.extensions

INSERT = "INSERT INTO nemesis_ids (id) VALUES (snowflake_nextval()) RETURNING id"


def main():
    node, index, host, port, out, pause_ms = sys.argv[1:7]
    pause = float(pause_ms) / 1000.0
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(sent, answered, pid, result):
        os.write(fd, ("%.6f %.6f %s %s %s %s\n" % (sent, answered, node, index, pid, result)).encode())

    conn = None
    pid = 0
    while True:
        if conn is None:
            sent = time.time()
            try:
                conn = psycopg2.connect(host=host, port=port, user="postgres", dbname="postgres",
                                        connect_timeout=3,
                                        application_name="nemesis-client-%s-%s" % (node, index))
                conn.autocommit = True
                cur = conn.cursor()
                pid = conn.get_backend_pid()
            except psycopg2.Error:
                conn = None
                record(sent, time.time(), 0, "conn")
                time.sleep(0.1)
                continue
        sent = time.time()
        try:
            cur.execute(INSERT)
            (the_id,) = cur.fetchone()
            record(sent, time.time(), pid, the_id)
            if pause > 0:
                time.sleep(pause)
        except psycopg2.Error as e:
            answered = time.time()
            if e.pgcode is not None and conn.closed == 0:
                record(sent, answered, pid, e.pgcode)
            else:
                record(sent, answered, pid, "conn")
                try:
                    conn.close()
                except psycopg2.Error:
                    pass
                conn = None
            time.sleep(0.02)


if __name__ == "__main__":
    main()
