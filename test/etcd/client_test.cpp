// Tests of the etcd gateway client (src/etcd/client.hpp) against a real etcd
// started by test/etcd_client.sh, which passes:
//   SNOWFLAKE_TEST_ETCD  the etcd's client URL (http://127.0.0.1:PORT)
//   SNOWFLAKE_TEST_ETCD_PID  its pid (the frozen-etcd tests stop and resume it)
// Without them every test that needs etcd fails: the suite cannot pass
// without having talked to etcd.

#include "../lib/dead_port.hpp"
#include "core/coord_schema.hpp"
#include "core/lease.hpp"
#include "etcd/client.hpp"
#include "fake_gateway.hpp"
#include "../lib/frozen_process.hpp"

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace snowflake;
using etcd::Client;
using etcd::Code;
using etcd::Options;
using Clock = std::chrono::steady_clock;

long ms_since(Clock::time_point t) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

std::string etcd_url() { return env("SNOWFLAKE_TEST_ETCD"); }

// A loopback port nothing listens on (dead_port.hpp).
std::string dead_endpoint() { return "http://" + snowflake::test::dead_loopback_address(); }

Options options_for(std::vector<std::string> endpoints, long timeout_ms = 1000) {
    Options o;
    o.endpoints = std::move(endpoints);
    o.timeout_ms = timeout_ms;
    o.connect_timeout_ms = 500;
    return o;
}

// A key prefix of its own for each test, so tests and runs never meet.
std::string test_prefix() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return "/sftest-" + std::to_string(getpid()) + "/" + info->name();
}

class Etcd : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(etcd_url().empty()) << "SNOWFLAKE_TEST_ETCD is not set: run test/etcd_client.sh";
        prefix_ = test_prefix();
    }
    Client client(long timeout_ms = 1000) { return Client(options_for({etcd_url()}, timeout_ms)); }
    std::string prefix_;
};

// ---------------------------------------------------------------------------
// Pure helpers

TEST(Base64, RoundTripsAndIsCanonical) {
    EXPECT_EQ(etcd::base64_encode(""), "");
    EXPECT_EQ(etcd::base64_encode("f"), "Zg==");
    EXPECT_EQ(etcd::base64_encode("fo"), "Zm8=");
    EXPECT_EQ(etcd::base64_encode("foo"), "Zm9v");
    EXPECT_EQ(etcd::base64_encode("/sf/workers/3"), "L3NmL3dvcmtlcnMvMw==");
    std::string all;
    for (int i = 0; i < 256; i++) all.push_back(static_cast<char>(i));
    for (size_t n = 0; n <= all.size(); n += 37) {
        std::string back;
        ASSERT_TRUE(etcd::base64_decode(etcd::base64_encode(all.substr(0, n)), &back));
        EXPECT_EQ(back, all.substr(0, n));
    }
    std::string out;
    for (const char* bad : {"Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zg==Zg==", "Zm 9", "Zm9v\n", "====", "Zm=v"}) {
        EXPECT_FALSE(etcd::base64_decode(bad, &out)) << bad;
    }
}

TEST(RangeEnd, NextKeyAfterThePrefix) {
    EXPECT_EQ(etcd::prefix_range_end("/a/"), "/a0");
    EXPECT_EQ(etcd::prefix_range_end("a\xff"), "b");
    EXPECT_EQ(etcd::prefix_range_end("\xff\xff"), std::string(1, '\0'));
    EXPECT_EQ(etcd::prefix_range_end(""), std::string(1, '\0'));
}

// ---------------------------------------------------------------------------
// Against the real etcd

TEST_F(Etcd, GrantKeepaliveRevoke) {
    Client c = client();
    const etcd::GrantResult g = c.grant(5);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    EXPECT_NE(g.lease_id, 0);
    EXPECT_EQ(g.ttl_s, 5);
    const etcd::KeepaliveResult k = c.keepalive(g.lease_id);
    ASSERT_TRUE(k.status.ok()) << k.status.error;
    EXPECT_EQ(k.ttl_s, 5);
    const etcd::Status r = c.revoke(g.lease_id);
    ASSERT_TRUE(r.ok()) << r.error;
    const etcd::KeepaliveResult gone = c.keepalive(g.lease_id);
    ASSERT_TRUE(gone.status.ok()) << gone.status.error;
    EXPECT_EQ(gone.ttl_s, 0);
    const etcd::Status again = c.revoke(g.lease_id);
    EXPECT_EQ(again.code, Code::LeaseNotFound) << again.error;
    EXPECT_NE(again.error.find("lease not found"), std::string::npos);
}

