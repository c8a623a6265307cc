// libsnowflake_ids and a clock that steps back, through the library's test
// hook (sdk::set_clock_offset_for_tests, static library only): a step within
// clock_tolerance_ms is waited out inside the call, one beyond it is SF001
// with a hint, and ids resume above every earlier one once the clock is back.

#include "sdk_test.hpp"

#include "../../sdk/c/src/generator.hpp"

namespace {

using namespace sdk_test;

class SdkClock : public ::testing::Test {
protected:
    void TearDown() override { snowflake::sdk::set_clock_offset_for_tests(0); }
};

TEST_F(SdkClock, AStepWithinTheToleranceIsWaitedOut) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    cfg.clock_tolerance_ms = 50;
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    ASSERT_EQ(sf_wait_ready(gen, 5000), SF_OK) << last_error_text();
    int64_t prev = 0;
    ASSERT_EQ(sf_next_id(gen, &prev), SF_OK);
    snowflake::sdk::set_clock_offset_for_tests(-20);  // 20 ms back, the tolerance 50
    for (int i = 0; i < 1000; i++) {
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
        ASSERT_GT(id, prev);
        prev = id;
    }
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.clock_backwards_errors, 0);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST_F(SdkClock, AStepBeyondTheToleranceIsRefusedWithSF001) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    ASSERT_EQ(sf_wait_ready(gen, 5000), SF_OK) << last_error_text();
    int64_t prev = 0;
    ASSERT_EQ(sf_next_id(gen, &prev), SF_OK);
    snowflake::sdk::set_clock_offset_for_tests(-5000);  // 5 s back, the tolerance 5 ms
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_ERR_CLOCK_BEHIND);
    EXPECT_STREQ(sf_last_error()->sqlstate, "SF001");
    EXPECT_NE(std::string(sf_last_error()->message).find("backwards"), std::string::npos);
    EXPECT_NE(std::string(sf_last_error()->detail).find("clock_tolerance_ms is 5"), std::string::npos)
        << last_error_text();
    EXPECT_NE(std::string(sf_last_error()->hint).find("time synchronisation"), std::string::npos);
    int64_t batch[3];
    int32_t got = -1;
    EXPECT_EQ(sf_next_ids(gen, batch, 3, &got), SF_ERR_CLOCK_BEHIND);
    EXPECT_EQ(got, 0);
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_GE(st.clock_backwards_errors, 1);
    snowflake::sdk::set_clock_offset_for_tests(0);
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    EXPECT_GT(id, prev);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

}  // namespace
