// libsnowflake_ids in a layout other than twitter's (sf_config.layout, the
// text of the extension's snowflake.layout), with a static worker id: a
// js-safe generator's ids lie below 2^53 with the worker id in bits 6-11,
// its mark file records the layout, a mark of another layout is refused
// naming both, a bad layout and a worker id or range beyond the layout are
// refused (22023), and sf_decode_layout() reads ids under a layout. The
// leased side (the default range, a fleet of another layout) is in
// lease_test.cpp.

#include "sdk_test.hpp"

#include <chrono>
#include <string>

namespace {

using namespace sdk_test;

constexpr int64_t kTwoTo53 = int64_t{1} << 53;
// js-safe (41/6/6) as the mark file records it.
constexpr uint32_t kJsSafeMarkCode = (1u << 18) | (41u << 12) | (6u << 6) | 6u;

int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

bool contains(const char* text, const std::string& part) {
    return std::string(text).find(part) != std::string::npos;
}

// sf_open refuses cfg with 22023 and a hint, returns no generator, and its
// message, detail or err text names each of `names`.
void expect_invalid(const sf_config& cfg, std::initializer_list<const char*> names) {
    sf_generator* gen = reinterpret_cast<sf_generator*>(1);
    char err[512] = "untouched";
    EXPECT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_ERR_INVALID) << err;
    EXPECT_EQ(gen, nullptr);
    EXPECT_STREQ(sf_last_error()->sqlstate, "22023");
    EXPECT_STRNE(sf_last_error()->hint, "");
    for (const char* n : names) EXPECT_TRUE(contains(err, n)) << "no '" << n << "' in: " << err;
}

TEST(SdkLayout, AJsSafeGeneratorsIdsAreBelow2To53WithItsWorkerIdInBits6To11) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark, 45);
    cfg.layout = "js-safe";
    sf_generator* gen = nullptr;
    char err[512];
    ASSERT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_OK) << err;
    ASSERT_EQ(sf_wait_ready(gen, 5000), SF_OK) << last_error_text();
    const int64_t before = unix_ms_now();
    int64_t prev = -1;
    // 64 ids a millisecond: 5000 ids span many milliseconds, the sequence's
    // overflow into the next one included.
    for (int i = 0; i < 5000; i++) {
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
        ASSERT_GT(id, prev);
        ASSERT_LT(id, kTwoTo53);
        ASSERT_EQ((id >> 6) & 63, 45) << id;
        prev = id;
    }
    int64_t batch[200];
    int32_t got = 0;
    ASSERT_EQ(sf_next_ids(gen, batch, 200, &got), SF_OK) << last_error_text();
    ASSERT_EQ(got, 200);
    for (int i = 0; i < got; i++) {
        ASSERT_GT(batch[i], prev);
        ASSERT_LT(batch[i], kTwoTo53);
        ASSERT_EQ((batch[i] >> 6) & 63, 45);
        prev = batch[i];
    }
    const int64_t after = unix_ms_now();
    int64_t epoch = 0;
    ASSERT_EQ(sf_parse_epoch("2025-01-01 00:00:00+00", &epoch), SF_OK);
    sf_decoded d;
    ASSERT_EQ(sf_decode_layout(prev, epoch, "js-safe", &d), SF_OK) << last_error_text();
    EXPECT_EQ(d.worker_id, 45);
    EXPECT_EQ(d.sequence, prev & 63);
    EXPECT_GE(d.unix_ms, before);
    EXPECT_LE(d.unix_ms, after);
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.worker_id, 45);
    EXPECT_STREQ(st.layout, "js-safe");
    ASSERT_EQ(sf_close(gen), SF_OK);
    // The mark records the layout, and bounds the ids in js-safe's milliseconds.
    const MarkBytes m = read_mark(mark);
    ASSERT_TRUE(m.read);
    EXPECT_TRUE(m.exact);
    EXPECT_EQ(m.layout, kJsSafeMarkCode);
    EXPECT_EQ(m.ms, prev >> 12);
    // A restart in the same layout goes on above it.
    ASSERT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_OK) << err;
    ASSERT_EQ(sf_wait_ready(gen, 5000), SF_OK) << last_error_text();
    int64_t next = 0;
    ASSERT_EQ(sf_next_id(gen, &next), SF_OK) << last_error_text();
    EXPECT_GT(next, prev);
    EXPECT_LT(next, kTwoTo53);
    ASSERT_EQ(sf_close(gen), SF_OK);
}

