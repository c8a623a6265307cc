// libsnowflake_ids with a static worker id and its mark file: the settings
// refused (codes and hints), ids that increase and decode to the worker id,
// the mark file ahead of every id and exact after sf_close, its lock, a
// restart above the mark (after a clean close and after a crash), many
// threads without a duplicate, batches, and a fork child that never issues
// under the parent's id nor touches its file.

#include "sdk_test.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using namespace sdk_test;

int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// sf_open refuses cfg with code, a message and a hint, and returns no generator.
void expect_refused(const sf_config& cfg, sf_code code, const char* sqlstate) {
    sf_generator* gen = reinterpret_cast<sf_generator*>(1);
    char err[512] = "untouched";
    EXPECT_EQ(sf_open(&cfg, &gen, err, sizeof err), code) << err;
    EXPECT_EQ(gen, nullptr);
    EXPECT_STREQ(sf_last_error()->sqlstate, sqlstate);
    EXPECT_STRNE(sf_last_error()->message, "");
    EXPECT_STRNE(sf_last_error()->hint, "");
    EXPECT_NE(std::string(err).find(sf_last_error()->message), std::string::npos) << err;
}

TEST(SdkStatic, RefusesWithoutMarkFileOrWorkerId) {
    sf_config cfg;
    sf_config_init(&cfg);
    expect_refused(cfg, SF_ERR_INVALID, "22023");  // no coordinator, no worker id
    cfg.worker_id = 3;
    expect_refused(cfg, SF_ERR_INVALID, "22023");  // no mark file
    EXPECT_NE(std::string(sf_last_error()->message).find("mark file"), std::string::npos);
}

TEST(SdkStatic, RefusesInvalidSettings) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    cfg.worker_id = 1024;
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.worker_id_min = 900;
    cfg.worker_id_max = 800;
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.lease_ttl_ms = 100;
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.clock_tolerance_ms = -1;
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.epoch = "2025-01-01";  // no offset
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.epoch = "2999-01-01 00:00:00+00";  // in the future
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.lease_prefix = "no-slash";
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.etcd_endpoints = "http://127.0.0.1:1";
    cfg.zookeeper_hosts = "127.0.0.1:1";
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.clock_backwards = SF_CLOCK_FAILOVER;
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    cfg = static_config(mark);
    cfg.runtime = "has space";
    expect_refused(cfg, SF_ERR_INVALID, "22023");
    // Nothing was created by a refused open but the checks' own file.
    EXPECT_FALSE(read_mark(mark).read);
}

TEST(SdkStatic, IdsIncreaseAndDecodeToTheWorkerId) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark, 7);
    sf_generator* gen = nullptr;
    char err[512];
    ASSERT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_OK) << err;
    ASSERT_EQ(sf_wait_ready(gen, 5000), SF_OK) << last_error_text();
    int64_t epoch = 0;
    ASSERT_EQ(sf_parse_epoch("2025-01-01 00:00:00+00", &epoch), SF_OK);
    const int64_t before = unix_ms_now();
    int64_t prev = -1;
    for (int i = 0; i < 20000; i++) {
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
        ASSERT_GT(id, prev);
        prev = id;
    }
    const int64_t after = unix_ms_now();
    sf_decoded d;
    ASSERT_EQ(sf_decode(prev, epoch, &d), SF_OK);
    EXPECT_EQ(d.worker_id, 7);
    EXPECT_GE(d.unix_ms, before);
    EXPECT_LE(d.unix_ms, after);
    EXPECT_EQ(d.ms_since_epoch, d.unix_ms - epoch);
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.state, SF_STATE_STATIC);
    EXPECT_EQ(st.worker_id, 7);
    EXPECT_STREQ(st.coordinator, "static");
    EXPECT_EQ(st.ids_issued, 20000);
    EXPECT_EQ(st.pid, getpid());
    EXPECT_GE(st.reserved_until_unix_ms, d.unix_ms);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST(SdkStatic, MarkFileIsAheadOfEveryIdAndExactAfterClose) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    int64_t last = 0;
    // Across more than a reservation's window (1 s): the writer extends it.
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    while (std::chrono::steady_clock::now() < end) {
        ASSERT_EQ(sf_next_id(gen, &last), SF_OK) << last_error_text();
        const MarkBytes m = read_mark(mark);
        ASSERT_TRUE(m.read);
        ASSERT_FALSE(m.exact);
        ASSERT_GE(m.ms, id_ms(last));
    }
    ASSERT_EQ(sf_close(gen), SF_OK);
    const MarkBytes m = read_mark(mark);
    ASSERT_TRUE(m.read);
    EXPECT_TRUE(m.exact);
    EXPECT_EQ(m.ms, id_ms(last));
}

