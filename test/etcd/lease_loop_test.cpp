// The lease core (src/core/lease.hpp) driven by the etcd client against the
// real etcd of test/etcd_client.sh, the way the background worker will drive
// them: a reference loop for the glue, and a test that the two fit together.
// Nodes are objects in this process, each with its own client and lease.

#include "core/generator.hpp"
#include "core/lease.hpp"
#include "etcd/client.hpp"
#include "frozen_process.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>

namespace {

using namespace snowflake;
using Clock = std::chrono::steady_clock;

int64_t mono_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Id-space milliseconds: Unix time since 2020-01-01, plus a per-node skew.
int64_t wall_ms(int64_t skew_ms) {
    const int64_t unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
    return unix_ms - 1577836800000 + skew_ms;
}

std::string etcd_url() {
    const char* v = std::getenv("SNOWFLAKE_TEST_ETCD");
    return v != nullptr ? v : "";
}

etcd::Options options() {
    etcd::Options o;
    o.endpoints = {etcd_url()};
    o.timeout_ms = 1000;
    o.connect_timeout_ms = 500;
    return o;
}

constexpr int64_t kLocalWindowMs = 1000;  // the local mark's window (src/pg)

class Node {
public:
    Node(std::string prefix, std::string host, int32_t static_worker, int64_t ttl_s, int64_t skew_ms = 0)
        : client_(options()), prefix_(std::move(prefix)), skew_ms_(skew_ms), rng_(std::random_device{}()) {
        cfg_.ttl_ms = ttl_s * 1000;
        cfg_.static_worker = static_worker;
        cfg_.leasing = true;
        me_.host = std::move(host);
        me_.port = 5432;
        me_.system_identifier = 1000 + static_cast<uint64_t>(rng_() % 1000);
        me_.started_unix_ms = 1764560687000;
        lease_ = core::lease_start(cfg_, mono_ns());
    }