TEST_F(Etcd, ServerRaisesTooShortTtls) {
    Client c = client();
    const etcd::GrantResult g = c.grant(1);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    EXPECT_GE(g.ttl_s, 1);  // etcd 3.4 with default timing grants 2
    c.revoke(g.lease_id);
}

TEST_F(Etcd, ClaimSucceedsOnceThenReportsTheHolder) {
    Client c = client();
    const std::string key = core::worker_key(prefix_, 3);
    core::NodeIdentity a;
    a.host = "node-a";
    a.port = 5432;
    a.system_identifier = 42;
    a.started_unix_ms = 1764560687000;
    const etcd::GrantResult la = c.grant(10), lb = c.grant(10);
    ASSERT_TRUE(la.status.ok() && lb.status.ok());
    const etcd::ClaimResult first = c.claim(key, core::encode_node_identity(a), la.lease_id);
    ASSERT_TRUE(first.status.ok()) << first.status.error;
    EXPECT_TRUE(first.claimed);
    const etcd::ClaimResult second = c.claim(key, "node-b", lb.lease_id);
    ASSERT_TRUE(second.status.ok()) << second.status.error;
    EXPECT_FALSE(second.claimed);
    EXPECT_EQ(second.holder.value, core::encode_node_identity(a));
    EXPECT_EQ(second.holder.lease, la.lease_id);
    EXPECT_EQ(core::describe_holder(second.holder.value),
              "host node-a port 5432 (system identifier 42, started 2025-12-01 03:44:47 UTC)");
    // Claiming again with the holder's own lease also reports it (the core
    // counts that as a claim whose first answer was lost).
    const etcd::ClaimResult own = c.claim(key, "x", la.lease_id);
    EXPECT_FALSE(own.claimed);
    EXPECT_EQ(own.holder.lease, la.lease_id);
    // Revoking the holder's lease deletes the key: the other claim now wins.
    ASSERT_TRUE(c.revoke(la.lease_id).ok());
    const etcd::ClaimResult third = c.claim(key, "node-b", lb.lease_id);
    ASSERT_TRUE(third.status.ok()) << third.status.error;
    EXPECT_TRUE(third.claimed);
    const etcd::GetResult got = c.get(key);
    ASSERT_TRUE(got.status.ok() && got.found);
    EXPECT_EQ(got.kv.value, "node-b");
    EXPECT_EQ(got.kv.lease, lb.lease_id);
    c.revoke(lb.lease_id);
}

TEST_F(Etcd, ClaimWithAnUnknownLeaseFails) {
    Client c = client();
    const etcd::ClaimResult r = c.claim(core::worker_key(prefix_, 1), "v", 123456789);
    EXPECT_EQ(r.status.code, Code::LeaseNotFound) << r.status.error;
    const etcd::PutResult p = c.put(prefix_ + "/x", "v", 123456789);
    EXPECT_EQ(p.status.code, Code::LeaseNotFound) << p.status.error;
}