TEST(SdkStatic, ASecondOpenOfTheMarkFileIsRefused) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    const std::string before = read_mark(mark).raw;
    cfg.worker_id = 8;
    expect_refused(cfg, SF_ERR_MARK_LOCKED, "55006");
    // The refused open neither released the lock nor wrote the file.
    expect_refused(cfg, SF_ERR_MARK_LOCKED, "55006");
    EXPECT_EQ(read_mark(mark).raw, before);
    int64_t id = 0;
    EXPECT_EQ(sf_next_id(gen, &id), SF_OK);
    EXPECT_EQ(sf_close(gen), SF_OK);
    sf_generator* again = nullptr;
    ASSERT_EQ(sf_open(&cfg, &again, nullptr, 0), SF_OK) << last_error_text();
    EXPECT_EQ(sf_close(again), SF_OK);
}

TEST(SdkStatic, ARestartContinuesAboveTheMark) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    int64_t last = 0;
    for (int run = 0; run < 3; run++) {
        sf_generator* gen = nullptr;
        ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK) << last_error_text();
        const MarkBytes at_open = read_mark(mark);
        ASSERT_EQ(sf_wait_ready(gen, 5000), SF_OK) << last_error_text();
        int64_t id = 0;
        ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
        if (run > 0) {
            EXPECT_GT(id_ms(id), id_ms(last)) << "run " << run;
        }
        EXPECT_GE(at_open.ms, id_ms(id));
        for (int i = 0; i < 1000; i++) ASSERT_EQ(sf_next_id(gen, &last), SF_OK);
        ASSERT_EQ(sf_close(gen), SF_OK);
    }
}

