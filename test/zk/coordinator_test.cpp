// Tests of ZooKeeper's coordinator (src/zk/coordinator.hpp) against a real
// standalone ZooKeeper started by test/zk_client.sh, which passes:
//   SNOWFLAKE_TEST_ZK          its connect string (127.0.0.1:PORT)
//   SNOWFLAKE_TEST_ZK_PID      its pid (the stopped-server tests stop and resume it)
//   SNOWFLAKE_TEST_ZK_TICK_MS  its tick (a session lasts 2 to 20 ticks)
//   SNOWFLAKE_TEST_ZK_CLIENT_LOG  where the C client logs (stderr if unset)
// Without them every test that needs ZooKeeper fails: the suite cannot pass
// without having talked to ZooKeeper. Two coordinators are two sessions, as
// two nodes of a fleet would be.

#include "../lib/dead_port.hpp"
#include "../lib/frozen_process.hpp"
#include "core/coord_schema.hpp"
#include "core/coordinator.hpp"
#include "core/lease.hpp"
#include "zk/coordinator.hpp"

#include <gtest/gtest.h>
#include <zookeeper/zookeeper.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

namespace {

using namespace snowflake;
using core::CoordCode;
using Clock = std::chrono::steady_clock;

long ms_since(Clock::time_point t) {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

std::string zk_hosts() { return env("SNOWFLAKE_TEST_ZK"); }
pid_t zk_pid() { return static_cast<pid_t>(std::atoi(env("SNOWFLAKE_TEST_ZK_PID").c_str())); }
long zk_tick_ms() { return std::atol(env("SNOWFLAKE_TEST_ZK_TICK_MS").c_str()); }

// The C client's log (its refused connects to a dead server, a line each)
// into a file of the runner's, which shows it when a test fails.
const bool g_client_log = [] {
    const char* path = std::getenv("SNOWFLAKE_TEST_ZK_CLIENT_LOG");
    FILE* f = path != nullptr ? std::fopen(path, "a") : nullptr;
    if (f != nullptr) zoo_set_log_stream(f);
    return f != nullptr;
}();

// A loopback port nothing listens on (dead_port.hpp).
std::string dead_hosts() { return snowflake::test::dead_loopback_address(); }

// A prefix of its own for each test, so tests and runs never meet.
std::string test_prefix() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return "/sftest-" + std::to_string(getpid()) + "/" + info->name();
}

// The longest any call may take with a call timeout of timeout_ms: the
// timeout, a poll slice (50 ms) and scheduling.
constexpr long kSlackMs = 200;

class Zk : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(zk_hosts().empty()) << "SNOWFLAKE_TEST_ZK is not set: run test/zk_client.sh";
        prefix_ = test_prefix();
    }
    std::unique_ptr<zk::ZkCoordinator> coordinator(int64_t timeout_ms = 1000, std::string hosts = zk_hosts()) {
        zk::Options o;
        o.hosts = std::move(hosts);
        o.prefix = prefix_;
        o.timeout_ms = timeout_ms;
        o.connect_timeout_ms = 3000;
        return std::make_unique<zk::ZkCoordinator>(o);
    }
    // A coordinator with a session of ttl_ms (as the ensemble bounds it).
    std::unique_ptr<zk::ZkCoordinator> session(int64_t* lease, int64_t ttl_ms = 4000, int64_t timeout_ms = 1000) {
        auto c = coordinator(timeout_ms);
        const core::CoordGrant g = c->grant(ttl_ms);
        EXPECT_TRUE(g.status.ok()) << g.status.error;
        EXPECT_NE(g.lease_id, 0);
        *lease = g.lease_id;
        return c;
    }
    std::string prefix_;
};

bool listed(core::Coordinator& c, int32_t worker) {
    const core::CoordWorkers w = c.list_workers();
    EXPECT_TRUE(w.status.ok()) << w.status.error;
    return core::taken_has(w.taken, worker);
}

