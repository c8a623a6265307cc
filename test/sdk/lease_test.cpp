// libsnowflake_ids leasing worker ids from a real etcd and a real ZooKeeper
// (test/sdk_c.sh starts both; each test runs against each one it names in
// SNOWFLAKE_TEST_ETCD and SNOWFLAKE_TEST_ZK): a lease held and ids issued
// under it, two generators of one registry on different ids, a close that
// frees the id at once for the next holder, who starts above the mark, the
// worker id range, a fleet of another epoch refused, a js-safe generator
// leasing from its layout's upper half and refused in a fleet of another
// layout, no lease failing at once, a fork child that leases an id of its
// own, and clock failover to a backup worker id and back.

#include "sdk_test.hpp"

#include "../../sdk/c/src/generator.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace sdk_test;

class SdkLease : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override {
        etcd_ = env("SNOWFLAKE_TEST_ETCD");
        zk_ = env("SNOWFLAKE_TEST_ZK");
        prefix_ = "/sdktest-" + std::to_string(std::random_device{}() % 1000000000);
    }
    // A configuration leasing under this test's prefix; the range
    // sf_config_init() leaves (the layout's upper half) unless given.
    sf_config config(int32_t lo = -1, int32_t hi = -1) {
        sf_config cfg;
        sf_config_init(&cfg);
        if (GetParam() == Backend::Etcd)
            cfg.etcd_endpoints = etcd_.c_str();
        else
            cfg.zookeeper_hosts = zk_.c_str();
        cfg.lease_prefix = prefix_.c_str();
        if (lo >= 0) cfg.worker_id_min = lo;
        if (hi >= 0) cfg.worker_id_max = hi;
        return cfg;
    }
    sf_generator* open_ready(const sf_config& cfg) {
        sf_generator* gen = nullptr;
        char err[512];
        EXPECT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_OK) << err;
        if (gen == nullptr) return nullptr;
        EXPECT_EQ(sf_wait_ready(gen, kReadyMs), SF_OK) << last_error_text();
        return gen;
    }
    static int32_t worker_of(sf_generator* gen) {
        sf_stats st;
        EXPECT_EQ(sf_status(gen, &st), SF_OK);
        return st.worker_id;
    }
    std::string etcd_, zk_, prefix_;
};

TEST_P(SdkLease, ALeaseIsHeldAndIdsFlow) {
    const sf_config cfg = config();
    sf_generator* gen = open_ready(cfg);
    ASSERT_NE(gen, nullptr);
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.state, SF_STATE_HELD);
    EXPECT_GE(st.worker_id, 512);
    EXPECT_LE(st.worker_id, 1023);
    EXPECT_STREQ(st.coordinator, GetParam() == Backend::Etcd ? "etcd" : "zookeeper");
    EXPECT_GT(st.lease_ms_left, 0);
    EXPECT_EQ(st.lease_acquisitions, 1);
    int64_t prev = -1;
    for (int i = 0; i < 20000; i++) {
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
        ASSERT_GT(id, prev);
        prev = id;
    }
    sf_decoded d;
    ASSERT_EQ(sf_decode(prev, 0, &d), SF_OK);
    EXPECT_EQ(d.worker_id, st.worker_id);
    std::vector<int64_t> batch(5000);
    int32_t got = 0;
    ASSERT_EQ(sf_next_ids(gen, batch.data(), 5000, &got), SF_OK) << last_error_text();
    EXPECT_EQ(got, 5000);
    EXPECT_GT(batch[0], prev);
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    // Every id issued lies at or below the reservation confirmed in the coordinator.
    EXPECT_GE(st.reserved_until_unix_ms - 1735689600000, id_ms(batch.back()));
    EXPECT_EQ(sf_close(gen), SF_OK) << last_error_text();
}

