"""snowflake_ids leasing a worker id from a real ZooKeeper: test/sdk_python.sh
starts one and names it in SNOWFLAKE_TEST_ZK (skipped without it)."""

import os
import unittest

import snowflake_ids

ZK = os.environ.get("SNOWFLAKE_TEST_ZK")


@unittest.skipUnless(ZK, "SNOWFLAKE_TEST_ZK is not set (test/sdk_python.sh starts a ZooKeeper)")
class ZooKeeperTest(unittest.TestCase):
    def test_holds_a_worker_id_of_the_default_range(self):
        with snowflake_ids.Generator(zookeeper_hosts=ZK.split(","), lease_prefix="/sdk-python-zk", timeout=30) as gen:
            stats = gen.stats()
            self.assertEqual(stats["state"], "held")
            self.assertEqual(stats["coordinator"], "zookeeper")
            self.assertTrue(512 <= stats["worker_id"] <= 1023, stats)
            a = gen.next_id()
            self.assertGreater(gen.next_id(), a)
            self.assertEqual(snowflake_ids.decode(a).worker_id, stats["worker_id"])


if __name__ == "__main__":
    unittest.main()