TEST_F(Etcd, KeyVanishesWhenItsLeaseExpires) {
    Client c = client();
    const std::string key = core::worker_key(prefix_, 5);
    const Clock::time_point sent = Clock::now();
    const etcd::GrantResult g = c.grant(2);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    ASSERT_EQ(g.ttl_s, 2);
    ASSERT_TRUE(c.claim(key, "v", g.lease_id).claimed);
    // The fencing assumption: etcd does not expire a lease before send time
    // + TTL. Poll until the key is gone; it must not go early, and must go.
    long gone_after_ms = -1;
    while (ms_since(sent) < 8000) {
        const long before = ms_since(sent);
        const etcd::GetResult r = c.get(key);
        ASSERT_TRUE(r.status.ok()) << r.status.error;
        if (!r.found) {
            gone_after_ms = before;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_GE(gone_after_ms, 0) << "the key outlived its lease by more than 6 s";
    EXPECT_GE(gone_after_ms, 2000 - 200);
    const etcd::KeepaliveResult k = c.keepalive(g.lease_id);
    ASSERT_TRUE(k.status.ok()) << k.status.error;
    EXPECT_EQ(k.ttl_s, 0);
}

TEST_F(Etcd, KeepaliveKeepsTheKeyBeyondItsTtl) {
    Client c = client();
    const std::string key = core::worker_key(prefix_, 6);
    const etcd::GrantResult g = c.grant(2);
    ASSERT_TRUE(g.status.ok());
    ASSERT_TRUE(c.claim(key, "v", g.lease_id).claimed);
    for (int i = 0; i < 8; i++) {  // 4 s, twice the TTL
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        const etcd::KeepaliveResult k = c.keepalive(g.lease_id);
        ASSERT_TRUE(k.status.ok()) << k.status.error;
        ASSERT_GT(k.ttl_s, 0);
    }
    EXPECT_TRUE(c.get(key).found);
    c.revoke(g.lease_id);
    EXPECT_FALSE(c.get(key).found);
}

TEST_F(Etcd, MarkCompareAndPutOnlyAcceptsWhatWasRead) {
    Client c = client();
    const std::string key = core::mark_key(prefix_, 3);
    const etcd::GetResult none = c.get(key);
    ASSERT_TRUE(none.status.ok()) << none.status.error;
    EXPECT_FALSE(none.found);
    const etcd::CasResult created = c.compare_and_put(key, "1000 reserved", 0);
    ASSERT_TRUE(created.status.ok()) << created.status.error;
    ASSERT_TRUE(created.succeeded);
    // A writer that read "absent" too is refused and shown the mark.
    const etcd::CasResult late = c.compare_and_put(key, "500 reserved", 0);
    ASSERT_TRUE(late.status.ok());
    EXPECT_FALSE(late.succeeded);
    EXPECT_FALSE(late.guard_failed);
    ASSERT_TRUE(late.found);
    EXPECT_EQ(late.current.value, "1000 reserved");
    EXPECT_EQ(late.current.mod_revision, created.revision);
    const etcd::CasResult next = c.compare_and_put(key, "6000 reserved", created.revision);
    ASSERT_TRUE(next.status.ok());
    ASSERT_TRUE(next.succeeded);
    EXPECT_GT(next.revision, created.revision);
    // A stale revision can never move it back.
    const etcd::CasResult stale = c.compare_and_put(key, "2000 exact", created.revision);
    ASSERT_TRUE(stale.status.ok());
    EXPECT_FALSE(stale.succeeded);
    EXPECT_EQ(stale.current.value, "6000 reserved");
    const etcd::GetResult got = c.get(key);
    ASSERT_TRUE(got.found);
    EXPECT_EQ(got.kv.value, "6000 reserved");
    EXPECT_EQ(got.kv.mod_revision, next.revision);
    EXPECT_EQ(got.kv.lease, 0);
}

TEST_F(Etcd, MarkWriteIsGuardedByTheWorkerKey) {
    Client c = client();
    const std::string worker = core::worker_key(prefix_, 4), mark = core::mark_key(prefix_, 4);
    const etcd::GrantResult g = c.grant(10);
    ASSERT_TRUE(g.status.ok());
    ASSERT_TRUE(c.claim(worker, "me", g.lease_id).claimed);
    const etcd::CasResult ok = c.compare_and_put(mark, "1 reserved", 0, worker, g.lease_id);
    ASSERT_TRUE(ok.status.ok()) << ok.status.error;
    ASSERT_TRUE(ok.succeeded);
    // The id is lost (lease gone): the old holder can no longer move the mark.
    ASSERT_TRUE(c.revoke(g.lease_id).ok());
    const etcd::CasResult lost = c.compare_and_put(mark, "2 reserved", ok.revision, worker, g.lease_id);
    ASSERT_TRUE(lost.status.ok()) << lost.status.error;
    EXPECT_FALSE(lost.succeeded);
    EXPECT_TRUE(lost.guard_failed);
    EXPECT_EQ(lost.current.value, "1 reserved");
}

// Issue 28, finding 6: when the mark moved and the worker key is not in the
// guard lease any more, both compares fail: the guard failed all the same
// (the client used to infer from the moved mark that the guard had held).
TEST_F(Etcd, MarkWriteGuardFailsWhenTheMarkMovedToo) {
    Client c = client();
    const std::string worker = core::worker_key(prefix_, 5), mark = core::mark_key(prefix_, 5);
    const etcd::GrantResult mine = c.grant(10), other = c.grant(10);
    ASSERT_TRUE(mine.status.ok() && other.status.ok());
    ASSERT_TRUE(c.claim(worker, "me", mine.lease_id).claimed);
    const etcd::CasResult ok = c.compare_and_put(mark, "1 reserved", 0, worker, mine.lease_id);
    ASSERT_TRUE(ok.status.ok() && ok.succeeded) << ok.status.error;
    // Another lease takes the key and writes the mark.
    ASSERT_TRUE(c.revoke(mine.lease_id).ok());
    ASSERT_TRUE(c.claim(worker, "other", other.lease_id).claimed);
    ASSERT_TRUE(c.put(mark, "1 reserved").status.ok());
    const etcd::CasResult lost = c.compare_and_put(mark, "2 reserved", ok.revision, worker, mine.lease_id);
    ASSERT_TRUE(lost.status.ok()) << lost.status.error;
    EXPECT_FALSE(lost.succeeded);
    EXPECT_TRUE(lost.guard_failed);
    EXPECT_EQ(lost.current.value, "1 reserved");
    (void)c.revoke(other.lease_id);
}

TEST_F(Etcd, RangeListsExactlyThePrefix) {
    Client c = client();
    const std::string workers = core::workers_prefix(prefix_);
    const etcd::RangeResult empty = c.range(workers);
    ASSERT_TRUE(empty.status.ok()) << empty.status.error;
    EXPECT_TRUE(empty.kvs.empty());
    for (int w : {9, 1, 5}) ASSERT_TRUE(c.put(core::worker_key(prefix_, w), "n" + std::to_string(w)).status.ok());
    ASSERT_TRUE(c.put(prefix_ + "/workers", "not under the prefix").status.ok());
    ASSERT_TRUE(c.put(prefix_ + "/workersX", "nor this").status.ok());
    ASSERT_TRUE(c.put(core::mark_key(prefix_, 1), "nor this").status.ok());
    const etcd::RangeResult r = c.range(workers);
    ASSERT_TRUE(r.status.ok()) << r.status.error;
    ASSERT_EQ(r.kvs.size(), 3u);
    core::TakenIds taken;
    std::vector<int32_t> ids;
    for (const etcd::KeyValue& kv : r.kvs) {
        const int32_t w = core::parse_worker_key(prefix_, kv.key);
        ids.push_back(w);
        core::taken_add(taken, w);
        EXPECT_EQ(kv.value, "n" + std::to_string(w));
    }
    EXPECT_EQ(ids, (std::vector<int32_t>{1, 5, 9}));  // byte order of the keys
    core::Lease l;
    core::LeaseConfig cfg;
    EXPECT_EQ(core::lease::choose_worker(l, cfg, taken, 0), 0);
}

TEST_F(Etcd, ValuesAreBytes) {
    Client c = client();
    std::string value;
    for (int i = 0; i < 256; i++) value.push_back(static_cast<char>(i));
    const std::string key = prefix_ + "/bytes/\xc3\xa9\xff";
    ASSERT_TRUE(c.put(key, value).status.ok());
    const etcd::GetResult r = c.get(key);
    ASSERT_TRUE(r.status.ok()) << r.status.error;
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.kv.key, key);
    EXPECT_EQ(r.kv.value, value);
}

// ---------------------------------------------------------------------------
// Endpoints, timeouts, abort

TEST(Endpoints, NothingListeningIsAFastClearError) {
    const std::string dead = dead_endpoint();
    Client c(options_for({dead}));
    const Clock::time_point t = Clock::now();
    const etcd::GrantResult g = c.grant(5);
    EXPECT_LT(ms_since(t), 500);
    EXPECT_EQ(g.status.code, Code::Unreachable);
    EXPECT_EQ(g.status.error, "connection refused to " + dead);
}

TEST(Endpoints, NoEndpointConfigured) {
    Client c(options_for({}));
    const etcd::GetResult r = c.get("/x");
    EXPECT_EQ(r.status.code, Code::Unreachable);
    EXPECT_EQ(r.status.error, "no etcd endpoint is configured");
}

TEST(Endpoints, AllDeadNamesEach) {
    const std::string a = dead_endpoint(), b = "http://127.0.0.2:1";
    Client c(options_for({a, b}));
    const etcd::GetResult r = c.get("/x");
    EXPECT_EQ(r.status.code, Code::Unreachable);
    EXPECT_EQ(r.status.error, "connection refused to " + a + "; connection refused to " + b);
}

TEST_F(Etcd, FirstEndpointDeadSecondAlive) {
    const std::string dead = dead_endpoint();
    Client c(options_for({dead, etcd_url()}));
    const Clock::time_point t = Clock::now();
    const etcd::GrantResult g = c.grant(5);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    EXPECT_LT(ms_since(t), 500);
    EXPECT_EQ(c.current_endpoint(), etcd_url());  // remembered for the next call
    EXPECT_TRUE(c.revoke(g.lease_id).ok());
}

// A member that accepts requests and never answers (cut off from the other
// members, it has no quorum): the call times out, and the next call starts
// at the next member instead of timing out there again (the nemesis suite
// saw every node refuse ids while the first endpoint was partitioned).
TEST_F(Etcd, AMemberThatNeverAnswersIsSkippedByTheNextCall) {
    test::FakeGateway silent;
    ASSERT_TRUE(silent.running());
    silent.answer(200, "{}", 5000);
    Client c(options_for({silent.endpoint(), etcd_url()}, 500));
    EXPECT_EQ(c.get("/x").status.code, Code::Timeout);
    EXPECT_EQ(c.current_endpoint(), etcd_url());
    const etcd::GetResult r = c.get("/x");
    EXPECT_TRUE(r.status.ok()) << r.status.error;
}

// Likewise a member that answers it cannot serve (HTTP 503: no leader).
TEST_F(Etcd, AMemberWithoutLeaderIsSkippedByTheNextCall) {
    test::FakeGateway leaderless;
    ASSERT_TRUE(leaderless.running());
    leaderless.answer(503, R"({"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14})");
    Client c(options_for({leaderless.endpoint(), etcd_url()}, 1000));
    EXPECT_EQ(c.get("/x").status.code, Code::HttpError);
    EXPECT_EQ(c.current_endpoint(), etcd_url());
    EXPECT_TRUE(c.get("/x").status.ok());
}