TEST_P(SdkLease, TwoGeneratorsOfOneRegistryGetDifferentIds) {
    const sf_config cfg = config();
    sf_generator* a = open_ready(cfg);
    sf_generator* b = open_ready(cfg);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    const int32_t wa = worker_of(a), wb = worker_of(b);
    EXPECT_GE(wa, 512);
    EXPECT_GE(wb, 512);
    EXPECT_NE(wa, wb);
    std::vector<int64_t> all;
    for (int i = 0; i < 5000; i++) {
        int64_t x = 0, y = 0;
        ASSERT_EQ(sf_next_id(a, &x), SF_OK) << last_error_text();
        ASSERT_EQ(sf_next_id(b, &y), SF_OK) << last_error_text();
        all.push_back(x);
        all.push_back(y);
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
    EXPECT_EQ(sf_close(a), SF_OK);
    EXPECT_EQ(sf_close(b), SF_OK);
}

// sf_close revokes the lease: the next holder of the id takes it without
// waiting for the TTL (30 s; the bound here is far below it) and starts
// above the exact mark.
TEST_P(SdkLease, ACloseFreesTheIdAtOnceForTheNextHolderAboveTheMark) {
    const sf_config cfg = config(700, 700);
    sf_generator* a = open_ready(cfg);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(worker_of(a), 700);
    int64_t last = 0;
    for (int i = 0; i < 10000; i++) ASSERT_EQ(sf_next_id(a, &last), SF_OK) << last_error_text();
    ASSERT_EQ(sf_close(a), SF_OK) << last_error_text();
    sf_generator* b = nullptr;
    ASSERT_EQ(sf_open(&cfg, &b, nullptr, 0), SF_OK);
    ASSERT_EQ(sf_wait_ready(b, 10000), SF_OK) << "not revoked at close? " << last_error_text();
    EXPECT_EQ(worker_of(b), 700);
    int64_t first = 0;
    ASSERT_EQ(sf_next_id(b, &first), SF_OK) << last_error_text();
    EXPECT_GT(first, last);
    EXPECT_GT(id_ms(first), id_ms(last));
    EXPECT_EQ(sf_close(b), SF_OK);
}

TEST_P(SdkLease, TheWorkerIdRangeIsHonoured) {
    const sf_config cfg = config(800, 801);
    sf_generator* a = open_ready(cfg);
    sf_generator* b = open_ready(cfg);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    const int32_t wa = worker_of(a), wb = worker_of(b);
    EXPECT_TRUE((wa == 800 && wb == 801) || (wa == 801 && wb == 800)) << wa << " " << wb;
    // A third finds the range full: no id, at once, and not ready.
    sf_generator* c = nullptr;
    ASSERT_EQ(sf_open(&cfg, &c, nullptr, 0), SF_OK);
    int64_t id = 0;
    EXPECT_EQ(sf_next_id(c, &id), SF_ERR_NO_LEASE);
    EXPECT_STREQ(sf_last_error()->sqlstate, "SF003");
    EXPECT_STRNE(sf_last_error()->hint, "");
    EXPECT_EQ(sf_wait_ready(c, 1500), SF_ERR_NOT_READY);
    // Once one closes, the third takes its id, inside the range.
    EXPECT_EQ(sf_close(a), SF_OK);
    ASSERT_EQ(sf_wait_ready(c, kReadyMs), SF_OK) << last_error_text();
    EXPECT_EQ(worker_of(c), wa);
    ASSERT_EQ(sf_next_id(c, &id), SF_OK);
    EXPECT_EQ(sf_close(b), SF_OK);
    EXPECT_EQ(sf_close(c), SF_OK);
}

TEST_P(SdkLease, AFleetOfAnotherEpochIsRefused) {
    sf_config cfg = config();
    sf_generator* a = open_ready(cfg);  // records the fleet's epoch (the default)
    ASSERT_NE(a, nullptr);
    cfg.epoch = "2024-06-01 00:00:00+00";
    sf_generator* b = nullptr;
    ASSERT_EQ(sf_open(&cfg, &b, nullptr, 0), SF_OK);
    EXPECT_EQ(sf_wait_ready(b, kReadyMs), SF_ERR_FLEET) << last_error_text();
    EXPECT_STREQ(sf_last_error()->sqlstate, "55000");
    EXPECT_NE(std::string(sf_last_error()->detail).find("epoch"), std::string::npos) << last_error_text();
    EXPECT_NE(std::string(sf_last_error()->hint).find("epoch"), std::string::npos) << last_error_text();
    int64_t id = 0;
    EXPECT_EQ(sf_next_id(b, &id), SF_ERR_FLEET);
    EXPECT_EQ(sf_close(b), SF_OK);
    EXPECT_EQ(sf_close(a), SF_OK);
}

// js-safe: the default range is the layout's upper half (32..63), ids lie
// below 2^53 with the worker id in bits 6-11.
TEST_P(SdkLease, AJsSafeGeneratorLeasesFromItsUpperHalf) {
    sf_config cfg = config();
    cfg.layout = "js-safe";
    sf_generator* gen = open_ready(cfg);
    ASSERT_NE(gen, nullptr);
    const int32_t w = worker_of(gen);
    EXPECT_GE(w, 32);
    EXPECT_LE(w, 63);
    int64_t prev = -1;
    for (int i = 0; i < 3000; i++) {
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
        ASSERT_GT(id, prev);
        ASSERT_LT(id, int64_t{1} << 53);
        ASSERT_EQ((id >> 6) & 63, w) << id;
        prev = id;
    }
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_STREQ(st.layout, "js-safe");
    EXPECT_EQ(sf_close(gen), SF_OK) << last_error_text();
}

// A layout of more worker bits than twitter's: a lease still holds ids of
// 0..1023 (the registry's keys), the default range their upper half, so two
// generators get two of them (a default of 2048..4095, clamped by the lease
// to 1023, left one id for both).
TEST_P(SdkLease, AWideLayoutLeasesFrom512To1023ByDefault) {
    sf_config cfg = config();
    cfg.layout = "time 41, worker 12, sequence 10";
    sf_generator* a = open_ready(cfg);
    sf_generator* b = open_ready(cfg);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    const int32_t wa = worker_of(a), wb = worker_of(b);
    EXPECT_NE(wa, wb);
    for (sf_generator* g : {a, b}) {
        const int32_t w = worker_of(g);
        EXPECT_GE(w, 512);
        EXPECT_LE(w, 1023);
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(g, &id), SF_OK) << last_error_text();
        EXPECT_EQ((id >> 10) & 4095, w);
    }
    EXPECT_EQ(sf_close(a), SF_OK) << last_error_text();
    EXPECT_EQ(sf_close(b), SF_OK) << last_error_text();
}

