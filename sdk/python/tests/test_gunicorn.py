"""A gunicorn --preload server (Debian's gunicorn, real workers forked from
its master) whose application makes its generator at import: no worker ever
issues under the master's worker id (each worker's first call is refused,
SF003) and each worker leases one of its own; no id twice across the
workers. Needs SNOWFLAKE_TEST_ETCD (test/sdk_python.sh starts an etcd)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

ETCD = os.environ.get("SNOWFLAKE_TEST_ETCD")
HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(ETCD, "SNOWFLAKE_TEST_ETCD is not set (test/sdk_python.sh starts an etcd)")
class GunicornPreloadTest(unittest.TestCase):
    def test_preloaded_workers_lease_their_own_ids(self):
        tmp = tempfile.mkdtemp(prefix="snowflake-sdk-gunicorn-")
        self.addCleanup(shutil.rmtree, tmp, True)
        port = free_port()
        sdk_python = os.path.dirname(HERE)
        env = dict(os.environ, APP_PORT=str(port), APP_MASTER_FILE=os.path.join(tmp, "master"),
                   APP_WORKER_FILE=os.path.join(tmp, "worker"),
                   PYTHONPATH=os.pathsep.join([os.path.join(HERE, "gunicorn_app"), sdk_python]))
        log = open(os.path.join(tmp, "gunicorn.log"), "w")
        self.addCleanup(log.close)
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c",
                                   os.path.join(HERE, "gunicorn_app", "gunicorn.conf.py"), "app:application"],
                                  env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=log)

        def stop():
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        self.addCleanup(stop)

        # Each worker writes what it issued after its post_fork wait.
        def worker_files():
            return sorted(f for f in os.listdir(tmp) if f.startswith("worker."))
        deadline = time.monotonic() + 30
        while len(worker_files()) < 2:
            self.assertIsNone(server.poll(), "gunicorn runs (see %s/gunicorn.log)" % tmp)
            self.assertLess(time.monotonic(), deadline, "both workers leased an id (gunicorn.log)")
            time.sleep(0.05)
        # ... and the server answers with ids (whichever worker accepts).
        answers = []
        for _ in range(50):
            with urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=10) as r:
                answers.append(tuple(int(x) for x in r.read().split()))

        master_pid, master_worker = (int(x) for x in open(os.path.join(tmp, "master")).read().split())
        workers = {}
        ids = []
        for name in worker_files():
            first, worker, *issued = open(os.path.join(tmp, name)).read().split()
            pid = int(name.split(".")[1])
            self.assertNotEqual(pid, master_pid)
            self.assertEqual(first, "SF003", "worker %d's first call is refused, not issued under the master's "
                                             "worker id" % pid)
            workers[pid] = int(worker)
            issued = [int(i) for i in issued]
            self.assertEqual(issued, sorted(issued))
            self.assertEqual({(i >> 12) & 1023 for i in issued}, {int(worker)})
            ids += issued
        self.assertNotIn(master_worker, workers.values(), "no worker issues under the master's worker id")
        self.assertEqual(len(set(workers.values())), 2, "each worker holds a worker id of its own")
        for i, pid, worker in answers:
            self.assertEqual(workers.get(pid), worker, "an answer comes from a worker, under its own id")
            self.assertEqual((i >> 12) & 1023, worker)
        ids += [i for i, _, _ in answers]
        self.assertEqual(len(ids), len(set(ids)), "no id twice across the workers")

if __name__ == "__main__":
    unittest.main()