TEST_F(Etcd, FrozenEtcdTimesOutWithinTheBudget) {
    Client c = client(1000);
    ASSERT_TRUE(c.get("/warm").status.ok());  // connection open before the freeze
    test::Frozen frozen;
    ASSERT_TRUE(frozen.ok()) << "SNOWFLAKE_TEST_ETCD_PID is not set or the process is gone";
    for (int fresh = 0; fresh < 2; fresh++) {
        Client other = client(1000);
        Client& use = fresh ? other : c;  // a kept-alive connection, then a new one
        const Clock::time_point t = Clock::now();
        const etcd::KeepaliveResult k = use.keepalive(1);
        const long took = ms_since(t);
        EXPECT_EQ(k.status.code, Code::Timeout) << k.status.error;
        EXPECT_EQ(k.status.error, "timed out after 1000 ms waiting for " + etcd_url());
        EXPECT_GE(took, 950);
        EXPECT_LT(took, 1300);
    }
}

TEST_F(Etcd, EtcdWorksAgainAfterTheFreeze) {
    {
        test::Frozen frozen;
        ASSERT_TRUE(frozen.ok());
        EXPECT_EQ(client(300).get("/x").status.code, Code::Timeout);
    }
    const etcd::GetResult r = client(2000).get("/x");
    EXPECT_TRUE(r.status.ok()) << r.status.error;
}

