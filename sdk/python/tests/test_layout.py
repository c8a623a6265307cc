"""snowflake_ids in another layout than twitter's (layout=, the nodes'
snowflake.layout): a js-safe generator's ids lie below 2**53 with the worker
id in bits 6-11; a bad layout, a worker id beyond it and a mark file of
another layout raise ConfigError (22023); decode under a layout; and, against
the etcd of test/sdk_python.sh (skipped without it), the layout's default
range and a second process of another layout in a fleet, which does not
lease (FleetMismatchError, 55000, naming both layouts)."""

import json
import os
import subprocess
import sys
import time
import unittest

import snowflake_ids
from snowflake_ids import Generator

from helpers import TempDir

ETCD = os.environ.get("SNOWFLAKE_TEST_ETCD")
TWO_TO_53 = 1 << 53


class LayoutTest(unittest.TestCase):
    def setUp(self):
        self.tmp = TempDir()
        self.addCleanup(self.tmp.remove)

    def open(self, worker_id, **kw):
        gen = Generator(worker_id=worker_id, mark_file=kw.pop("mark_file", None) or self.tmp.mark(), **kw)
        self.addCleanup(gen.close)
        return gen

    def assert_refused(self, names, **kw):
        """Generator(**kw) raises ConfigError (22023) whose text has each of names."""
        with self.assertRaises(snowflake_ids.ConfigError) as cm:
            Generator(**kw)
        e = cm.exception
        self.assertEqual(e.sqlstate, "22023")
        text = " / ".join(str(t) for t in (e.message, e.detail, e.hint))
        for name in names:
            self.assertIn(name, text)

    def test_js_safe_ids_are_below_2_to_53_with_the_worker_id_in_bits_6_to_11(self):
        gen = self.open(37, layout="js-safe")
        prev = -1
        ids = [gen.next_id() for _ in range(3000)] + gen.next_ids(500)
        for i in ids:
            self.assertGreater(i, prev)
            self.assertLess(i, TWO_TO_53)
            self.assertEqual((i >> 6) & 63, 37)
            self.assertEqual(int(float(i)), i)  # a double holds it exactly
            prev = i
        d = snowflake_ids.decode(prev, layout="js-safe")
        self.assertEqual(d.worker_id, 37)
        self.assertEqual(d.sequence, prev & 63)
        self.assertLess(abs(d.timestamp.timestamp() - time.time()), 60)
        stats = gen.stats()
        self.assertEqual(stats["layout"], "js-safe")
        self.assertEqual(stats["worker_id"], 37)

    def test_twitter_is_the_default(self):
        self.assertEqual(self.open(38).stats()["layout"], "twitter")

    def test_a_bad_layout_and_a_worker_id_beyond_it_are_refused(self):
        self.assert_refused(["layout", "js-unsafe"], worker_id=5, mark_file=self.tmp.mark(), layout="js-unsafe")
        self.assert_refused(["layout", "sonyflake"], worker_id=5, mark_file=self.tmp.mark(), layout="sonyflake")
        self.assert_refused(["layout"], worker_id=5, mark_file=self.tmp.mark(), layout=41)
        self.assert_refused(["worker_id 64", "js-safe", "63"], worker_id=64, mark_file=self.tmp.mark(),
                            layout="js-safe")
        self.assert_refused(["100", "js-safe"], worker_id=5, mark_file=self.tmp.mark(), layout="js-safe",
                            worker_ids=(0, 100))
        # More worker bits than twitter's: an id above 1023 fits.
        gen = self.open(3000, layout="time 41, worker 12, sequence 10")
        self.assertEqual((gen.next_id() >> 10) & 4095, 3000)

    def test_a_mark_file_of_another_layout_is_refused_naming_both(self):
        mark = self.tmp.mark()
        Generator(worker_id=40, mark_file=mark).close()
        self.assert_refused(["js-safe", "twitter"], worker_id=40, mark_file=mark, layout="js-safe")
        Generator(worker_id=40, mark_file=mark).close()  # its own layout still opens it

    def test_decode_under_a_layout(self):
        i = (1000 << 12) | (5 << 6) | 3
        d = snowflake_ids.decode(i, epoch=0, layout="js-safe")
        self.assertEqual((d.ms_since_epoch, d.worker_id, d.sequence), (1000, 5, 3))
        self.assertEqual(d.timestamp.timestamp(), 1.0)
        self.assertEqual(snowflake_ids.decode(1 << 22, layout="twitter"), snowflake_ids.decode(1 << 22))
        for bad, layout in ((TWO_TO_53, "js-safe"), (1, "sonyflake"), (1, 7)):
            with self.assertRaises(snowflake_ids.ConfigError) as cm:
                snowflake_ids.decode(bad, layout=layout)
            self.assertEqual(cm.exception.sqlstate, "22023")


SECOND_PROCESS = """
import json, sys
import snowflake_ids
try:
    with snowflake_ids.Generator(etcd_endpoints=sys.argv[1], lease_prefix=sys.argv[2], layout="js-safe",
                                 timeout=20) as g:
        print(json.dumps({"held": g.stats()["worker_id"]}))
except snowflake_ids.Error as e:
    print(json.dumps({"class": type(e).__name__, "sqlstate": e.sqlstate, "message": e.message,
                      "detail": e.detail, "hint": e.hint}))
"""


@unittest.skipUnless(ETCD, "SNOWFLAKE_TEST_ETCD is not set (test/sdk_python.sh starts an etcd)")
class LayoutEtcdTest(unittest.TestCase):
    def test_a_leased_js_safe_generator_takes_an_id_of_the_upper_half(self):
        with Generator(etcd_endpoints=ETCD, lease_prefix="/sdk-python-js-safe", layout="js-safe", timeout=20) as g:
            w = g.stats()["worker_id"]
            self.assertTrue(32 <= w <= 63, w)
            i = g.next_id()
            self.assertLess(i, TWO_TO_53)
            self.assertEqual((i >> 6) & 63, w)

    def test_a_process_of_another_layout_in_a_fleet_does_not_lease(self):
        prefix = "/sdk-python-layout-fleet"
        with Generator(etcd_endpoints=ETCD, lease_prefix=prefix, timeout=20) as first:
            out = subprocess.run([sys.executable, "-c", SECOND_PROCESS, ETCD, prefix], capture_output=True,
                                 text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            self.assertNotIn("held", r, "the js-safe process leased a worker id")
            self.assertEqual(r["class"], "FleetMismatchError", r)
            self.assertEqual(r["sqlstate"], "55000")
            self.assertIn("js-safe", r["detail"])
            self.assertIn("twitter", r["detail"])
            self.assertIn("layout", r["hint"])
            self.assertEqual(first.stats()["state"], "held")  # the fleet's member goes on


if __name__ == "__main__":
    unittest.main()