// ---------------------------------------------------------------------------
// Sessions

TEST_F(Zk, GrantOpensASessionAndKeepaliveRenewsIt) {
    auto c = coordinator();
    EXPECT_STREQ(c->name(), "zookeeper");
    EXPECT_STREQ(c->lease_noun(), "session");
    const core::CoordGrant g = c->grant(4000);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    ASSERT_NE(g.lease_id, 0);
    EXPECT_EQ(g.ttl_ms, 4000);
    char hex[32];
    snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(g.lease_id));
    EXPECT_EQ(c->lease_text(g.lease_id), hex);
    EXPECT_EQ(c->lease_text(0), "");
    for (int i = 0; i < 3; i++) {
        const core::CoordStatus k = c->keepalive(g.lease_id);
        EXPECT_TRUE(k.ok()) << k.error;
    }
    // Another session's id is not ours to renew.
    EXPECT_EQ(c->keepalive(g.lease_id + 1).code, CoordCode::SessionGone);
    EXPECT_TRUE(c->release(g.lease_id).ok());
    const core::CoordStatus after = c->keepalive(g.lease_id);
    EXPECT_EQ(after.code, CoordCode::SessionGone) << after.error;
    EXPECT_EQ(after.error, "renewing the session: the ZooKeeper session is not established");
    // A session that is gone counts as released.
    EXPECT_TRUE(c->release(g.lease_id).ok());
}

TEST_F(Zk, TheServerBoundsTheSessionTimeout) {
    const long tick = zk_tick_ms();
    ASSERT_GT(tick, 0) << "SNOWFLAKE_TEST_ZK_TICK_MS is not set";
    auto c = coordinator();
    core::CoordGrant g = c->grant(tick / 2);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    EXPECT_EQ(g.ttl_ms, 2 * tick);  // minSessionTimeout
    g = c->grant(100 * tick);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    EXPECT_EQ(g.ttl_ms, 20 * tick);  // maxSessionTimeout
}

// ---------------------------------------------------------------------------
// Worker nodes

TEST_F(Zk, ClaimSucceedsOnceThenReportsTheHolder) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    auto b = session(&lb);
    ASSERT_NE(la, lb);
    EXPECT_FALSE(listed(*b, 5));
    core::CoordClaim c = a->claim(5, "node-a", la);
    ASSERT_TRUE(c.status.ok()) << c.status.error;
    EXPECT_TRUE(c.claimed);
    // Held: refused, naming its holder (our own session, for a claim again).
    c = a->claim(5, "node-a", la);
    ASSERT_TRUE(c.status.ok()) << c.status.error;
    EXPECT_FALSE(c.claimed);
    EXPECT_EQ(c.holder_lease, la);
    c = b->claim(5, "node-b", lb);
    ASSERT_TRUE(c.status.ok()) << c.status.error;
    EXPECT_FALSE(c.claimed);
    EXPECT_EQ(c.holder_value, "node-a");
    EXPECT_EQ(c.holder_lease, la);
    EXPECT_TRUE(listed(*b, 5));
    EXPECT_FALSE(listed(*b, 6));
    // A free id next to it is b's.
    c = b->claim(6, "node-b", lb);
    EXPECT_TRUE(c.status.ok() && c.claimed) << c.status.error;
    EXPECT_TRUE(listed(*a, 6));
}

TEST_F(Zk, ClaimInASessionThatIsNotOursFails) {
    int64_t la = 0;
    auto a = session(&la);
    const core::CoordClaim c = a->claim(5, "node-a", la + 1);
    EXPECT_EQ(c.status.code, CoordCode::SessionGone) << c.status.error;
    EXPECT_FALSE(c.claimed);
    EXPECT_FALSE(listed(*a, 5));
}