std::atomic<bool> g_abort{false};
bool abort_hook(void*) { return g_abort.load(); }

TEST_F(Etcd, AbortHookEndsAPendingCallPromptly) {
    Options o = options_for({etcd_url()}, 10000);
    o.should_abort = abort_hook;
    Client c(o);
    test::Frozen frozen;
    ASSERT_TRUE(frozen.ok());
    g_abort = false;
    std::thread signaller([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        g_abort = true;  // what a SIGTERM handler would set
    });
    const Clock::time_point t = Clock::now();
    const etcd::GrantResult g = c.grant(5);
    const long took = ms_since(t);
    signaller.join();
    g_abort = false;
    EXPECT_EQ(g.status.code, Code::Aborted) << g.status.error;
    EXPECT_GE(took, 290);
    EXPECT_LT(took, 300 + 150);
    EXPECT_EQ(g.status.error.rfind("call to " + etcd_url() + " aborted after ", 0), 0u) << g.status.error;
}

TEST(Endpoints, AbortHookAlreadySetSendsNothing) {
    test::FakeGateway fake;
    ASSERT_TRUE(fake.running());
    Options o = options_for({fake.endpoint()});
    o.should_abort = [](void*) { return true; };
    Client c(o);
    EXPECT_EQ(c.get("/x").status.code, Code::Aborted);
}

