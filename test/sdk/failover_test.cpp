// Clock failover in libsnowflake_ids (clock_backwards = SF_CLOCK_FAILOVER,
// issue 30) over the in-memory coordinator (fake_coordinator.hpp) and the
// clock's test hook (sdk::set_clock_offset_for_tests): a step back of an
// hour keeps ids coming under a backup worker id, above its mark, none equal
// to an earlier id; the generator goes back to its own id once the clock
// passes it; a second step back while on a backup takes another; no usable
// backup id is SF001 naming why; a static worker id with failover is
// refused at open.

#include "sdk_test.hpp"
#include "fake_coordinator.hpp"

#include "../../sdk/c/src/generator.hpp"
#include "core/backup.hpp"
#include "../../sdk/c/src/lease_host.hpp"

#include <chrono>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace {

using namespace sdk_test;

constexpr int64_t kEpochUnixMs = 1735689600000;  // the default epoch
constexpr int64_t kHourMs = 3600 * 1000;
// Generous bounds for a condition, never a duration asserted.
constexpr int32_t kReadyMs = 10000;
constexpr int kReturnPolls = 3000;  // x 10 ms

int32_t worker_of_id(int64_t id) { return static_cast<int32_t>((id >> 12) & 1023); }

int64_t now_id_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count() -
           kEpochUnixMs;
}

