"""snowflake_ids with a static worker id and a mark file in a temporary
directory: ids, batches, decode, errors and their classes, the mark file's
lock, close and the context manager. test/sdk_python.sh runs every file here."""

import datetime
import threading
import unittest

import snowflake_ids
from snowflake_ids import Generator

from helpers import TempDir

EPOCH = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)


class StaticTest(unittest.TestCase):
    def setUp(self):
        self.tmp = TempDir()
        self.addCleanup(self.tmp.remove)

    def open(self, worker_id, **kw):
        gen = Generator(worker_id=worker_id, mark_file=kw.pop("mark_file", None) or self.tmp.mark(), **kw)
        self.addCleanup(gen.close)
        return gen

    def test_ids_increase_and_are_ints(self):
        gen = self.open(5)
        prev = gen.next_id()
        self.assertIs(type(prev), int)
        for _ in range(20000):
            i = gen.next_id()
            self.assertIs(type(i), int)
            self.assertGreater(i, prev)
            prev = i
        self.assertEqual(snowflake_ids.decode(prev).worker_id, 5)
        stats = gen.stats()
        self.assertEqual(stats["state"], "static")
        self.assertEqual(stats["worker_id"], 5)
        self.assertEqual(stats["coordinator"], "static")
        self.assertGreaterEqual(stats["ids_issued"], 20001)

    def test_next_ids(self):
        gen = self.open(6)
        before = gen.next_id()
        ids = gen.next_ids(5000)
        self.assertEqual(len(ids), 5000)
        self.assertTrue(all(type(i) is int for i in ids))
        self.assertGreater(ids[0], before)
        self.assertEqual(ids, sorted(set(ids)))
        self.assertGreater(gen.next_id(), ids[-1])
        for bad in (0, -1, 1000001):
            with self.assertRaises(snowflake_ids.ConfigError) as cm:
                gen.next_ids(bad)
            self.assertEqual(cm.exception.sqlstate, "22023")
        with self.assertRaises(TypeError):
            gen.next_ids("3")

    def test_decode_round_trip(self):
        gen = self.open(9)
        t0 = datetime.datetime.now(datetime.timezone.utc)
        i = gen.next_id()
        t1 = datetime.datetime.now(datetime.timezone.utc)
        d = snowflake_ids.decode(i)
        self.assertEqual(d.timestamp.tzinfo, datetime.timezone.utc)
        slack = datetime.timedelta(milliseconds=5)
        self.assertTrue(t0 - slack <= d.timestamp <= t1 + slack, (t0, d.timestamp, t1))
        self.assertEqual(d.worker_id, 9)
        self.assertEqual(d.timestamp - EPOCH, datetime.timedelta(milliseconds=d.ms_since_epoch))
        self.assertEqual((d.ms_since_epoch << 22) | (d.worker_id << 12) | d.sequence, i)
        self.assertEqual(snowflake_ids.decode(i, epoch="2025-01-01 00:00:00+00"), d)
        self.assertEqual(snowflake_ids.decode(i, epoch=EPOCH), d)
        other = snowflake_ids.decode(i, epoch="2020-01-01 00:00:00+00")
        self.assertEqual(other.ms_since_epoch, d.ms_since_epoch)
        self.assertEqual(d.timestamp - other.timestamp,
                         EPOCH - datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc))

    def test_decode_layout(self):
        d = snowflake_ids.decode((1 << 22) | (1023 << 12) | 4095)
        self.assertEqual(d.timestamp, EPOCH + datetime.timedelta(milliseconds=1))
        self.assertEqual((d.ms_since_epoch, d.worker_id, d.sequence), (1, 1023, 4095))
        for bad in (-1, 1 << 63):
            with self.assertRaises(snowflake_ids.ConfigError):
                snowflake_ids.decode(bad)
        with self.assertRaises(snowflake_ids.ConfigError) as cm:
            snowflake_ids.decode(1, epoch="not an epoch")
        self.assertEqual(cm.exception.sqlstate, "22023")

    def test_bad_configurations(self):
        mark = self.tmp.mark()
        cases = [
            {},
            {"worker_id": 5},
            {"worker_id": 1024, "mark_file": mark},
            {"worker_id": -2, "mark_file": mark},
            {"worker_id": 5, "mark_file": mark, "epoch": "yesterday"},
            {"worker_id": 5, "mark_file": mark, "clock_backwards": "sideways"},
            {"worker_id": 5, "mark_file": mark, "worker_ids": "9-x"},
            {"worker_id": 5, "mark_file": mark, "lease_ttl": -1},
        ]
        for kw in cases:
            with self.subTest(kw=kw):
                with self.assertRaises(snowflake_ids.ConfigError) as cm:
                    Generator(**kw)
                e = cm.exception
                self.assertIsInstance(e, snowflake_ids.Error)
                self.assertIsInstance(e, ValueError)
                self.assertEqual(e.sqlstate, "22023")
                self.assertTrue(e.message)
        with self.assertRaises(TypeError):
            Generator(worker_id="five", mark_file=mark)
        with self.assertRaises(TypeError):
            Generator(colour="blue")

    def test_clock_failover_needs_a_leased_worker_id(self):
        with self.assertRaises(snowflake_ids.ConfigError) as cm:
            Generator(worker_id=5, mark_file=self.tmp.mark(), clock_backwards="failover")
        self.assertEqual(cm.exception.sqlstate, "22023")
        self.assertIn("clock failover needs leased worker ids", cm.exception.message)

    def test_mark_file_locked_by_a_second_generator(self):
        mark = self.tmp.mark()
        with Generator(worker_id=11, mark_file=mark) as first:
            with self.assertRaises(snowflake_ids.MarkLockedError) as cm:
                Generator(worker_id=11, mark_file=mark)
            self.assertEqual(cm.exception.sqlstate, "55006")
            self.assertTrue(cm.exception.hint)
            last = first.next_id()
        # Released by close; the next generator on the file issues above the first's ids.
        with Generator(worker_id=11, mark_file=mark) as second:
            self.assertGreater(second.next_id(), last)

    def test_mark_file_that_cannot_be_written(self):
        with self.assertRaises(snowflake_ids.MarkFileError) as cm:
            Generator(worker_id=12, mark_file=self.tmp.path + "/no-such-dir/mark")
        self.assertEqual(cm.exception.sqlstate, "58030")

    def test_close_then_use(self):
        gen = self.open(13)
        gen.next_id()
        self.assertFalse(gen.closed)
        gen.close()
        self.assertTrue(gen.closed)
        gen.close()  # twice is allowed
        for call in (gen.next_id, lambda: gen.next_ids(2), gen.stats, gen.wait_ready):
            with self.assertRaises(snowflake_ids.ClosedError) as cm:
                call()
            self.assertEqual(cm.exception.sqlstate, "55000")
            self.assertTrue(cm.exception.hint)

    def test_context_manager(self):
        mark = self.tmp.mark()
        with Generator(worker_id=14, mark_file=mark) as gen:
            self.assertIsInstance(gen, Generator)
            gen.next_id()
        self.assertTrue(gen.closed)
        with self.assertRaises(snowflake_ids.ClosedError):
            gen.next_id()
        # The exception inside passes through, and the generator is closed.
        with self.assertRaises(KeyError):
            with Generator(worker_id=14, mark_file=mark) as gen2:
                raise KeyError("x")
        self.assertTrue(gen2.closed)

    def test_error_classes(self):
        expected = {
            "ClockBehindError": "SF001", "ClockRangeError": "SF002", "NoLeaseError": "SF003",
            "ConfigError": "22023", "NotReadyError": "57014", "ClosedError": "55000",
            "FleetMismatchError": "55000", "MarkFileError": "58030", "MarkLockedError": "55006",
        }
        for name, sqlstate in expected.items():
            cls = getattr(snowflake_ids, name)
            self.assertTrue(issubclass(cls, snowflake_ids.Error), name)
            self.assertEqual(cls("m").sqlstate, sqlstate, name)

    def test_threads_share_a_generator(self):
        gen = self.open(15)
        out = [[] for _ in range(4)]

        def work(k):
            for _ in range(5000):
                out[k].append(gen.next_id())

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ids = [i for part in out for i in part]
        self.assertEqual(len(set(ids)), 20000)
        for part in out:
            self.assertEqual(part, sorted(part))


class NotReadyTest(unittest.TestCase):
    def test_no_lease_times_out_with_57014(self):
        # Nothing listens on port 1: no lease can be had.
        with self.assertRaises(snowflake_ids.NotReadyError) as cm:
            Generator(etcd_endpoints="http://127.0.0.1:1", timeout=0.3)
        self.assertEqual(cm.exception.sqlstate, "57014")
        self.assertIsInstance(cm.exception, TimeoutError)

    def test_the_wait_releases_the_gil(self):
        ticks = []
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks.append(1)
                stop.wait(0.001)

        t = threading.Thread(target=count)
        t.start()
        try:
            with self.assertRaises(snowflake_ids.NotReadyError):
                Generator(etcd_endpoints="http://127.0.0.1:1", timeout=0.5)
        finally:
            stop.set()
            t.join()
        self.assertGreater(len(ticks), 1)


if __name__ == "__main__":
    unittest.main()
