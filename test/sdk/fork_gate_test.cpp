// The fork gate (sdk/c/src/fork.cpp): a fork() while the lease thread is
// inside name resolution must not leave the child a resolver lock held by a
// thread that does not exist there. test/sdk_c.sh preloads
// test/sdk/resolver_shim.c, whose getaddrinfo() holds a lock for each call
// (as glibc's does) and, while a hold file exists, waits inside: the test
// forks while the parent's lease thread is in there. Without the gate the
// child's copy of the lock stays locked and the child's own lease never
// starts (its bounded wait fails); with it the fork waits for the lease
// thread's call and the child leases an id of its own. Runs against each
// coordinator named in SNOWFLAKE_TEST_ETCD and SNOWFLAKE_TEST_ZK, reached
// under the name "forkgate.invalid" (the shim's, for 127.0.0.1).

#include "sdk_test.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace sdk_test;

// Generous bounds for conditions (kReadyMs: sdk_test.hpp), never durations asserted.
constexpr int kChildReportMs = 60000;  // the child reports within kReadyMs; then it is killed

bool wait_for_file(const std::string& path, int ms) {
    for (int i = 0; i < ms; i++) {
        if (access(path.c_str(), F_OK) == 0) return true;
        usleep(1000);
    }
    return false;
}

// Every 127.0.0.1 in s under the shim's name; false if there was none.
bool via_shim_name(std::string* s) {
    const std::string ip = "127.0.0.1";
    bool any = false;
    for (size_t at = s->find(ip); at != std::string::npos; at = s->find(ip, at)) {
        s->replace(at, ip.size(), "forkgate.invalid");
        any = true;
    }
    return any;
}

class SdkForkGate : public ::testing::TestWithParam<Backend> {};

TEST_P(SdkForkGate, AForkDuringTheLeaseThreadsNameResolutionLeavesTheChildAbleToLease) {
    ASSERT_NE(dlsym(RTLD_DEFAULT, "sf_resolver_shim_loaded"), nullptr)
        << "run by test/sdk_c.sh, which preloads test/sdk/resolver_shim.c";
    const std::string dir = env("SF_RESOLVER_SHIM_DIR");
    ASSERT_FALSE(dir.empty());
    const std::string hold = dir + "/hold", entered = dir + "/entered";
    (void)unlink(entered.c_str());
    std::string where = GetParam() == Backend::Etcd ? env("SNOWFLAKE_TEST_ETCD") : env("SNOWFLAKE_TEST_ZK");
    ASSERT_TRUE(via_shim_name(&where)) << where;
    const std::string prefix = "/sdkgate-" + std::to_string(std::random_device{}() % 1000000000);
    sf_config cfg;
    sf_config_init(&cfg);
    if (GetParam() == Backend::Etcd)
        cfg.etcd_endpoints = where.c_str();
    else
        cfg.zookeeper_hosts = where.c_str();
    cfg.lease_prefix = prefix.c_str();
    cfg.worker_id_min = 940;
    cfg.worker_id_max = 943;

    // The lease thread's first lookup waits inside the shim (5 s at most).
    { std::ofstream(hold) << 5000 << "\n"; }
    sf_generator* gen = nullptr;
    char err[512];
    ASSERT_EQ(sf_open(&cfg, &gen, err, sizeof err), SF_OK) << err;
    ASSERT_TRUE(wait_for_file(entered, kReadyMs)) << "the lease thread never resolved a name";
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int64_t report[2] = {0, -1};  // failed checks (bits), the child's worker id
        int64_t id = 0;
        if (sf_next_id(gen, &id) != SF_ERR_NO_LEASE) report[0] |= 1;
        if (sf_wait_ready(gen, kReadyMs) != SF_OK) {
            // The lease never started: its thread may be stuck for good, so
            // no sf_close (it would wait for it).
            report[0] |= 2;
            (void)!write(fds[1], report, sizeof report);
            _exit(0);
        }
        sf_stats st;
        if (sf_status(gen, &st) != SF_OK || st.state != SF_STATE_HELD) report[0] |= 4;
        report[1] = st.worker_id;
        sf_decoded d;
        if (sf_next_id(gen, &id) != SF_OK || sf_decode(id, 0, &d) != SF_OK || d.worker_id != st.worker_id)
            report[0] |= 8;
        if (sf_close(gen) != SF_OK) report[0] |= 16;
        (void)!write(fds[1], report, sizeof report);
        _exit(0);
    }
    (void)unlink(hold.c_str());  // the parent's lookup goes on
    close(fds[1]);
    int64_t report[2] = {-1, -1};
    pollfd p{fds[0], POLLIN, 0};
    const bool reported = poll(&p, 1, kChildReportMs) == 1 && read(fds[0], report, sizeof report) == sizeof report;
    close(fds[0]);
    if (!reported) (void)kill(pid, SIGKILL);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);  // reaped, killed or not
    ASSERT_TRUE(reported) << "the child hung (killed)";
    EXPECT_EQ(report[0] & 2, 0)
        << "the child's own lease never started (a resolver lock left locked by the fork?)";
    EXPECT_EQ(report[0], 0) << "the child's failed checks (bits)";
    EXPECT_GE(report[1], 940);
    EXPECT_LE(report[1], 943);
    // The parent's lease goes on (the fork came before it held an id, so
    // the child's, freed by its close, may be the one it gets).
    ASSERT_EQ(sf_wait_ready(gen, kReadyMs), SF_OK) << last_error_text();
    int64_t id = 0;
    EXPECT_EQ(sf_next_id(gen, &id), SF_OK) << last_error_text();
    EXPECT_EQ(sf_close(gen), SF_OK) << last_error_text();
}

INSTANTIATE_TEST_SUITE_P(Coordinators, SdkForkGate, ::testing::ValuesIn(started_backends()),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                             return std::string(i.param == Backend::Etcd ? "etcd" : "zookeeper");
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SdkForkGate);

}  // namespace