// ---------------------------------------------------------------------------
// A misbehaving gateway

class Fake : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(fake_.running()); }
    Client client(long timeout_ms = 1000) {
        Options o = options_for({fake_.endpoint()}, timeout_ms);
        o.max_answer_bytes = 64 * 1024;
        return Client(o);
    }
    test::FakeGateway fake_;
};

TEST_F(Fake, Http500WithEtcdsErrorObject) {
    fake_.answer(500, R"({"error":"boom","message":"etcdserver: request timed out","code":14})");
    const etcd::GrantResult g = client().grant(5);
    EXPECT_EQ(g.status.code, Code::HttpError);
    EXPECT_EQ(g.status.http_status, 500);
    EXPECT_EQ(g.status.error, "etcd answered HTTP 500: etcdserver: request timed out");
}

TEST_F(Fake, Http500WithText) {
    fake_.answer(500, "Internal\nServer Error");
    const etcd::GetResult r = client().get("/x");
    EXPECT_EQ(r.status.code, Code::HttpError);
    EXPECT_EQ(r.status.error, "etcd answered HTTP 500: Internal Server Error");
    fake_.answer(503, "");
    EXPECT_EQ(client().get("/x").status.error, "etcd answered HTTP 503: (empty body)");
    fake_.answer(404, std::string(1000, 'x'));
    EXPECT_LT(client().get("/x").status.error.size(), 260u);
}

TEST_F(Fake, GarbageIsABadAnswerForEveryCall) {
    const char* bodies[] = {
        "garbage", "", "[1,2,3]", "\"text\"", "{\"unterminated\": ", "null",
        R"({"ID": true, "TTL": "5"})", R"({"ID": "12x", "TTL": "5"})", R"({"ID": "99999999999999999999", "TTL": "5"})",
        R"({"result": []})", R"({"result": {"TTL": {"a": 1}}})", R"({"kvs": {"key": "eA=="}})",
        R"({"kvs": [{"key": "not base64!"}]})", R"({"kvs": [{"key": 7}]})", R"({"kvs": [1]})",
        R"({"succeeded": "yes"})", R"({"succeeded": false, "responses": []})",
        R"({"succeeded": false, "responses": [{"response_range": {"kvs": []}}]})",
        R"({"header": {"revision": []}})", R"({"header": "x"})", "\xff\xfe{}",
        R"({"kvs": [{"key": "L3g="}, {"key": "L3g="}]})", R"({"kvs": [{"key": "L3k="}]})",
    };
    Client c = client();
    int bad = 0;
    for (const char* body : bodies) {
        fake_.answer(200, body);
        SCOPED_TRACE(body);
        const etcd::GrantResult g = c.grant(5);
        const etcd::KeepaliveResult k = c.keepalive(5);
        const etcd::ClaimResult cl = c.claim("/x", "v", 5);
        const etcd::GetResult ge = c.get("/x");
        const etcd::RangeResult ra = c.range("/x/");
        const etcd::PutResult pu = c.put("/x", "v");
        const etcd::CasResult ca = c.compare_and_put("/x", "v", 3);
        const etcd::Status rv = c.revoke(5);
        for (const etcd::Status* s : {&g.status, &k.status, &cl.status, &ge.status, &ra.status, &pu.status,
                                      &ca.status, &rv}) {
            // Each call either rejects it, or reads it as a harmless empty
            // answer (proto3 leaves out zero values): never crashes.
            if (!s->ok()) {
                EXPECT_EQ(s->code, Code::BadAnswer) << s->error;
                EXPECT_EQ(s->error.rfind("etcd's answer to /v3/", 0), 0u) << s->error;
                bad++;
            }
        }
        EXPECT_FALSE(g.status.ok());  // a grant needs an id and a TTL
        EXPECT_FALSE(k.status.ok());  // a keepalive needs a result
        EXPECT_FALSE(cl.status.ok());
        EXPECT_FALSE(pu.status.ok());  // a put needs a revision
    }
    EXPECT_GT(bad, 100);
}