TEST_F(Zk, TheWorkerNodeGoesWithItsSession) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    auto b = session(&lb);
    ASSERT_TRUE(a->claim(6, "node-a", la).claimed);
    ASSERT_TRUE(listed(*b, 6));
    ASSERT_TRUE(a->release(la).ok());
    EXPECT_FALSE(listed(*b, 6));
    const core::CoordClaim c = b->claim(6, "node-b", lb);
    EXPECT_TRUE(c.status.ok() && c.claimed) << c.status.error;
}

TEST_F(Zk, UnclaimAndReleaseDeleteOnlyOurOwnNodes) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    auto b = session(&lb);
    ASSERT_TRUE(a->claim(3, "node-a", la).claimed);
    ASSERT_TRUE(a->claim(4, "node-a", la).claimed);
    ASSERT_TRUE(b->claim(7, "node-b", lb).claimed);
    // b's node: not a's to delete, by any of the three.
    EXPECT_TRUE(a->unclaim(7, la).ok());
    EXPECT_TRUE(listed(*a, 7));
    EXPECT_TRUE(a->release_other(la, 7).ok());
    EXPECT_TRUE(listed(*a, 7));
    // One of a's: that one only, the session and its other node stay.
    EXPECT_TRUE(a->unclaim(4, la).ok());
    EXPECT_FALSE(listed(*b, 4));
    EXPECT_TRUE(listed(*b, 3));
    EXPECT_TRUE(a->keepalive(la).ok());
    // An absent node counts as done.
    EXPECT_TRUE(a->unclaim(4, la).ok());
    EXPECT_TRUE(b->release_other(la, 4).ok());
    // The whole session: its nodes go, b's stays.
    EXPECT_TRUE(a->release(la).ok());
    EXPECT_FALSE(listed(*b, 3));
    EXPECT_TRUE(listed(*b, 7));
    const core::CoordClaim c = b->claim(7, "node-b", lb);
    EXPECT_EQ(c.holder_lease, lb);
}

TEST_F(Zk, ReleaseOtherFreesAnEarlierSessionsNode) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    auto b = session(&lb);
    ASSERT_TRUE(a->claim(8, "node", la).claimed);
    // The node of a's session (an earlier run's), freed by b's.
    EXPECT_TRUE(b->release_other(la, 8).ok());
    EXPECT_FALSE(listed(*b, 8));
    EXPECT_TRUE(b->claim(8, "node", lb).claimed);
    EXPECT_TRUE(a->keepalive(la).ok());  // a's session itself lives on
}

// ---------------------------------------------------------------------------
// Marks

TEST_F(Zk, MarkWriteAndReadByRevision) {
    int64_t la = 0;
    auto a = session(&la);
    ASSERT_TRUE(a->claim(2, "node-a", la).claimed);
    core::CoordMarkRead r = a->read_mark(2);
    ASSERT_TRUE(r.status.ok()) << r.status.error;
    EXPECT_FALSE(r.found);
    EXPECT_EQ(r.revision, 0);
    core::CoordMarkWrite w = a->write_mark(2, "v1", 0, la);
    ASSERT_TRUE(w.status.ok()) << w.status.error;
    ASSERT_TRUE(w.succeeded);
    EXPECT_EQ(w.revision, 1);
    r = a->read_mark(2);
    EXPECT_TRUE(r.found);
    EXPECT_EQ(r.value, "v1");
    EXPECT_EQ(r.revision, 1);
    w = a->write_mark(2, "v2", 1, la);
    ASSERT_TRUE(w.succeeded) << w.status.error;
    EXPECT_EQ(w.revision, 2);
    // Only the revision read is accepted; a refused write reads the mark,
    // which our last write (with the stamp of our node) made.
    for (int64_t stale : {int64_t{0}, int64_t{1}, int64_t{5}}) {
        w = a->write_mark(2, "v3", stale, la);
        ASSERT_TRUE(w.status.ok()) << w.status.error;
        EXPECT_FALSE(w.succeeded) << stale;
        EXPECT_FALSE(w.guard_failed) << stale;
        EXPECT_TRUE(w.found) << stale;
        EXPECT_EQ(w.current_value, "v2") << stale;
        EXPECT_EQ(w.current_revision, 2) << stale;
        EXPECT_TRUE(w.current_ours) << stale;
    }
    r = a->read_mark(2);
    EXPECT_EQ(r.value, "v2");
    EXPECT_EQ(r.revision, 2);
    // The mark is persistent: it outlives the session.
    ASSERT_TRUE(a->release(la).ok());
    int64_t lb = 0;
    auto b = session(&lb);
    r = b->read_mark(2);
    EXPECT_TRUE(r.found);
    EXPECT_EQ(r.value, "v2");
}