    // One turn of the worker loop; sleeps at most 50 ms when there is nothing to do.
    void step() {
        int64_t now = mono_ns();
        core::lease_tick(lease_, cfg_, now);
        const core::LeaseStep s = core::lease_next_step(lease_, cfg_, now);
        switch (s.action) {
            case core::LeaseAction::Wait:
                keep_mark();
                if (s.at_ns > now) {
                    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(s.at_ns - now, 50000000)));
                }
                break;
            case core::LeaseAction::Grant: {
                const int64_t sent = mono_ns();
                const etcd::GrantResult r = client_.grant(cfg_.ttl_ms / 1000);
                if (r.status.ok()) {
                    core::lease_on_grant_ok(lease_, cfg_, r.lease_id, r.ttl_s * 1000, sent, mono_ns());
                } else {
                    core::lease_on_failure(lease_, cfg_, s.action, r.status.error.c_str(), mono_ns());
                }
                break;
            }
            case core::LeaseAction::ListWorkers: {
                const etcd::RangeResult r = client_.range(core::workers_prefix(prefix_));
                if (!r.status.ok()) {
                    core::lease_on_failure(lease_, cfg_, s.action, r.status.error.c_str(), mono_ns());
                    break;
                }
                core::TakenIds taken;
                for (const etcd::KeyValue& kv : r.kvs) core::taken_add(taken, core::parse_worker_key(prefix_, kv.key));
                if (core::lease_choose_worker(lease_, cfg_, taken, static_cast<uint32_t>(rng_())) < 0) {
                    core::lease_on_failure(lease_, cfg_, s.action, "all 1024 worker ids are taken", mono_ns());
                }
                break;
            }
            case core::LeaseAction::Claim: {
                const etcd::ClaimResult r = client_.claim(core::worker_key(prefix_, lease_.candidate),
                                                          core::encode_node_identity(me_), lease_.lease_id);
                if (r.status.ok() && r.claimed) {
                    core::lease_on_claim_ok(lease_, cfg_, mono_ns());
                } else if (r.status.ok()) {
                    core::lease_on_claim_taken(lease_, cfg_, r.holder.value, r.holder.lease, mono_ns());
                } else if (r.status.code == etcd::Code::LeaseNotFound) {
                    core::lease_on_lease_gone(lease_, cfg_, mono_ns());
                } else {
                    core::lease_on_failure(lease_, cfg_, s.action, r.status.error.c_str(), mono_ns());
                }
                break;
            }
            case core::LeaseAction::ReadMark:
                read_mark_and_reserve();
                break;
            case core::LeaseAction::Revoke: {
                const etcd::Status st = client_.revoke(lease_.revoke_lease);
                if (st.ok() || st.code == etcd::Code::LeaseNotFound)
                    core::lease_on_revoked(lease_, mono_ns());
                else
                    core::lease_on_failure(lease_, cfg_, core::LeaseAction::Revoke, st.error.c_str(), mono_ns());
                break;
            }
            case core::LeaseAction::KeepAlive: {
                const int64_t sent = mono_ns();
                const etcd::KeepaliveResult r = client_.keepalive(lease_.lease_id);
                if (r.status.ok() && r.ttl_s > 0) {
                    core::lease_on_keepalive_ok(lease_, cfg_, sent, mono_ns());
                } else if (r.status.ok()) {
                    core::lease_on_lease_gone(lease_, cfg_, mono_ns());
                } else {
                    core::lease_on_failure(lease_, cfg_, s.action, r.status.error.c_str(), mono_ns());
                }
                break;
            }
        }
    }

    // Steps until pred() or the time is up.
    template <class Pred>
    bool run_until(Pred pred, int64_t max_ms) {
        const Clock::time_point end = Clock::now() + std::chrono::milliseconds(max_ms);
        while (Clock::now() < end) {
            if (pred()) return true;
            step();
        }
        return pred();
    }

    // What a backend does: the lease check, then the generator, capped by
    // both reservations. Returns 0 when no id can be issued now.
    int64_t issue() {
        if (!core::lease_may_issue(lease_, mono_ns())) return 0;
        gen_.reserved_until_ms = core::issue_limit_ms(core::kMaxMs, etcd_reserved_);
        const core::Next n = core::next_id(gen_, wall_ms(skew_ms_), core::Config{lease_.worker, 0});
        last_status_ = n.status;
        if (n.status == core::Status::NeedReservation) mark_requested_ = true;
        if (n.status != core::Status::Issued) return 0;
        last_ms_ = gen_.last_ms;
        return n.first_id;
    }

    // Clean shutdown: stop issuing, hand over the exact mark, revoke; under
    // a second in all, whatever etcd does. Returns whether both succeeded.
    bool shutdown() {
        core::lease_on_shutdown(lease_);
        const core::ShutdownPlan p = core::plan_shutdown(lease_, mono_ns());
        bool ok = true;
        client_.set_abort_hook(nullptr, nullptr);
        if (p.write_exact_mark) {
            client_.set_timeout_ms(450);
            const etcd::CasResult r = client_.compare_and_put(
                core::mark_key(prefix_, lease_.worker), core::encode_etcd_mark(core::exact_shutdown_mark(gen_.last_ms)),
                mark_revision_, core::worker_key(prefix_, lease_.worker), lease_.lease_id);
            ok = r.status.ok() && r.succeeded;
        }
        if (p.revoke) {
            client_.set_timeout_ms(350);
            ok = client_.revoke(lease_.lease_id).ok() && ok;
        }
        return ok;
    }

    const core::Lease& lease() const { return lease_; }
    int64_t floor_ms() const { return floor_ms_; }
    int64_t etcd_reserved() const { return etcd_reserved_; }
    // For failure messages: times are relative to the node's clock now.
    std::string debug() const {
        return std::string(core::lease_state_name(lease_.state)) + " status=" + std::to_string(static_cast<int>(last_status_)) +
               " reserved=" + std::to_string(etcd_reserved_ - wall_ms(skew_ms_)) + " floor=" +
               std::to_string(floor_ms_ - wall_ms(skew_ms_)) + " last=" + std::to_string(gen_.last_ms - wall_ms(skew_ms_)) +
               " err=" + lease_.last_error + " req=" + std::to_string(mark_requested_) + " renewals=" + std::to_string(lease_.renewals);
    }