// The fleet key records the layout of the first holder: a generator of
// another layout under the prefix does not lease, and says both layouts.
TEST_P(SdkLease, AFleetOfAnotherLayoutIsRefusedNamingBoth) {
    sf_config cfg = config();
    sf_generator* a = open_ready(cfg);  // records the fleet's layout: twitter
    ASSERT_NE(a, nullptr);
    cfg.layout = "js-safe";
    sf_generator* b = nullptr;
    ASSERT_EQ(sf_open(&cfg, &b, nullptr, 0), SF_OK) << last_error_text();
    EXPECT_EQ(sf_wait_ready(b, kReadyMs), SF_ERR_FLEET) << last_error_text();
    EXPECT_STREQ(sf_last_error()->sqlstate, "55000");
    const std::string detail = sf_last_error()->detail;
    EXPECT_NE(detail.find("js-safe"), std::string::npos) << last_error_text();
    EXPECT_NE(detail.find("twitter"), std::string::npos) << last_error_text();
    EXPECT_NE(std::string(sf_last_error()->hint).find("layout"), std::string::npos) << last_error_text();
    int64_t id = 0;
    EXPECT_EQ(sf_next_id(b, &id), SF_ERR_FLEET);
    sf_stats st;
    ASSERT_EQ(sf_status(b, &st), SF_OK);
    EXPECT_NE(st.state, SF_STATE_HELD);
    EXPECT_EQ(st.worker_id, -1);
    EXPECT_EQ(sf_close(b), SF_OK);
    EXPECT_EQ(sf_close(a), SF_OK);
}