TEST_F(Zk, AMarkWrittenInAnotherSessionIsNotOurs) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    ASSERT_TRUE(a->claim(2, "node", la).claimed);
    ASSERT_TRUE(a->write_mark(2, "v1", 0, la).succeeded);
    ASSERT_TRUE(a->release(la).ok());
    auto b = session(&lb);
    ASSERT_TRUE(b->claim(2, "node", lb).claimed);  // the same identity
    const core::CoordMarkWrite w = b->write_mark(2, "v1", 0, lb);
    ASSERT_TRUE(w.status.ok()) << w.status.error;
    EXPECT_FALSE(w.succeeded);
    EXPECT_FALSE(w.guard_failed);
    EXPECT_TRUE(w.found);
    EXPECT_EQ(w.current_value, "v1");
    EXPECT_EQ(w.current_revision, 1);
    EXPECT_FALSE(w.current_ours);  // an equal value, but not written with b's claim
    EXPECT_TRUE(b->write_mark(2, "v2", 1, lb).succeeded);
}

TEST_F(Zk, MarkWriteFailsOnceTheWorkerNodeIsDeleted) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    auto b = session(&lb);
    ASSERT_TRUE(a->claim(9, "node-a", la).claimed);
    ASSERT_TRUE(a->write_mark(9, "v1", 0, la).succeeded);
    ASSERT_TRUE(b->release_other(la, 9).ok());  // deleted behind a's back
    ASSERT_FALSE(listed(*b, 9));
    const core::CoordMarkWrite w = a->write_mark(9, "v2", 1, la);
    ASSERT_TRUE(w.status.ok()) << w.status.error;
    EXPECT_FALSE(w.succeeded);
    EXPECT_TRUE(w.guard_failed);
    EXPECT_EQ(b->read_mark(9).value, "v1");
    // A worker id never claimed in this session is not guarded by it either.
    const core::CoordMarkWrite never = a->write_mark(10, "v1", 0, la);
    EXPECT_TRUE(never.guard_failed);
    EXPECT_FALSE(b->read_mark(10).found);
}

TEST_F(Zk, MarkWriteFailsOnceTheWorkerNodeIsAnotherSessionsAtVersionZero) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    auto b = session(&lb);
    // a's node at version 0, deleted and created again by b: version 0 too.
    ASSERT_TRUE(a->claim(9, "node", la).claimed);
    ASSERT_TRUE(b->release_other(la, 9).ok());
    ASSERT_TRUE(b->claim(9, "node", lb).claimed);
    const core::CoordMarkWrite w = a->write_mark(9, "v1", 0, la);
    ASSERT_TRUE(w.status.ok()) << w.status.error;
    EXPECT_FALSE(w.succeeded);
    EXPECT_TRUE(w.guard_failed);
    EXPECT_FALSE(b->read_mark(9).found);
    const core::CoordMarkWrite mine = b->write_mark(9, "v1", 0, lb);
    EXPECT_TRUE(mine.succeeded) << mine.status.error;
}

// ---------------------------------------------------------------------------
// The fleet's settings