private:
    void read_mark_and_reserve() {
        const int32_t w = lease_.worker;
        const etcd::GetResult g = client_.get(core::mark_key(prefix_, w));
        core::Mark etcd_mark;
        if (!g.status.ok() || (g.found && !core::decode_etcd_mark(g.kv.value, &etcd_mark))) {
            core::lease_on_failure(lease_, cfg_, core::LeaseAction::ReadMark,
                                   g.status.ok() ? "the etcd mark is unreadable" : g.status.error.c_str(), mono_ns());
            return;
        }
        // Start above both marks. This process's generator position is the
        // local mark here (exact); the glue uses the mark file as well.
        const bool ours = g.found && mark_revision_ != 0 && g.kv.mod_revision == mark_revision_;
        const core::Handover h = core::plan_handover(core::Mark{gen_.last_ms, true}, kLocalWindowMs, etcd_mark,
                                                     core::kEtcdMarkWindowMs, ours);
        if (h.floor_ms > gen_.last_ms || w != generator_worker_) gen_ = core::state_after(h.floor_ms, h.grace_ms);
        generator_worker_ = w;
        floor_ms_ = h.floor_ms;
        // The first reservation is written before the state says Held.
        const int64_t until = core::etcd_mark_extension(etcd_mark.ms, wall_ms(skew_ms_));
        const etcd::CasResult r =
            client_.compare_and_put(core::mark_key(prefix_, w), core::encode_etcd_mark(core::Mark{until, false}),
                                    g.found ? g.kv.mod_revision : 0, core::worker_key(prefix_, w), lease_.lease_id);
        if (!r.status.ok() || !r.succeeded) {
            core::lease_on_failure(lease_, cfg_, core::LeaseAction::ReadMark,
                                   r.status.ok() ? "the etcd mark changed while it was read" : r.status.error.c_str(),
                                   mono_ns());
            return;
        }
        etcd_reserved_ = until;
        mark_revision_ = r.revision;
        core::lease_on_mark_read(lease_, cfg_, mono_ns());
    }

    void keep_mark() {
        if (!core::lease_may_issue(lease_, mono_ns())) return;
        const int64_t now_ms = wall_ms(skew_ms_);
        const bool active = last_ms_ >= 0 && now_ms - last_ms_ <= core::kEtcdMarkWindowMs;
        if (!core::etcd_mark_due(etcd_reserved_, now_ms, mark_requested_, active)) return;
        const int64_t until = core::etcd_mark_extension(etcd_reserved_, now_ms);
        const etcd::CasResult r = client_.compare_and_put(
            core::mark_key(prefix_, lease_.worker), core::encode_etcd_mark(core::Mark{until, false}), mark_revision_,
            core::worker_key(prefix_, lease_.worker), lease_.lease_id);
        if (r.status.ok() && r.succeeded) {
            etcd_reserved_ = until;
            mark_revision_ = r.revision;
            mark_requested_ = false;
        } else if (r.status.ok()) {
            // The mark or the claim changed under us (a write that timed out
            // during a freeze and was applied afterwards, say): as the glue
            // does (lease_worker.cpp, renew_mark), the id is given up and a
            // lease taken again, which reads the mark anew. Retrying with the
            // old revision would fail for ever.
            core::lease_on_lease_gone(lease_, cfg_, mono_ns());
        }
    }

    core::LeaseConfig cfg_;
    core::Lease lease_;
    etcd::Client client_;
    std::string prefix_;
    core::NodeIdentity me_;
    int64_t skew_ms_;
    std::mt19937 rng_;
    core::GeneratorState gen_ = core::state_after(-1);
    int32_t generator_worker_ = -1;
    int64_t floor_ms_ = -1;
    int64_t etcd_reserved_ = -1;
    int64_t mark_revision_ = 0;
    int64_t last_ms_ = -1;
    bool mark_requested_ = false;
    core::Status last_status_ = core::Status::Issued;
};

class LeaseLoop : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(etcd_url().empty()) << "SNOWFLAKE_TEST_ETCD is not set: run test/etcd_client.sh";
        prefix_ = "/sfloop-" + std::to_string(getpid()) + "/" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name();
    }
    std::string prefix_;
};

bool held(const Node& n) { return n.lease().state == core::LeaseState::Held; }

TEST_F(LeaseLoop, TwoNodesGetDifferentIdsAndIssue) {
    Node a(prefix_, "node-a", -1, 5), b(prefix_, "node-b", -1, 5);
    for (int i = 0; i < 400 && !(held(a) && held(b)); i++) {
        a.step();
        b.step();
    }
    ASSERT_TRUE(held(a) && held(b)) << a.lease().last_error << " / " << b.lease().last_error;
    EXPECT_NE(a.lease().worker, b.lease().worker);
    // Low ids: the lowest free one first, then a few above it after a lost claim.
    EXPECT_LE(std::max(a.lease().worker, b.lease().worker), 2);
    // Ids flow once the first etcd reservation is written.
    int64_t ida = 0, idb = 0;
    ASSERT_TRUE(a.run_until([&] { return (ida = a.issue()) != 0; }, 3000));
    ASSERT_TRUE(b.run_until([&] { return (idb = b.issue()) != 0; }, 3000));
    EXPECT_EQ(core::decompose(ida).worker, a.lease().worker);
    EXPECT_GT(a.etcd_reserved(), core::decompose(ida).ms);
    EXPECT_TRUE(a.shutdown());
    EXPECT_TRUE(b.shutdown());
}