TEST_F(Fake, DeeplyNestedOrHugeAnswers) {
    fake_.answer(200, std::string(30000, '[') + std::string(30000, ']'));
    EXPECT_EQ(client().get("/x").status.code, Code::BadAnswer);
    fake_.answer(200, "{\"kvs\": [" + std::string(100000, ' ') + "]}");
    const etcd::GetResult r = client().get("/x");
    EXPECT_EQ(r.status.code, Code::BadAnswer);
    EXPECT_EQ(r.status.error, "the answer of " + fake_.endpoint() + " is larger than 65536 bytes");
}

TEST_F(Fake, ErrorInsideA200Answer) {
    fake_.answer(200, R"({"error": {"grpc_code": 5, "http_code": 404, "message": "etcdserver: requested lease not found"}})");
    const etcd::KeepaliveResult k = client().keepalive(5);
    ASSERT_TRUE(k.status.ok()) << k.status.error;
    EXPECT_EQ(k.ttl_s, 0);  // gone
    fake_.answer(200, R"({"error": {"grpc_code": 14, "message": "unavailable"}})");
    const etcd::GrantResult g = client().grant(5);
    EXPECT_EQ(g.status.code, Code::HttpError);
    EXPECT_EQ(g.status.error, "etcd answered with an error: unavailable");
    fake_.answer(200, R"({"ID": "5", "TTL": "5", "error": "lessor: too many leases"})");
    EXPECT_EQ(client().grant(5).status.error, "etcd refused the lease: lessor: too many leases");
}

TEST_F(Fake, SlowAnswerTimesOut) {
    fake_.answer(200, "{}", 2000);
    const Clock::time_point t = Clock::now();
    const etcd::GetResult r = client(500).get("/x");
    EXPECT_EQ(r.status.code, Code::Timeout);
    EXPECT_LT(ms_since(t), 800);
}

TEST_F(Fake, TimeoutIsNotRetriedOnTheNextEndpoint) {
    // The request reached a server: sending it again elsewhere could apply it twice.
    fake_.answer(200, "{}", 1500);
    Options o = options_for({fake_.endpoint(), fake_.endpoint()}, 1000);
    Client c(o);
    EXPECT_EQ(c.put("/x", "v").status.code, Code::Timeout);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    EXPECT_EQ(fake_.requests(), 1);
}

TEST_F(Fake, GoodAnswersAreRead) {
    fake_.answer(200, R"({"header":{"revision":"7"},"ID":"4111120360663512584","TTL":"30"})");
    const etcd::GrantResult g = client().grant(30);
    ASSERT_TRUE(g.status.ok()) << g.status.error;
    EXPECT_EQ(g.lease_id, 4111120360663512584);
    EXPECT_EQ(g.ttl_s, 30);
    // Numbers instead of strings are accepted too.
    fake_.answer(200, R"({"ID":12,"TTL":5})");
    EXPECT_EQ(client().grant(5).lease_id, 12);
}

}  // namespace

int main(int argc, char** argv) {
    curl_global_init(CURL_GLOBAL_DEFAULT);  // once per process, as client.hpp asks
    ::testing::InitGoogleTest(&argc, argv);
    const int rc = RUN_ALL_TESTS();
    curl_global_cleanup();
    return rc;
}