TEST_F(Zk, TheFleetKeyIsCreatedOnceThenRead) {
    int64_t la = 0, lb = 0;
    auto a = session(&la);
    auto b = session(&lb);
    core::CoordFleet f = a->ensure_fleet("settings-1");
    ASSERT_TRUE(f.status.ok()) << f.status.error;
    EXPECT_EQ(f.key, prefix_ + "/fleet");
    EXPECT_EQ(f.key, core::fleet_key(prefix_));
    EXPECT_TRUE(f.created);
    EXPECT_EQ(f.value, "settings-1");
    f = b->ensure_fleet("settings-2");
    ASSERT_TRUE(f.status.ok()) << f.status.error;
    EXPECT_FALSE(f.created);
    EXPECT_EQ(f.value, "settings-1");
    // Persistent: the sessions that wrote and read it may go.
    ASSERT_TRUE(a->release(la).ok());
    ASSERT_TRUE(b->release(lb).ok());
    auto c = coordinator();
    ASSERT_TRUE(c->grant(4000).status.ok());
    f = c->ensure_fleet("settings-3");
    EXPECT_FALSE(f.created);
    EXPECT_EQ(f.value, "settings-1");
}

// ---------------------------------------------------------------------------
// An unreachable or stopped server: errors within the call's time

TEST_F(Zk, NoServerIsAFastClearError) {
    const std::string dead = dead_hosts();
    zk::Options o;
    o.hosts = dead;
    o.prefix = prefix_;
    o.timeout_ms = 500;
    o.connect_timeout_ms = 500;
    zk::ZkCoordinator c(o);
    const Clock::time_point t = Clock::now();
    const core::CoordGrant g = c.grant(4000);
    const long took = ms_since(t);
    EXPECT_EQ(g.status.code, CoordCode::Failed);
    EXPECT_EQ(g.status.error, "no ZooKeeper session established with " + dead + " within 500 ms");
    EXPECT_EQ(g.lease_id, 0);
    EXPECT_GE(took, 450);
    EXPECT_LT(took, 500 + kSlackMs);
    // Without a session, every call says so at once.
    const Clock::time_point t2 = Clock::now();
    EXPECT_EQ(c.list_workers().status.code, CoordCode::SessionGone);
    EXPECT_EQ(c.read_mark(1).status.code, CoordCode::SessionGone);
    EXPECT_EQ(c.ensure_fleet("x").status.code, CoordCode::SessionGone);
    EXPECT_LT(ms_since(t2), 50);
}