TEST_F(LeaseLoop, StaticIdTakenThenHandedOverCleanly) {
    Node a(prefix_, "node-a", 7, 5);
    ASSERT_TRUE(a.run_until([&] { return held(a); }, 3000)) << a.lease().last_error;
    int64_t last_a = 0;
    ASSERT_TRUE(a.run_until([&] { return (last_a = a.issue()) != 0; }, 3000));

    Node b(prefix_, "node-b", 7, 5);
    ASSERT_TRUE(b.run_until([&] { return b.lease().taken_by_other; }, 3000));
    EXPECT_FALSE(core::lease_may_issue(b.lease(), mono_ns()));
    EXPECT_EQ(std::string(b.lease().last_error).rfind("worker id 7 is held by another node: host node-a port 5432", 0), 0u)
        << b.lease().last_error;

    ASSERT_TRUE(a.shutdown());  // exact mark, then revoke: B may take over at once
    const Clock::time_point t = Clock::now();
    ASSERT_TRUE(b.run_until([&] { return held(b); }, 4000)) << b.lease().last_error;
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count(), 2000);
    EXPECT_EQ(b.floor_ms(), core::decompose(last_a).ms);  // the exact mark, not a reservation
    int64_t first_b = 0;
    ASSERT_TRUE(b.run_until([&] { return (first_b = b.issue()) != 0; }, 3000));
    EXPECT_GT(first_b, last_a);
    EXPECT_TRUE(b.shutdown());
}

TEST_F(LeaseLoop, CrashedHolderIsOutlivedAndItsReservationRespected) {
    // A's clock runs 3 s ahead of B's: its reservation is far ahead of B's clock.
    auto a = std::make_unique<Node>(prefix_, "node-a", 9, 5, 3000);
    ASSERT_TRUE(a->run_until([&] { return held(*a); }, 3000)) << a->lease().last_error;
    int64_t last_a = 0;
    ASSERT_TRUE(a->run_until([&] { return (last_a = a->issue()) != 0; }, 3000));
    const int64_t a_reserved = a->etcd_reserved();
    a.reset();  // crash: no exact mark, no revoke; its lease runs out in etcd

    Node b(prefix_, "node-b", 9, 5);
    const Clock::time_point t = Clock::now();
    ASSERT_TRUE(b.run_until([&] { return held(b); }, 12000)) << b.lease().last_error;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
    EXPECT_GE(waited, 1000);  // it had to wait for A's lease to expire
    EXPECT_EQ(b.floor_ms(), a_reserved);
    int64_t first_b = 0;
    ASSERT_TRUE(b.run_until([&] { return (first_b = b.issue()) != 0; }, 8000));
    EXPECT_GT(first_b, last_a);
    EXPECT_GT(core::decompose(first_b).ms, a_reserved);
    EXPECT_TRUE(b.shutdown());
}

TEST_F(LeaseLoop, FrozenEtcdFencesThenTheSameIdResumes) {
    Node a(prefix_, "node-a", -1, 5);
    ASSERT_TRUE(a.run_until([&] { return held(a); }, 3000)) << a.lease().last_error;
    const int32_t worker = a.lease().worker;
    ASSERT_TRUE(a.run_until([&] { return a.issue() != 0; }, 3000));
    test::Frozen frozen;
    ASSERT_TRUE(frozen.ok()) << "SNOWFLAKE_TEST_ETCD_PID is not set or the process is gone";
    const int64_t frozen_at = mono_ns();
    // Ids stop at the deadline, at most TTL - margin = 4 s after the last
    // confirmed keepalive, which was sent before the freeze.
    const bool refused = a.run_until([&] { return !core::lease_may_issue(a.lease(), mono_ns()); }, 6000);
    frozen.thaw();
    ASSERT_TRUE(refused);
    EXPECT_LE(a.lease().deadline_ns - frozen_at, int64_t{4000} * 1000000);
    EXPECT_EQ(a.issue(), 0);
    EXPECT_GT(a.lease().failures, 0u);
    // etcd is back: the lease (or a new one) is held again, with the same id.
    ASSERT_TRUE(a.run_until([&] { return held(a); }, 10000)) << a.lease().last_error;
    EXPECT_EQ(a.lease().worker, worker);
    // A mark write that timed out during the freeze may still be applied
    // when etcd resumes: then the mark's revision is not the one this node
    // knows; it gives the id up, leases one again and waits out the
    // reservation (up to the window) to be safe.
    ASSERT_TRUE(a.run_until([&] { return a.issue() != 0; }, 2 * (core::kEtcdMarkWindowMs + 3000))) << a.debug();
    EXPECT_TRUE(a.shutdown());
}

TEST_F(LeaseLoop, ShutdownWithAFrozenEtcdTakesUnderASecond) {
    Node a(prefix_, "node-a", -1, 5);
    ASSERT_TRUE(a.run_until([&] { return held(a); }, 3000)) << a.lease().last_error;
    test::Frozen frozen;
    ASSERT_TRUE(frozen.ok());
    const Clock::time_point t = Clock::now();
    EXPECT_FALSE(a.shutdown());
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
    EXPECT_LT(took, 1000);
    EXPECT_GE(took, 750);  // both calls did wait for etcd
    EXPECT_FALSE(core::lease_may_issue(a.lease(), mono_ns()));
}

}  // namespace
