"""A fork child of a generator with a static worker id: it never issues under
its parent's worker id (SF003, with a hint that says why), and the parent
goes on. os.fork() and multiprocessing's fork start method."""

import multiprocessing
import unittest

import snowflake_ids
from snowflake_ids import Generator

from helpers import TempDir, error_of, in_fork


def child_next_id(gen, queue):
    try:
        gen.next_id()
        queue.put(("issued", None, None))
    except snowflake_ids.Error as e:
        queue.put((type(e).__name__, e.sqlstate, e.hint))


class ForkStaticTest(unittest.TestCase):
    def setUp(self):
        self.tmp = TempDir()
        self.addCleanup(self.tmp.remove)
        self.gen = Generator(worker_id=21, mark_file=self.tmp.mark())
        self.addCleanup(self.gen.close)

    def test_os_fork_child_cannot_issue(self):
        before = self.gen.next_id()
        gen = self.gen

        def child():
            first = error_of(gen.next_id)
            second = error_of(gen.next_id)  # still not: a static id cannot follow a fork
            return [first, second]

        first, second = in_fork(child)
        for e in (first, second):
            self.assertIsNotNone(e, "the child issued an id under its parent's worker id")
            self.assertEqual(e["class"], "NoLeaseError")
            self.assertEqual(e["sqlstate"], "SF003")
            self.assertTrue(e["hint"])
        # The parent goes on.
        self.assertGreater(self.gen.next_id(), before)
        self.assertEqual(self.gen.stats()["worker_id"], 21)

    def test_multiprocessing_fork_child_cannot_issue(self):
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        p = ctx.Process(target=child_next_id, args=(self.gen, queue))
        p.start()
        result = queue.get(timeout=60)
        p.join(60)
        self.assertEqual(p.exitcode, 0)
        self.assertEqual(result[:2], ("NoLeaseError", "SF003"))
        self.assertTrue(result[2])
        self.gen.next_id()


if __name__ == "__main__":
    unittest.main()