// A process that dies without sf_close leaves its reservation, not an exact
// mark: the next open starts above it (waiting it out), never at an id of
// the dead process.
TEST(SdkStatic, ARestartAfterACrashStartsAboveTheReservation) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        sf_config cfg = static_config(mark);
        sf_generator* gen = nullptr;
        int64_t id = -1;
        if (sf_open(&cfg, &gen, nullptr, 0) == SF_OK)
            for (int i = 0; i < 1000; i++) (void)sf_next_id(gen, &id);
        (void)!write(fds[1], &id, sizeof id);
        _exit(0);  // no sf_close: a crash
    }
    close(fds[1]);
    int64_t child_last = -1;
    ASSERT_EQ(read(fds[0], &child_last, sizeof child_last), static_cast<ssize_t>(sizeof child_last));
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_GT(child_last, 0);
    const MarkBytes left = read_mark(mark);
    ASSERT_TRUE(left.read);
    EXPECT_FALSE(left.exact);
    EXPECT_GE(left.ms, id_ms(child_last));

    sf_config cfg = static_config(mark);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK) << last_error_text();
    ASSERT_EQ(sf_wait_ready(gen, 70000), SF_OK) << last_error_text();
    int64_t id = 0;
    ASSERT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    EXPECT_GT(id_ms(id), left.ms);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST(SdkStatic, ManyThreadsGetNoDuplicate) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    constexpr int kThreads = 4, kEach = 50000;
    std::vector<std::vector<int64_t>> got(kThreads);
    std::vector<int> failures(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++)
        threads.emplace_back([&, t] {
            int64_t prev = -1;
            for (int i = 0; i < kEach; i++) {
                int64_t id = 0;
                if (t % 2 == 0) {
                    if (sf_next_id(gen, &id) != SF_OK || id <= prev) failures[t]++;
                    got[t].push_back(id);
                } else {
                    int64_t batch[7];
                    int32_t n = 0;
                    if (sf_next_ids(gen, batch, 7, &n) != SF_OK || n != 7 || batch[0] <= prev) failures[t]++;
                    got[t].insert(got[t].end(), batch, batch + n);
                    id = batch[n > 0 ? n - 1 : 0];
                    i += 6;
                }
                prev = id;
            }
        });
    for (std::thread& t : threads) t.join();
    std::vector<int64_t> all;
    for (int t = 0; t < kThreads; t++) {
        EXPECT_EQ(failures[t], 0) << "thread " << t;
        all.insert(all.end(), got[t].begin(), got[t].end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a duplicate id";
    sf_stats st;
    ASSERT_EQ(sf_status(gen, &st), SF_OK);
    EXPECT_EQ(st.ids_issued, static_cast<int64_t>(all.size()));
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST(SdkStatic, BatchesAreAscendingAndBounded) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    std::vector<int64_t> ids(20000);
    int32_t got = -1;
    ASSERT_EQ(sf_next_ids(gen, ids.data(), 20000, &got), SF_OK) << last_error_text();
    EXPECT_EQ(got, 20000);
    for (size_t i = 1; i < ids.size(); i++) ASSERT_GT(ids[i], ids[i - 1]);
    int64_t next = 0;
    ASSERT_EQ(sf_next_id(gen, &next), SF_OK);
    EXPECT_GT(next, ids.back());
    EXPECT_EQ(sf_next_ids(gen, ids.data(), 0, &got), SF_ERR_INVALID);
    EXPECT_EQ(got, 0);
    EXPECT_EQ(sf_next_ids(gen, ids.data(), 1000001, &got), SF_ERR_INVALID);
    EXPECT_STRNE(sf_last_error()->hint, "");
    EXPECT_EQ(sf_next_id(gen, nullptr), SF_ERR_INVALID);
    EXPECT_EQ(sf_close(gen), SF_OK);
}

TEST(SdkStatic, DecodeAndEpoch) {
    int64_t epoch = 0;
    ASSERT_EQ(sf_parse_epoch("2025-01-01 00:00:00+00", &epoch), SF_OK);
    EXPECT_EQ(epoch, 1735689600000);
    ASSERT_EQ(sf_parse_epoch("2025-01-01T01:00:00+01:00", &epoch), SF_OK);
    EXPECT_EQ(epoch, 1735689600000);
    EXPECT_EQ(sf_parse_epoch("2025-01-01 00:00:00", &epoch), SF_ERR_INVALID);
    EXPECT_STREQ(sf_last_error()->sqlstate, "22023");
    const int64_t id = (int64_t{1000} << 22) | (int64_t{5} << 12) | 3;
    sf_decoded d;
    ASSERT_EQ(sf_decode(id, 1735689600000, &d), SF_OK);
    EXPECT_EQ(d.ms_since_epoch, 1000);
    EXPECT_EQ(d.unix_ms, 1735689601000);
    EXPECT_EQ(d.worker_id, 5);
    EXPECT_EQ(d.sequence, 3);
    EXPECT_EQ(sf_decode(-1, 0, &d), SF_ERR_INVALID);
    EXPECT_STREQ(sf_sqlstate(SF_ERR_NO_LEASE), "SF003");
    EXPECT_STREQ(sf_sqlstate(SF_ERR_CLOCK_BEHIND), "SF001");
    EXPECT_EQ(sf_close(nullptr), SF_OK);
}

// A child of fork() gets SF003 for a static worker id (with a hint that
// says so), never an id; the parent's file and lock stay the parent's.
TEST(SdkStatic, AForkChildNeverIssuesUnderTheParentsWorkerId) {
    TempDir dir;
    const std::string mark = dir.file("mark");
    sf_config cfg = static_config(mark, 9);
    sf_generator* gen = nullptr;
    ASSERT_EQ(sf_open(&cfg, &gen, nullptr, 0), SF_OK);
    int64_t before_fork = 0;
    ASSERT_EQ(sf_next_id(gen, &before_fork), SF_OK);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int64_t id = 0;
        int rc = 0;
        if (sf_next_id(gen, &id) != SF_ERR_NO_LEASE) rc |= 1;
        if (std::string(sf_last_error()->sqlstate) != "SF003") rc |= 2;
        if (std::string(sf_last_error()->hint).find("child") == std::string::npos) rc |= 4;
        int64_t batch[4];
        int32_t got = -1;
        if (sf_next_ids(gen, batch, 4, &got) != SF_ERR_NO_LEASE || got != 0) rc |= 8;
        if (sf_wait_ready(gen, 100) != SF_ERR_NO_LEASE) rc |= 16;
        if (sf_close(gen) != SF_OK) rc |= 32;
        _exit(rc);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's failed checks (bits)";
    // The parent goes on; its lock is still held.
    int64_t after = 0;
    ASSERT_EQ(sf_next_id(gen, &after), SF_OK) << last_error_text();
    EXPECT_GT(after, before_fork);
    sf_config other = static_config(mark, 10);
    expect_refused(other, SF_ERR_MARK_LOCKED, "55006");
    ASSERT_EQ(sf_close(gen), SF_OK);
    const MarkBytes m = read_mark(mark);
    EXPECT_TRUE(m.exact);
    EXPECT_EQ(m.ms, id_ms(after));
}

}  // namespace
