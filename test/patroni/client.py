#!/usr/bin/python3
"""Inserts rows keyed by snowflake_nextval() through the leader of a Patroni
cluster, for test/patroni.sh, and records every answer.

    client.py MODE OUTFILE NAME=HOST:PORT...

Finds the leader itself: it connects to each member in turn (one second to
connect and to answer, as a pooler's health check would) and keeps the first
one that is not in recovery. Then it runs

    INSERT INTO ids(id, member) VALUES (snowflake_nextval(), NAME) RETURNING id

in autocommit, one row at a time, until it is terminated. MODE says how long
it waits for an answer:
  follow   one second; then it drops the connection and looks for the
           leader again (a client with a timeout)
  patient  as long as it takes (a connection in an application's pool: a
           frozen server keeps it waiting, and it carries on when the
           server resumes)
After an error that says the member is not (or no longer) a writable
primary, or a broken connection, it looks for the leader again; after
others (the extension refusing an id) it tries again on the same connection
10 ms later.

One line per answer, appended to OUTFILE as it arrives, with the real time
(Unix seconds) the answer arrived:
    <time> <member> <id>                    an acknowledged insert
    <time> <member> ERR <sqlstate> <text>   an error (sqlstate "conn" for a
                                            broken connection, "timeout")
Needs Debian's python3-psycopg2 (run with /usr/bin/python3).
"""
import select
import signal
import sys
import time

import psycopg2
import psycopg2.extensions as ext

# Errors after which the member is not asked again: it is a standby, shutting
# down, or gone.
REDIRECT = {'25006', '57P01', '57P02', '57P03', '08000', '08003', '08006'}


class Timeout(Exception):
    pass


def wait(conn, timeout):
    """Drives an asynchronous connection until its operation completes."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        state = conn.poll()
        if state == ext.POLL_OK:
            return
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if state == ext.POLL_READ:
            ready = select.select([conn.fileno()], [], [], left)[0]
        elif state == ext.POLL_WRITE:
            ready = select.select([], [conn.fileno()], [], left)[1]
        else:
            raise psycopg2.OperationalError('bad poll state %r' % state)
        if not ready and deadline is not None and time.monotonic() >= deadline:
            raise Timeout()


def main():
    mode, outfile = sys.argv[1], sys.argv[2]
    members = []
    for arg in sys.argv[3:]:
        name, addr = arg.split('=', 1)
        host, port = addr.rsplit(':', 1)
        members.append((name, host, int(port)))
    timeout = {'follow': 1.0, 'patient': None}[mode]
    out = open(outfile, 'a', buffering=1)

    def record(member, what):
        out.write('%.6f %s %s\n' % (time.time(), member, what))

    def stop(signum, frame):
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)

    def close(conn):
        try:
            conn.close()
        except Exception:
            pass

    def find_leader(start):
        """(conn, name) of the first member, from start on, that accepts
        writes; None if none does now."""
        for k in range(len(members)):
            name, host, port = members[(start + k) % len(members)]
            conn = None
            try:
                conn = psycopg2.connect(host=host, port=port, user='postgres', dbname='postgres',
                                        application_name='patroni-test-' + mode, async_=1)
                wait(conn, 1.0)
                cur = conn.cursor()
                cur.execute('SELECT pg_is_in_recovery()')
                wait(conn, 1.0)
                if not cur.fetchone()[0]:
                    return conn, name, (start + k) % len(members)
            except (psycopg2.Error, Timeout, OSError):
                pass
            if conn is not None:
                close(conn)
        return None

    last = 0
    while True:
        found = find_leader(last)
        if found is None:
            time.sleep(0.05)
            continue
        conn, name, last = found
        cur = conn.cursor()
        while True:
            try:
                cur.execute('INSERT INTO ids(id, member) VALUES (snowflake_nextval(), %s) RETURNING id',
                            (name,))
                wait(conn, timeout)
                record(name, cur.fetchone()[0])
            except Timeout:
                record(name, 'ERR timeout no answer within %.1f s' % timeout)
                break
            except psycopg2.Error as e:
                code = e.pgcode or 'conn'
                text = (e.pgerror or str(e)).strip().splitlines()
                record(name, 'ERR %s %s' % (code, text[0] if text else ''))
                if conn.closed or code in REDIRECT or code == 'conn':
                    break
                time.sleep(0.01)
        close(conn)


if __name__ == '__main__':
    main()
