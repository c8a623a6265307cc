// libsnowflake_ids over an in-memory coordinator (fake_coordinator.hpp),
// through the library's test hook (sdk::set_coordinator_factory): what a
// real etcd or ZooKeeper is hard to make do on demand. A lease the
// coordinator forgets stops ids (SF003) and a new one resumes them above
// every earlier id; with the coordinator's mark writes failing, no id ever
// passes the reservation the coordinator confirmed, and ids resume once
// writes succeed again.

#include "sdk_test.hpp"
#include "fake_coordinator.hpp"

#include "../../sdk/c/src/lease_host.hpp"

#include <chrono>
#include <memory>
#include <thread>

namespace {

using namespace sdk_test;
using Clock = std::chrono::steady_clock;

constexpr int64_t kEpochUnixMs = 1735689600000;  // the default epoch

class SdkFakeCoordinator : public ::testing::Test {
protected:
    void SetUp() override {
        snowflake::sdk::set_coordinator_factory(
            [](void* arg) -> std::unique_ptr<core::Coordinator> {
                return std::make_unique<FakeCoordinator>(*static_cast<FakeRegistry*>(arg));
            },
            &registry_);
        sf_config_init(&cfg_);
        cfg_.etcd_endpoints = "http://fake.invalid:2379";  // leased; the hook supplies the coordinator
        cfg_.lease_ttl_ms = 6000;                          // a keepalive every 2 s
    }
    void TearDown() override { snowflake::sdk::set_coordinator_factory(nullptr, nullptr); }

    FakeRegistry registry_;
    sf_config cfg_;
};

TEST_F(SdkFakeCoordinator, ALostLeaseStopsIdsAndANewOneResumesAboveThem) {
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg_, &gen, nullptr, 0), SF_OK);
    ASSERT_EQ(sf_wait_ready(gen, 10000), SF_OK) << last_error_text();
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    const int32_t worker = st.worker_id;
    ASSERT_GE(worker, 512);
    int64_t last = 0;
    ASSERT_EQ(sf_next_id(gen, &last), SF_OK);

    // The lease is forgotten, and no new one is granted until the refusal
    // was seen (an in-memory coordinator grants the next one within
    // microseconds). Ids go on until the next keepalive finds it gone, then
    // stop.
    registry_.fail_grants.store(true);
    registry_.drop_lease_of(worker);
    sf_code c = SF_OK;
    const Clock::time_point end = Clock::now() + std::chrono::seconds(15);
    while (Clock::now() < end) {
        int64_t id = 0;
        c = sf_next_id(gen, &id);
        if (c != SF_OK) break;
        ASSERT_GT(id, last);
        last = id;
    }
    ASSERT_EQ(c, SF_ERR_NO_LEASE) << "ids never stopped after the lease was lost";
    EXPECT_STREQ(sf_last_error()->sqlstate, "SF003");
    EXPECT_LE(id_ms(last), registry_.highest_mark(worker));
    int64_t none = 0;
    EXPECT_EQ(sf_next_id(gen, &none), SF_ERR_NO_LEASE);

    registry_.fail_grants.store(false);
    ASSERT_EQ(sf_wait_ready(gen, 15000), SF_OK) << last_error_text();
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.lease_acquisitions, 2);
    int64_t next = 0;
    ASSERT_EQ(sf_next_id(gen, &next), SF_OK) << last_error_text();
    EXPECT_GT(next, last);
    EXPECT_GT(id_ms(next), id_ms(last));
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST_F(SdkFakeCoordinator, NoIdPassesTheReservationTheCoordinatorConfirmed) {
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg_, &gen, nullptr, 0), SF_OK);
    ASSERT_EQ(sf_wait_ready(gen, 10000), SF_OK) << last_error_text();
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    const int32_t worker = st.worker_id;
    registry_.fail_mark_writes.store(true);
    // Ids go on inside the confirmed reservation, then are refused.
    int64_t last = 0;
    sf_code c = SF_OK;
    const Clock::time_point end = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < end) {
        int64_t id = 0;
        c = sf_next_id(gen, &id);
        if (c != SF_OK) break;
        last = id;
    }
    ASSERT_EQ(c, SF_ERR_NO_LEASE) << "ids went on with every mark write failing";
    EXPECT_NE(std::string(sf_last_error()->message).find("reservation"), std::string::npos) << last_error_text();
    EXPECT_STRNE(sf_last_error()->hint, "");
    const int64_t confirmed = registry_.highest_mark(worker);
    EXPECT_LE(id_ms(last), confirmed);
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_LE(st.reserved_until_unix_ms - kEpochUnixMs, confirmed);

    registry_.fail_mark_writes.store(false);
    ASSERT_EQ(sf_wait_ready(gen, 15000), SF_OK) << last_error_text();
    int64_t next = 0;
    ASSERT_EQ(sf_next_id(gen, &next), SF_OK) << last_error_text();
    EXPECT_GT(next, last);
    EXPECT_LE(id_ms(next), registry_.highest_mark(worker));
    EXPECT_EQ(sf_close(gen), SF_OK);
}

}  // namespace

namespace {

// sf_close ends a wait of another thread (SF_ERR_CLOSED) and frees the
// generator only once that thread has left it. The fake coordinator grants
// nothing, so the wait could only end by the close or its timeout.
TEST_F(SdkFakeCoordinator, CloseEndsAWaitOfAnotherThread) {
    registry_.fail_grants.store(true);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg_, &gen, nullptr, 0), SF_OK);
    sf_code waited = SF_OK;
    std::thread t([&] { waited = sf_wait_ready(gen, 60000); });
    // Until the thread is inside the wait (the library's count of waiters).
    const Clock::time_point end = Clock::now() + std::chrono::seconds(10);
    bool inside = false;
    while (!inside && Clock::now() < end) {
        std::this_thread::yield();
        std::lock_guard<std::mutex> lock(gen->mu);
        inside = gen->waiters == 1;
    }
    ASSERT_TRUE(inside);
    (void)sf_close(gen);
    t.join();
    EXPECT_EQ(waited, SF_ERR_CLOSED);
}

}  // namespace