// A child of fork() never issues under its parent's worker id: its first
// call fails with SF003 and starts a lease of its own, which sf_wait_ready
// waits for; the parent's lease stays the parent's.
TEST_P(SdkLease, AForkChildLeasesAnIdOfItsOwn) {
    const sf_config cfg = config(900, 903);
    sf_generator* gen = open_ready(cfg);
    ASSERT_NE(gen, nullptr);
    const int32_t parent_worker = worker_of(gen);
    int64_t before = 0;
    ASSERT_EQ(sf_next_id(gen, &before), SF_OK);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int64_t report[4] = {0, -1, -1, -1};  // failed checks (bits), worker, an id's worker, pid
        int64_t id = 0;
        if (sf_next_id(gen, &id) != SF_ERR_NO_LEASE) report[0] |= 1;
        if (sf_wait_ready(gen, kReadyMs) != SF_OK) report[0] |= 2;
        sf_stats st;
        if (sf_status(gen, &st) != SF_OK || st.state != SF_STATE_HELD) report[0] |= 4;
        report[1] = st.worker_id;
        report[3] = st.pid;
        if (sf_next_id(gen, &id) != SF_OK) report[0] |= 8;
        sf_decoded d;
        if (sf_decode(id, 0, &d) == SF_OK) report[2] = d.worker_id;
        if (sf_close(gen) != SF_OK) report[0] |= 16;
        (void)!write(fds[1], report, sizeof report);
        _exit(0);
    }
    close(fds[1]);
    int64_t report[4] = {-1, -1, -1, -1};
    const ssize_t n = read(fds[0], report, sizeof report);
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_EQ(n, static_cast<ssize_t>(sizeof report));
    EXPECT_EQ(report[0], 0) << "the child's failed checks (bits)";
    EXPECT_NE(report[1], parent_worker);
    EXPECT_GE(report[1], 900);
    EXPECT_LE(report[1], 903);
    EXPECT_EQ(report[2], report[1]);
    EXPECT_EQ(report[3], pid);
    // The parent still holds its id: it issues, and nobody else can take it.
    int64_t after = 0;
    ASSERT_EQ(sf_next_id(gen, &after), SF_OK) << last_error_text();
    EXPECT_GT(after, before);
    EXPECT_EQ(worker_of(gen), parent_worker);
    sf_config only_parents = config(parent_worker, parent_worker);
    sf_generator* other = nullptr;
    ASSERT_EQ(sf_open(&only_parents, &other, nullptr, 0), SF_OK);
    EXPECT_EQ(sf_wait_ready(other, 1500), SF_ERR_NOT_READY);
    EXPECT_EQ(sf_close(other), SF_OK);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