TEST(SdkLayout, ATwitterGeneratorsMarkRecordsNoLayoutAndStatsSayTwitter) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark, 7);
    cfg.layout = "";  // as NULL: twitter
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK) << last_error_text();
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    EXPECT_EQ((id >> 12) & 1023, 7);
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_STREQ(st.layout, "twitter");
    ASSERT_EQ(sf_close(gen), SF_OK);
    const MarkBytes m = read_mark(mark);
    ASSERT_TRUE(m.read);
    EXPECT_EQ(m.layout, 0u);  // a twitter mark is the bytes of 1.2's
}

TEST(SdkLayout, ABadLayoutIsRefused) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark, 3);
    cfg.layout = "js-unsafe";
    expect_invalid(cfg, {"layout", "js-unsafe"});
    cfg.layout = "time 41, worker 10, sequence 13";  // 64 bits
    expect_invalid(cfg, {"layout"});
    // A layout snowflake_decode_as() reads but no generator issues: another
    // order and a 10 ms unit (sonyflake's).
    cfg.layout = "sonyflake";
    expect_invalid(cfg, {"layout", "sonyflake"});
    cfg.layout = "time 41, sequence 12, worker 10";
    expect_invalid(cfg, {"layout"});
    // Nothing was written by a refused open.
    EXPECT_FALSE(read_mark(mark).read);
}

TEST(SdkLayout, AWorkerIdOrRangeBeyondTheLayoutIsRefusedNamingBoth) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark, 64);
    cfg.layout = "js-safe";
    expect_invalid(cfg, {"worker_id 64", "js-safe", "63"});
    cfg = static_config(mark, 63);
    cfg.layout = "js-safe";
    cfg.worker_id_min = 0;
    cfg.worker_id_max = 100;
    expect_invalid(cfg, {"100", "js-safe", "63"});
    cfg = static_config(mark, 200);
    cfg.layout = "time 41, worker 7, sequence 15";
    expect_invalid(cfg, {"worker_id 200", "time 41, worker 7, sequence 15", "127"});
    // More worker bits than twitter's: a worker id above 1023 fits.
    cfg = static_config(mark, 4000);
    cfg.layout = "time 41, worker 12, sequence 10";
    sf_generator* gen = nullptr;
    char err[512];
    ASSERT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_OK) << err;
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    EXPECT_EQ((id >> 10) & 4095, 4000);
    ASSERT_EQ(sf_close(gen), SF_OK);
}

// A lease holds worker ids 0..1023 in every layout (the registry's keys, as
// a node's snowflake.lease_worker_ids): in a layout of more worker bits a
// leased id above 1023 is refused at sf_open (no coordinator is reached: a
// port nothing listens on), and the default range stays 512..1023
// (lease_test.cpp leases from it).
TEST(SdkLayout, ALeasedWorkerIdAbove1023IsRefusedInAWideLayout) {
    sf_config cfg;
    sf_config_init(&cfg);
    cfg.etcd_endpoints = "http://127.0.0.1:1";
    cfg.layout = "time 41, worker 12, sequence 10";
    cfg.worker_id = 2000;
    expect_invalid(cfg, {"worker_id 2000", "1023", "4095"});
    cfg.worker_id = -1;
    cfg.worker_id_min = 1000;
    cfg.worker_id_max = 2000;
    expect_invalid(cfg, {"worker_id_max 2000", "1023"});
    cfg.worker_id_min = cfg.worker_id_max = -1;  // the default: 512..1023
    sf_generator* gen = nullptr;
    char err[512];
    ASSERT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_OK) << err;
    EXPECT_EQ(sf_close(gen), SF_OK);
}