class SdkFailover : public ::testing::Test {
protected:
    void SetUp() override {
        snowflake::sdk::set_coordinator_factory(
            [](void* arg) -> std::unique_ptr<core::Coordinator> {
                return std::make_unique<FakeCoordinator>(*static_cast<FakeRegistry*>(arg));
            },
            &registry_);
        sf_config_init(&cfg_);
        cfg_.etcd_endpoints = "http://fake.invalid:2379";  // leased; the hook supplies the coordinator
        cfg_.lease_ttl_ms = 6000;
        cfg_.worker_id_min = 512;
        cfg_.worker_id_max = 520;
        cfg_.clock_backwards = SF_CLOCK_FAILOVER;
    }
    void TearDown() override {
        snowflake::sdk::set_clock_offset_for_tests(0);
        snowflake::sdk::set_coordinator_factory(nullptr, nullptr);
    }
    sf_generator* open_ready() {
        sf_generator* gen = nullptr;
        char err[512];
        EXPECT_EQ(sf_open(&cfg_, &gen, err, sizeof err), SF_OK) << err;
        if (gen == nullptr) return nullptr;
        EXPECT_EQ(sf_wait_ready(gen, kReadyMs), SF_OK) << last_error_text();
        return gen;
    }
    static sf_stats stats(sf_generator* gen) {
        sf_stats st;
        EXPECT_EQ(sf_status(gen, &st), SF_OK);
        return st;
    }
    // n ids, each new (not in seen_), added to it; false at the first failure.
    bool take(sf_generator* gen, int n, std::vector<int64_t>* out) {
        for (int i = 0; i < n; i++) {
            int64_t id = 0;
            const sf_code c = sf_next_id(gen, &id);
            EXPECT_EQ(c, SF_OK) << "id " << i << ": " << last_error_text();
            if (c != SF_OK) return false;
            EXPECT_TRUE(seen_.insert(id).second) << "id " << id << " was issued before";
            out->push_back(id);
        }
        return true;
    }
    // Polls until the generator is back on its own id (the backup released),
    // then waits for the own id's first reservation, as a caller does after
    // a transition (sf_wait_ready).
    bool back_on_own_id(sf_generator* gen) {
        for (int i = 0; i < kReturnPolls; i++) {
            if (stats(gen).backup_worker_id < 0) return sf_wait_ready(gen, kReadyMs) == SF_OK;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }

    FakeRegistry registry_;
    sf_config cfg_;
    std::set<int64_t> seen_;
};

TEST_F(SdkFailover, AStepBackOfAnHourFailsOverToABackupIdAndReturns) {
    // Worker id 513 (the first backup the generator will try) was used an
    // hour and a half ago: its ids must start above that mark.
    const int64_t backup_mark = now_id_ms() - kHourMs - kHourMs / 2;
    registry_.set_mark(513, backup_mark, false);
    sf_generator* gen = open_ready();
    ASSERT_NE(gen, nullptr);
    const int32_t own = stats(gen).worker_id;
    ASSERT_EQ(own, 512);
    std::vector<int64_t> before;
    ASSERT_TRUE(take(gen, 1000, &before));

    snowflake::sdk::set_clock_offset_for_tests(-kHourMs);
    std::vector<int64_t> during;
    ASSERT_TRUE(take(gen, 3000, &during));
    sf_stats st = stats(gen);
    EXPECT_EQ(st.worker_id, own);
    EXPECT_EQ(st.backup_worker_id, 513);
    EXPECT_EQ(st.clock_backwards_errors, 0);
    for (size_t i = 0; i < during.size(); i++) {
        ASSERT_EQ(worker_of_id(during[i]), 513) << during[i];
        if (i > 0) {
            ASSERT_GT(during[i], during[i - 1]);
        }
    }
    EXPECT_GT(id_ms(during.front()), backup_mark);
    EXPECT_LT(during.back(), before.front());  // the failover's ids sort before the step's

    // The clock catches up: back on the own id after the hold, above every
    // id issued under it; the backup's exact mark written and its key deleted.
    snowflake::sdk::set_clock_offset_for_tests(0);
    ASSERT_TRUE(back_on_own_id(gen));
    std::vector<int64_t> after;
    ASSERT_TRUE(take(gen, 1000, &after));
    for (int64_t id : after) ASSERT_EQ(worker_of_id(id), own);
    EXPECT_GT(after.front(), before.back());
    EXPECT_FALSE(registry_.holds(513));
    EXPECT_GE(registry_.highest_mark(513), id_ms(during.back()));
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST_F(SdkFailover, ACloseOnABackupWritesBothExactMarksAndFreesBothIds) {
    sf_generator* gen = open_ready();
    ASSERT_NE(gen, nullptr);
    std::vector<int64_t> own_ids, backup_ids;
    ASSERT_TRUE(take(gen, 100, &own_ids));
    snowflake::sdk::set_clock_offset_for_tests(-kHourMs);
    ASSERT_TRUE(take(gen, 100, &backup_ids));
    const sf_stats st = stats(gen);
    ASSERT_GE(st.backup_worker_id, 0);
    EXPECT_EQ(sf_close(gen), SF_OK);
    EXPECT_FALSE(registry_.holds(st.worker_id));
    EXPECT_FALSE(registry_.holds(st.backup_worker_id));
    EXPECT_GE(registry_.highest_mark(st.worker_id), id_ms(own_ids.back()));
    EXPECT_GE(registry_.highest_mark(st.backup_worker_id), id_ms(backup_ids.back()));
}

TEST_F(SdkFailover, ASecondStepBackWhileOnABackupTakesAnother) {
    sf_generator* gen = open_ready();
    ASSERT_NE(gen, nullptr);
    const int32_t own = stats(gen).worker_id;
    std::vector<int64_t> ids;
    ASSERT_TRUE(take(gen, 100, &ids));
    const int64_t own_last = ids.back();

    snowflake::sdk::set_clock_offset_for_tests(-kHourMs);
    ASSERT_TRUE(take(gen, 100, &ids));
    const int32_t first = stats(gen).backup_worker_id;
    ASSERT_GE(first, 512);
    ASSERT_NE(first, own);
    // A backup is held 2 s (boot clock) before another replaces it.
    std::this_thread::sleep_for(std::chrono::milliseconds(snowflake::core::kMinBackupHoldMs + 100));

    snowflake::sdk::set_clock_offset_for_tests(-2 * kHourMs);  // behind the first backup's ids too
    std::vector<int64_t> second_ids;
    ASSERT_TRUE(take(gen, 100, &second_ids));
    const int32_t second = stats(gen).backup_worker_id;
    EXPECT_NE(second, first);
    EXPECT_NE(second, own);
    for (int64_t id : second_ids) ASSERT_EQ(worker_of_id(id), second);
    EXPECT_FALSE(registry_.holds(first));  // given back

    snowflake::sdk::set_clock_offset_for_tests(0);
    ASSERT_TRUE(back_on_own_id(gen));
    std::vector<int64_t> after;
    ASSERT_TRUE(take(gen, 100, &after));
    EXPECT_EQ(worker_of_id(after.front()), own);
    EXPECT_GT(after.front(), own_last);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST_F(SdkFailover, NoFreeBackupIdIsSF001NamingWhy) {
    cfg_.worker_id_max = 513;
    registry_.hold_elsewhere(513);
    sf_generator* gen = open_ready();
    ASSERT_NE(gen, nullptr);
    ASSERT_EQ(stats(gen).worker_id, 512);
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();

    snowflake::sdk::set_clock_offset_for_tests(-kHourMs);
    ASSERT_EQ(sf_next_id(gen, &id), SF_ERR_CLOCK_BEHIND);
    EXPECT_STREQ(sf_last_error()->sqlstate, "SF001");
    const std::string hint = sf_last_error()->hint;
    EXPECT_NE(hint.find("No backup worker id took over: every worker id from 512 to 513 is held"),
              std::string::npos)
        << last_error_text();
    const sf_stats st = stats(gen);
    EXPECT_EQ(st.backup_worker_id, -1);
    EXPECT_GE(st.clock_backwards_errors, 1);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST_F(SdkFailover, EveryFreeIdsMarkAheadOfTheClockIsSF001NamingIt) {
    cfg_.worker_id_max = 514;
    const int64_t now = now_id_ms();
    registry_.set_mark(513, now, false);  // ahead of a clock an hour back
    registry_.set_mark(514, now, true);
    sf_generator* gen = open_ready();
    ASSERT_NE(gen, nullptr);
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    snowflake::sdk::set_clock_offset_for_tests(-kHourMs);
    ASSERT_EQ(sf_next_id(gen, &id), SF_ERR_CLOCK_BEHIND);
    EXPECT_NE(
        std::string(sf_last_error()->detail).find("every free worker id tried has a mark ahead of the clock"),
        std::string::npos)
        << last_error_text();
    EXPECT_FALSE(registry_.holds(513));  // tried and given back
    EXPECT_FALSE(registry_.holds(514));
    EXPECT_EQ(stats(gen).backup_worker_id, -1);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST_F(SdkFailover, WithRefuseAStepBackIsSF001AndTakesNoBackup) {
    cfg_.clock_backwards = SF_CLOCK_REFUSE;
    sf_generator* gen = open_ready();
    ASSERT_NE(gen, nullptr);
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    snowflake::sdk::set_clock_offset_for_tests(-kHourMs);
    ASSERT_EQ(sf_next_id(gen, &id), SF_ERR_CLOCK_BEHIND);
    EXPECT_EQ(std::string(sf_last_error()->hint).find("backup"), std::string::npos) << last_error_text();
    EXPECT_EQ(stats(gen).backup_worker_id, -1);
    EXPECT_FALSE(registry_.holds(513));
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST(SdkFailoverOpen, FailoverWithAStaticWorkerIdIsRefusedAtOpen) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    cfg.clock_backwards = SF_CLOCK_FAILOVER;
    sf_generator* gen = nullptr;
    char err[512] = "";
    ASSERT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_ERR_INVALID);
    EXPECT_EQ(gen, nullptr);
    EXPECT_STREQ(sf_last_error()->sqlstate, "22023");
    EXPECT_NE(std::string(sf_last_error()->message).find("clock failover needs leased worker ids"),
              std::string::npos);
    EXPECT_NE(std::string(sf_last_error()->hint).find("etcd_endpoints or zookeeper_hosts"), std::string::npos)
        << last_error_text();
    cfg.clock_backwards = static_cast<sf_clock_backwards>(7);
    EXPECT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_ERR_INVALID);
    EXPECT_NE(std::string(sf_last_error()->message).find("clock_backwards is invalid"), std::string::npos);
}

}  // namespace
