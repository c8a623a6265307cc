"""snowflake_ids leasing worker ids from a real etcd: test/sdk_python.sh starts
one and names it in SNOWFLAKE_TEST_ETCD (skipped without it). A fork child
leases an id of its own."""

import multiprocessing
import os
import unittest

import snowflake_ids
from snowflake_ids import Generator

from helpers import error_of, in_fork

ETCD = os.environ.get("SNOWFLAKE_TEST_ETCD")


def child_leases(gen, queue):
    try:
        first = error_of(gen.next_id)
        gen.wait_ready(20)
        i = gen.next_id()
        queue.put((first, snowflake_ids.decode(i).worker_id, gen.stats()["pid"]))
        gen.close()  # the child's own lease ends now
    except BaseException as e:  # reported, not lost in the child
        queue.put(("failed", repr(e), None))


@unittest.skipUnless(ETCD, "SNOWFLAKE_TEST_ETCD is not set (test/sdk_python.sh starts an etcd)")
class EtcdTest(unittest.TestCase):
    def open(self, **kw):
        gen = Generator(etcd_endpoints=ETCD, timeout=20, **kw)
        self.addCleanup(gen.close)
        return gen

    def test_holds_a_worker_id_of_the_default_range(self):
        gen = self.open()
        stats = gen.stats()
        self.assertEqual(stats["state"], "held")
        self.assertEqual(stats["coordinator"], "etcd")
        self.assertTrue(512 <= stats["worker_id"] <= 1023, stats)
        a, b = gen.next_id(), gen.next_id()
        self.assertGreater(b, a)
        self.assertEqual(snowflake_ids.decode(a).worker_id, stats["worker_id"])

    def test_two_generators_hold_different_ids(self):
        g1 = self.open(lease_prefix="/sdk-python-two")
        g2 = self.open(lease_prefix="/sdk-python-two")
        self.assertNotEqual(snowflake_ids.decode(g1.next_id()).worker_id,
                            snowflake_ids.decode(g2.next_id()).worker_id)

    def test_close_ends_the_lease_at_once(self):
        kw = dict(lease_prefix="/sdk-python-close", worker_ids="701-701", lease_ttl=60)
        first = Generator(etcd_endpoints=ETCD, timeout=20, **kw)
        last = first.next_id()
        with self.assertRaises(snowflake_ids.NotReadyError):
            Generator(etcd_endpoints=ETCD, timeout=1, **kw)
        first.close()
        # Well within the 60 s TTL: only a released lease can be had this soon.
        with Generator(etcd_endpoints=ETCD, timeout=20, **kw) as second:
            self.assertEqual(second.stats()["worker_id"], 701)
            self.assertGreater(second.next_id(), last)

    def test_exit_with_a_generator_open_ends_its_lease(self):
        import subprocess
        import sys
        kw = dict(lease_prefix="/sdk-python-exit", worker_ids="711-711", lease_ttl=60)
        # The child opens, issues an id and exits without close(): the atexit
        # handler closes the generator.
        out = subprocess.run(
            [sys.executable, "-c",
             "import snowflake_ids; g = snowflake_ids.Generator(etcd_endpoints=%r, timeout=20, **%r); print(g.next_id())"
             % (ETCD, kw)],
            check=True, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        child_id = int(out.stdout)
        self.assertEqual(snowflake_ids.decode(child_id).worker_id, 711)
        # Well within the 60 s TTL: only a released lease can be had this soon.
        with Generator(etcd_endpoints=ETCD, timeout=10, **kw) as gen:
            self.assertGreater(gen.next_id(), child_id)

    def test_os_fork_child_leases_its_own_id(self):
        gen = self.open(lease_prefix="/sdk-python-fork")
        parent_worker = gen.stats()["worker_id"]

        def child():
            first = error_of(gen.next_id)
            gen.wait_ready(20)
            ids = gen.next_ids(100)
            stats = gen.stats()
            gen.close()
            return {"first": first, "worker": snowflake_ids.decode(ids[0]).worker_id,
                    "stats_worker": stats["worker_id"], "pid": stats["pid"], "me": os.getpid()}

        out = in_fork(child)
        self.assertEqual(out["first"]["class"], "NoLeaseError")
        self.assertEqual(out["first"]["sqlstate"], "SF003")
        self.assertNotEqual(out["worker"], parent_worker)
        self.assertEqual(out["worker"], out["stats_worker"])
        self.assertEqual(out["pid"], out["me"])
        # The parent keeps its id and goes on.
        self.assertEqual(snowflake_ids.decode(gen.next_id()).worker_id, parent_worker)

    def test_close_ends_a_wait_in_another_thread(self):
        # The parent holds the only id of the range, so the fork child's lease
        # can never be had and its wait_ready() waits; close() from another
        # thread ends that wait with ClosedError, at once, not at its timeout.
        gen = self.open(lease_prefix="/sdk-python-wait", worker_ids="720-720")

        def child():
            import threading
            first = error_of(gen.next_id)  # starts the child's own lease
            seen = {}
            started = threading.Event()

            def wait():
                started.set()
                seen["error"] = error_of(lambda: gen.wait_ready(60))

            t = threading.Thread(target=wait)
            t.start()
            started.wait(10)
            gen.close()
            t.join(20)
            return {"first": first, "alive": t.is_alive(), "error": seen.get("error")}

        out = in_fork(child)
        self.assertEqual(out["first"]["sqlstate"], "SF003")
        self.assertFalse(out["alive"], "wait_ready went on after close()")
        self.assertEqual(out["error"]["class"], "ClosedError")
        self.assertEqual(out["error"]["sqlstate"], "55000")
        self.assertEqual(snowflake_ids.decode(gen.next_id()).worker_id, 720)

    def test_multiprocessing_fork_children_lease_their_own_ids(self):
        gen = self.open(lease_prefix="/sdk-python-mp")
        parent_worker = gen.stats()["worker_id"]
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        procs = [ctx.Process(target=child_leases, args=(gen, queue)) for _ in range(2)]
        for p in procs:
            p.start()
        results = [queue.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(60)
            self.assertEqual(p.exitcode, 0)
        workers = set()
        for first, worker, pid in results:
            self.assertNotEqual(first, "failed", worker)
            self.assertEqual(first["sqlstate"], "SF003")
            self.assertNotEqual(worker, parent_worker)
            workers.add(worker)
        self.assertEqual(len(workers), 2, results)
        gen.next_id()


if __name__ == "__main__":
    unittest.main()