// The ids of a mark of another layout can be equal, bit for bit, to the
// ones of the new layout: sf_open refuses the file, naming both, and leaves
// it as it was; the mark's own layout still opens it.
TEST(SdkLayout, AMarkFileOfAnotherLayoutIsRefusedNamingBoth) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config twitter = static_config(mark, 5);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&twitter, &gen, nullptr, 0), SF_OK) << last_error_text();
    ASSERT_EQ(sf_close(gen), SF_OK);
    const std::string written = read_mark(mark).raw;
    ASSERT_FALSE(written.empty());

    sf_config js = static_config(mark, 5);
    js.layout = "js-safe";
    expect_invalid(js, {"js-safe", "twitter"});
    EXPECT_EQ(read_mark(mark).raw, written);  // untouched
    ASSERT_EQ(sf_open(&twitter, &gen, nullptr, 0), SF_OK) << last_error_text();
    ASSERT_EQ(sf_close(gen), SF_OK);

    // And the other way round.
    const std::string mark2 = dir.file("mark2");
    js.mark_file = mark2.c_str();
    ASSERT_EQ(sf_open(&js, &gen, nullptr, 0), SF_OK) << last_error_text();
    ASSERT_EQ(sf_close(gen), SF_OK);
    twitter.mark_file = mark2.c_str();
    expect_invalid(twitter, {"js-safe", "twitter"});
    EXPECT_EQ(read_mark(mark2).layout, kJsSafeMarkCode);
}

TEST(SdkLayout, DecodeUnderALayout) {
    const int64_t epoch = 1735689600000;
    // js-safe: 1000 ms, worker 5, sequence 3.
    const int64_t js = (int64_t{1000} << 12) | (int64_t{5} << 6) | 3;
    sf_decoded d;
    ASSERT_EQ(sf_decode_layout(js, epoch, "js-safe", &d), SF_OK) << last_error_text();
    EXPECT_EQ(d.ms_since_epoch, 1000);
    EXPECT_EQ(d.unix_ms, epoch + 1000);
    EXPECT_EQ(d.worker_id, 5);
    EXPECT_EQ(d.sequence, 3);
    ASSERT_EQ(sf_decode_layout(js, epoch, "time 41, worker 6, sequence 6", &d), SF_OK);
    EXPECT_EQ(d.worker_id, 5);
    // NULL and "" are twitter, as sf_decode().
    const int64_t tw = (int64_t{1000} << 22) | (int64_t{5} << 12) | 3;
    for (const char* l : {static_cast<const char*>(nullptr), "", "twitter"}) {
        ASSERT_EQ(sf_decode_layout(tw, epoch, l, &d), SF_OK) << last_error_text();
        EXPECT_EQ(d.ms_since_epoch, 1000);
        EXPECT_EQ(d.worker_id, 5);
        EXPECT_EQ(d.sequence, 3);
    }
    // An id js-safe cannot hold (2^53 and up), a negative one, a bad layout.
    EXPECT_EQ(sf_decode_layout(kTwoTo53, epoch, "js-safe", &d), SF_ERR_INVALID);
    EXPECT_STREQ(sf_last_error()->sqlstate, "22023");
    EXPECT_TRUE(contains(sf_last_error()->message, "js-safe")) << last_error_text();
    ASSERT_EQ(sf_decode_layout(kTwoTo53 - 1, epoch, "js-safe", &d), SF_OK);
    EXPECT_EQ(d.worker_id, 63);
    EXPECT_EQ(d.sequence, 63);
    EXPECT_EQ(sf_decode_layout(-1, epoch, "js-safe", &d), SF_ERR_INVALID);
    EXPECT_EQ(sf_decode_layout(js, epoch, "sonyflake", &d), SF_ERR_INVALID);
    EXPECT_STRNE(sf_last_error()->hint, "");
    EXPECT_EQ(sf_decode_layout(js, epoch, "js-safe", nullptr), SF_ERR_INVALID);
}

}  // namespace