TEST_F(Zk, AStoppedServerIsAnErrorWithinTheTimeoutThenTheSessionResumes) {
    int64_t la = 0;
    const long tick = zk_tick_ms();
    ASSERT_GT(tick, 0);
    auto a = session(&la, 20 * tick, 500);  // the longest session: it outlives the stop
    ASSERT_TRUE(a->claim(4, "node-a", la).claimed);
    ASSERT_TRUE(a->write_mark(4, "v1", 0, la).succeeded);
    {
        test::Frozen frozen(zk_pid());
        ASSERT_TRUE(frozen.ok()) << "SNOWFLAKE_TEST_ZK_PID is not set or the process is gone";
        auto bounded = [&](const char* what, const core::CoordStatus& s, long took) {
            EXPECT_EQ(s.code, CoordCode::Failed) << what << ": " << s.error;
            EXPECT_NE(s.error.find("no answer within the timeout (ZooKeeper at " + zk_hosts() + ")"),
                      std::string::npos)
                << what << ": " << s.error;
            EXPECT_GE(took, 450) << what;
            EXPECT_LT(took, 500 + kSlackMs) << what;
        };
        Clock::time_point t = Clock::now();
        core::CoordStatus s = a->keepalive(la);
        bounded("keepalive", s, ms_since(t));
        t = Clock::now();
        s = a->claim(5, "node-a", la).status;
        bounded("claim", s, ms_since(t));
        t = Clock::now();
        s = a->read_mark(4).status;
        bounded("read_mark", s, ms_since(t));
        t = Clock::now();
        s = a->write_mark(4, "v2", 1, la).status;
        bounded("write_mark", s, ms_since(t));
        t = Clock::now();
        s = a->list_workers().status;
        bounded("list_workers", s, ms_since(t));
        t = Clock::now();
        s = a->ensure_fleet("x").status;
        bounded("ensure_fleet", s, ms_since(t));
    }
    // Resumed within the session's timeout: the same session goes on.
    core::CoordStatus k;
    const Clock::time_point t = Clock::now();
    while (ms_since(t) < 5000) {
        a->poll();
        k = a->keepalive(la);
        if (k.ok()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(k.ok()) << k.error;
    const core::CoordMarkRead r = a->read_mark(4);
    EXPECT_EQ(r.value, "v1");
    EXPECT_TRUE(a->write_mark(4, "v2", 1, la).succeeded);
}

TEST_F(Zk, ASessionLostWhileTheServerWasStoppedIsSessionGone) {
    int64_t la = 0, lb = 0;
    const long tick = zk_tick_ms();
    ASSERT_GT(tick, 0);
    auto a = session(&la, 2 * tick, 500);  // the shortest session
    ASSERT_TRUE(a->claim(4, "node-a", la).claimed);
    {
        test::Frozen frozen(zk_pid());
        ASSERT_TRUE(frozen.ok()) << "SNOWFLAKE_TEST_ZK_PID is not set or the process is gone";
        std::this_thread::sleep_for(std::chrono::milliseconds(4 * tick));
    }
    // The server expires the session when it runs again; every call until
    // the client learns of it fails within its timeout, then says so.
    core::CoordStatus k;
    const Clock::time_point t = Clock::now();
    while (ms_since(t) < 10 * tick) {
        const Clock::time_point call = Clock::now();
        k = a->keepalive(la);
        EXPECT_LT(ms_since(call), 500 + kSlackMs);
        if (k.code != CoordCode::Failed) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(k.code, CoordCode::SessionGone) << k.error;
    // The client's word (ZSESSIONEXPIRED) or ours, whichever learns it first.
    EXPECT_NE(k.error.find("session expired"), std::string::npos) << k.error;
    EXPECT_EQ(a->claim(5, "node-a", la).status.code, CoordCode::SessionGone);
    EXPECT_EQ(a->write_mark(4, "v1", 0, la).status.code, CoordCode::SessionGone);
    EXPECT_EQ(a->list_workers().status.code, CoordCode::SessionGone);
    // Its node went with it; a new session works.
    auto b = session(&lb);
    EXPECT_FALSE(listed(*b, 4));
    EXPECT_TRUE(b->claim(4, "node-b", lb).claimed);
    const core::CoordGrant g = a->grant(2 * tick);
    EXPECT_TRUE(g.status.ok()) << g.status.error;
    EXPECT_NE(g.lease_id, la);
}

std::atomic<bool> g_abort{false};
bool abort_hook(void*) { return g_abort.load(); }

TEST_F(Zk, AbortHookEndsAPendingCallPromptly) {
    int64_t la = 0;
    auto a = session(&la, 20 * zk_tick_ms(), 10000);
    a->set_abort_hook(abort_hook, nullptr);
    test::Frozen frozen(zk_pid());
    ASSERT_TRUE(frozen.ok());
    g_abort = false;
    std::thread signaller([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        g_abort = true;  // what a SIGTERM handler would set
    });
    const Clock::time_point t = Clock::now();
    const core::CoordStatus k = a->keepalive(la);
    const long took = ms_since(t);
    signaller.join();
    g_abort = false;
    EXPECT_EQ(k.code, CoordCode::Aborted) << k.error;
    EXPECT_EQ(k.error, "renewing the session: abandoned at shutdown (ZooKeeper at " + zk_hosts() + ")");
    EXPECT_GE(took, 290);
    EXPECT_LT(took, 300 + 150);
}

}  // namespace