// What etcd holds under a key (etcdctl, as test/lib/etcd.sh's helpers use it).
std::string etcd_get(const std::string& url, const std::string& key) {
    const std::string cmd = "ETCDCTL_API=3 etcdctl --endpoints=" + url + " get --print-value-only '" + key + "'";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[512];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
        pclose(p);
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// The worker key says an application process holds it; sf_close removes
// it and leaves the exact mark in the coordinator, at the last id.
TEST(SdkLeaseEtcd, TheWorkerKeyNamesTheProcessAndCloseLeavesTheExactMark) {
    const std::string url = env("SNOWFLAKE_TEST_ETCD");
    if (url.empty()) GTEST_SKIP() << "no etcd (test/sdk_c.sh starts one)";
    const std::string prefix = "/sdktest-key-" + std::to_string(std::random_device{}() % 1000000000);
    sf_config cfg;
    sf_config_init(&cfg);
    cfg.etcd_endpoints = url.c_str();
    cfg.lease_prefix = prefix.c_str();
    cfg.runtime = "c";
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    ASSERT_EQ(sf_wait_ready(gen, kReadyMs), SF_OK) << last_error_text();
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    const std::string key = prefix + "/workers/" + std::to_string(st.worker_id);
    const std::string value = etcd_get(url, key);
    EXPECT_NE(value.find("snowflake-node "), std::string::npos) << value;
    EXPECT_NE(value.find(" port=0 "), std::string::npos) << value;
    EXPECT_NE(value.find(" runtime=c pid=" + std::to_string(getpid())), std::string::npos) << value;
    int64_t last = 0;
    for (int i = 0; i < 1000; i++) ASSERT_EQ(sf_next_id(gen, &last), SF_OK);
    ASSERT_EQ(sf_close(gen), SF_OK) << last_error_text();
    EXPECT_EQ(etcd_get(url, key), "");
    EXPECT_EQ(etcd_get(url, prefix + "/marks/" + std::to_string(st.worker_id)),
              std::to_string(id_ms(last)) + " exact");
}

// Clock failover against the real coordinator (the clock moved by the
// library's test hook): a step back of an hour keeps ids coming under a
// backup worker id leased beside the own one, none equal to an earlier id;
// once the clock is back, ids return to the own id, above its earlier ones.
TEST_P(SdkLease, AClockStepBackFailsOverToABackupIdAndReturns) {
    struct ClockBack {
        ~ClockBack() { snowflake::sdk::set_clock_offset_for_tests(0); }
    } restore;
    sf_config cfg = config(600, 607);
    cfg.clock_backwards = SF_CLOCK_FAILOVER;
    sf_generator* gen = open_ready(cfg);
    ASSERT_NE(gen, nullptr);
    const int32_t own = worker_of(gen);
    ASSERT_GE(own, 600);
    std::set<int64_t> seen;
    int64_t own_last = 0;
    for (int i = 0; i < 200; i++) {
        ASSERT_EQ(sf_next_id(gen, &own_last), SF_OK) << last_error_text();
        ASSERT_TRUE(seen.insert(own_last).second);
    }
    snowflake::sdk::set_clock_offset_for_tests(-3600 * 1000);
    int32_t backup = -1;
    for (int i = 0; i < 200; i++) {
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << "id " << i << ": " << last_error_text();
        ASSERT_TRUE(seen.insert(id).second) << id;
        ASSERT_LT(id, own_last);
        if (backup < 0) backup = static_cast<int32_t>((id >> 12) & 1023);
        ASSERT_EQ((id >> 12) & 1023, backup);
    }
    EXPECT_NE(backup, own);
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.worker_id, own);
    EXPECT_EQ(st.backup_worker_id, backup);

    snowflake::sdk::set_clock_offset_for_tests(0);
    bool back = false;
    for (int i = 0; i < kReadyMs / 10 && !back; i++) {
        ASSERT_EQ(sf_status(gen, &st), SF_OK);
        back = st.backup_worker_id < 0;
        if (!back) usleep(10000);
    }
    ASSERT_TRUE(back);
    // The own id's first reservation after the return is a write to the
    // coordinator: a call may find it late (SF003); sf_wait_ready waits for it.
    ASSERT_EQ(sf_wait_ready(gen, kReadyMs), SF_OK) << last_error_text();
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    EXPECT_EQ((id >> 12) & 1023, own);
    EXPECT_GT(id, own_last);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

INSTANTIATE_TEST_SUITE_P(Coordinators, SdkLease, ::testing::ValuesIn(started_backends()),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                             return std::string(i.param == Backend::Etcd ? "etcd" : "zookeeper");
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SdkLease);

// Without a reachable coordinator: no id, at once, with SF003 and a hint.
TEST(SdkLeaseDown, NoLeaseFailsAtOnce) {
    sf_config cfg;
    sf_config_init(&cfg);
    cfg.etcd_endpoints = "http://127.0.0.1:9";  // discard: nothing answers
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    int64_t id = 0;
    EXPECT_EQ(sf_next_id(gen, &id), SF_ERR_NO_LEASE);
    EXPECT_STREQ(sf_last_error()->sqlstate, "SF003");
    EXPECT_STRNE(sf_last_error()->hint, "");
    EXPECT_EQ(sf_wait_ready(gen, 300), SF_ERR_NOT_READY);
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.state, SF_STATE_ACQUIRING);
    EXPECT_EQ(st.worker_id, -1);
    (void)sf_close(gen);
    cfg.etcd_endpoints = "ftp://nowhere";
    char err[512];
    EXPECT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_ERR_INVALID);
    EXPECT_EQ(gen, nullptr);
}

}  // namespace
