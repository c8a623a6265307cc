// Unit tests of the lease decisions (src/core/lease.hpp), driven by injected
// monotonic times: the tests play the worker loop and choose every outcome
// etcd would give.

#include "core/generator.hpp"
#include "core/coord_schema.hpp"
#include "core/endpoints.hpp"
#include "core/handover.hpp"
#include "core/lease.hpp"
#include "core/reservation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace snowflake::core;

constexpr int64_t kMs = 1000000;  // ns per ms
constexpr int64_t kS = 1000 * kMs;

LeaseConfig config(int64_t ttl_s, int32_t static_worker = -1) {
    LeaseConfig c;
    c.ttl_ms = ttl_s * 1000;
    c.static_worker = static_worker;
    c.leasing = true;
    c.check_fleet = false;  // the fleet's settings: test/unit/fleet_test.cpp
    return c;
}

// Runs grant, list, claim and mark read at time t, all succeeding; the
// grant is sent at t. Returns the worker held.
int32_t acquire(Lease& l, const LeaseConfig& c, int64_t t, int64_t lease_id = 77,
                const TakenIds& taken = TakenIds{}) {
    EXPECT_EQ(lease::next_step(l, c, t).action, LeaseAction::Grant);
    lease::on_grant_ok(l, c, lease_id, c.ttl_ms, t, t);
    LeaseStep s = lease::next_step(l, c, t);
    if (c.static_worker < 0) {
        EXPECT_EQ(s.action, LeaseAction::ListWorkers);
        EXPECT_GE(lease::choose_worker(l, c, taken, 0), 0);
        s = lease::next_step(l, c, t);
    }
    EXPECT_EQ(s.action, LeaseAction::Claim);
    lease::on_claim_ok(l, c, t);
    EXPECT_EQ(lease::next_step(l, c, t).action, LeaseAction::ReadMark);
    EXPECT_FALSE(lease::may_issue(l, t));  // not before the mark is read
    lease::on_mark_read(l, c, t);
    EXPECT_EQ(l.state, LeaseState::Held);
    return l.worker;
}

// ---------------------------------------------------------------------------
// Margin and deadline

TEST(LeaseFencing, MarginIsOneSecondOrATenthOfTheTtl) {
    EXPECT_EQ(fencing_margin_ms(5000), 1000);
    EXPECT_EQ(fencing_margin_ms(10000), 1000);
    EXPECT_EQ(fencing_margin_ms(30000), 3000);
    EXPECT_EQ(fencing_margin_ms(300000), 30000);
    // Never more than half the TTL (a grant under a second), never negative.
    EXPECT_EQ(fencing_margin_ms(600), 300);
    EXPECT_EQ(fencing_margin_ms(0), 0);
    EXPECT_EQ(fencing_margin_ms(-5), 0);
    EXPECT_GT(fencing_margin_ms(std::numeric_limits<int64_t>::max()), 0);
}

TEST(LeaseFencing, DeadlineCountsFromTheGrantSendTimeNotItsAnswer) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    // Grant sent at 1 s, answered at 1.9 s (slow network).
    lease::on_grant_ok(l, c, 5, 30000, 1 * kS, 1900 * kMs);
    lease::choose_worker(l, c, TakenIds{}, 0);
    lease::on_claim_ok(l, c, 2 * kS);
    lease::on_mark_read(l, c, 2 * kS);
    EXPECT_EQ(l.deadline_ns, 1 * kS + 30 * kS - 3 * kS);
}

TEST(LeaseFencing, IdsStopBeforeTheLeaseCanHaveExpiredInEtcd) {
    const LeaseConfig c = config(10);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    // etcd cannot expire the lease before send time + TTL = 10 s.
    EXPECT_TRUE(lease::may_issue(l, 8999 * kMs));
    EXPECT_FALSE(lease::may_issue(l, 9 * kS));
    EXPECT_FALSE(lease::may_issue(l, 10 * kS));
    // The published-fields form used by backends agrees.
    EXPECT_TRUE(lease::may_issue(l.state, l.deadline_ns, 8999 * kMs));
    EXPECT_FALSE(lease::may_issue(l.state, l.deadline_ns, 9 * kS));
    EXPECT_FALSE(lease::tick(l, c, 8999 * kMs));
    EXPECT_TRUE(lease::tick(l, c, 9 * kS));
    EXPECT_EQ(l.state, LeaseState::Expired);
    EXPECT_FALSE(lease::may_issue(l, 9 * kS));
    EXPECT_NE(std::string(l.last_error).find("ids are refused"), std::string::npos);
}

// The kind of the last failure: a bounded word for metric labels.
TEST(LeaseErrors, EachFailureNamesItsKind) {
    const LeaseConfig c = config(10);
    Lease l = lease::start(c, 0);
    EXPECT_EQ(l.last_error_reason, LeaseError::None);
    lease::on_failure(l, c, LeaseAction::Grant, "connection refused", 0);
    EXPECT_EQ(l.last_error_reason, LeaseError::Grant);
    EXPECT_STREQ(lease::error_name(l.last_error_reason), "grant");
    l = lease::start(c, 0);
    acquire(l, c, 0);
    lease::on_failure(l, c, LeaseAction::KeepAlive, "timeout", 1 * kS);
    EXPECT_STREQ(lease::error_name(l.last_error_reason), "keepalive");
    EXPECT_TRUE(lease::tick(l, c, 9 * kS));
    EXPECT_STREQ(lease::error_name(l.last_error_reason), "deadline_passed");
    lease::on_lease_gone(l, c, 9 * kS);
    EXPECT_STREQ(lease::error_name(l.last_error_reason), "lease_gone");
    for (LeaseError e : {LeaseError::ListWorkers, LeaseError::Claim, LeaseError::ReadMark, LeaseError::Revoke,
                         LeaseError::HeldByOther, LeaseError::PreviousRun}) {
        const std::string name = lease::error_name(e);
        EXPECT_NE(name, "unknown");
        EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << name;
    }
}

TEST(LeaseFencing, AGrantedTtlShorterThanAskedShortensTheDeadline) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 5, 10000, 0, 0);
    EXPECT_EQ(l.deadline_ns, 9 * kS);
    // A longer grant (etcd raises TTLs below its minimum) does not lengthen it.
    Lease m = lease::start(c, 0);
    lease::on_grant_ok(m, c, 5, 60000, 0, 0);
    EXPECT_EQ(m.deadline_ns, 27 * kS);
}

TEST(LeaseFencing, AGrantBelowOneSecondIsUsedAsGranted) {
    // A ZooKeeper ensemble configured with a short minSessionTimeout may
    // grant less than a second: ids must stop within it, not within the
    // one-second floor the settings have.
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 5, 600, 0, 0);
    EXPECT_GT(l.deadline_ns, 0);
    EXPECT_LE(l.deadline_ns, 600 * kMs);
    EXPECT_EQ(l.deadline_ns, 300 * kMs);  // half the session kept as the margin
    EXPECT_LE(l.next_keepalive_ns, 200 * kMs);
}

TEST(LeaseFencing, StaticAlwaysIssuesAndNeverActs) {
    LeaseConfig c = config(30, 7);
    c.leasing = false;
    Lease l = lease::start(c, 0);
    EXPECT_EQ(l.state, LeaseState::Static);
    EXPECT_EQ(l.worker, 7);
    EXPECT_TRUE(lease::may_issue(l, std::numeric_limits<int64_t>::max()));
    EXPECT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Wait);
    EXPECT_FALSE(lease::tick(l, c, std::numeric_limits<int64_t>::max()));
    EXPECT_FALSE(plan_shutdown(l, 0).revoke);
    EXPECT_STREQ(lease::state_name(l.state), "static");
}

TEST(LeaseFencing, NothingIsIssuedWhileAcquiring) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    EXPECT_EQ(l.state, LeaseState::Acquiring);
    EXPECT_FALSE(lease::may_issue(l, 0));
    lease::on_grant_ok(l, c, 5, 30000, 0, 0);
    EXPECT_FALSE(lease::may_issue(l, 0));
}

// ---------------------------------------------------------------------------
// Keepalive

TEST(LeaseKeepalive, DueAThirdOfTheTtlAfterTheConfirmedSend) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    LeaseStep s = lease::next_step(l, c, 1 * kS);
    EXPECT_EQ(s.action, LeaseAction::Wait);
    EXPECT_EQ(s.at_ns, 10 * kS);
    EXPECT_EQ(lease::next_step(l, c, 10 * kS).action, LeaseAction::KeepAlive);
    // Sent at 10 s, confirmed at 10.5 s: the deadline moves to 10 + 27 s.
    lease::on_keepalive_ok(l, c, 10 * kS, 10500 * kMs);
    EXPECT_EQ(l.deadline_ns, 37 * kS);
    EXPECT_EQ(l.renewals, 1u);
    EXPECT_EQ(lease::next_step(l, c, 11 * kS).at_ns, 20 * kS);
}

TEST(LeaseKeepalive, AnOlderConfirmationNeverMovesTheDeadlineBack) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    lease::on_keepalive_ok(l, c, 12 * kS, 12 * kS);
    const int64_t d = l.deadline_ns;
    lease::on_keepalive_ok(l, c, 11 * kS, 13 * kS);
    EXPECT_EQ(l.deadline_ns, d);
}

// ---------------------------------------------------------------------------
// Relayed renewals (ZooKeeper): the leader learns of a renewal from the
// follower that answered it, on its next ping. The deadline counts from the
// newest confirmation sent at least TTL/4 before the last one.

LeaseConfig relayed(int64_t ttl_s) {
    LeaseConfig c = config(ttl_s);
    c.relayed_renewals = true;
    return c;
}

// A lease granted and an id held at 0.
Lease held_since_zero(const LeaseConfig& c) {
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    return l;
}

// Renewals, each sent and confirmed at `at`, each leaving the deadline at
// `deadline`.
struct Renewal {
    int64_t at;
    int64_t deadline;
};
void renew_expecting(Lease& l, const LeaseConfig& c, std::initializer_list<Renewal> renewals) {
    for (const Renewal& r : renewals) {
        lease::on_keepalive_ok(l, c, r.at, r.at);
        EXPECT_EQ(l.deadline_ns, r.deadline) << "after the renewal sent at " << r.at / kMs << " ms";
    }
}

TEST(LeaseRelayed, RenewalsAreDueEveryEighthOfTheTtl) {
    const LeaseConfig c = relayed(8);
    Lease l = held_since_zero(c);
    EXPECT_EQ(lease::next_step(l, c, 100 * kMs).at_ns, 1 * kS);
    EXPECT_EQ(lease::next_step(l, c, 1 * kS).action, LeaseAction::KeepAlive);
    lease::on_keepalive_ok(l, c, 1 * kS, 1100 * kMs);
    EXPECT_EQ(lease::next_step(l, c, 1100 * kMs).at_ns, 2 * kS);
}

TEST(LeaseRelayed, TheLastConfirmationDoesNotMoveTheDeadline) {
    // TTL 8 s, margin 1 s, relay window 2 s. A follower cut off from the
    // leader right after answering the renewal sent at 4 s leaves the leader
    // counting from one it relayed before: the deadline must not be 4 + 7 s.
    const LeaseConfig c = relayed(8);
    Lease l = held_since_zero(c);
    EXPECT_EQ(l.deadline_ns, 7 * kS);  // the session's creation counts at once
    renew_expecting(l, c, {{1 * kS, 7 * kS},
                           {2 * kS, 7 * kS},
                           {3 * kS, 8 * kS},    // 1 s is 2 s before: it counts
                           {4 * kS, 9 * kS}});
    EXPECT_TRUE(lease::may_issue(l, 9 * kS - 1));
    EXPECT_FALSE(lease::may_issue(l, 9 * kS));
    // etcd's leader renews on receipt: there the last one counts.
    const LeaseConfig d = config(8);
    Lease e = held_since_zero(d);
    renew_expecting(e, d, {{4 * kS, 11 * kS}});
}

TEST(LeaseRelayed, IrregularRenewalsCountTheNewestOneOldEnough) {
    const LeaseConfig c = relayed(8);
    Lease l = held_since_zero(c);
    renew_expecting(l, c, {{1 * kS, 7 * kS},
                           {1500 * kMs, 7 * kS},
                           {4 * kS, 8500 * kMs},  // 1 s and 1.5 s are both 2 s before it
                           {5 * kS, 8500 * kMs},  // 4 s is not: unchanged
                           {6 * kS, 11 * kS}});
}

TEST(LeaseRelayed, TheDeadlineNeverPassesTheWindowNorMovesBack) {
    // Confirmations at uneven gaps, some far closer together than the eight
    // kept: the deadline only grows, and never counts from a send less than
    // the window before the last confirmed one (except the session's creation).
    const LeaseConfig c = relayed(8);
    Lease l = held_since_zero(c);
    const int64_t window = 2 * kS;
    int64_t t = 0;
    int64_t last_deadline = l.deadline_ns;
    uint32_t x = 12345;
    for (int i = 0; i < 2000; i++) {
        x = x * 1103515245u + 12345u;
        t += (x >> 8) % 4 == 0 ? int64_t{(x >> 12) % 2500} * kMs : int64_t{(x >> 12) % 40 + 1} * kMs;
        lease::on_keepalive_ok(l, c, t, t);
        ASSERT_GE(l.deadline_ns, last_deadline);
        // (the session's creation, at 0, counts at once)
        ASSERT_LE(l.deadline_ns, std::max(7 * kS, t - window + 7 * kS)) << i;
        last_deadline = l.deadline_ns;
    }
    // Renewals every TTL/8 again: the deadline catches up with the rule.
    for (int i = 0; i < 4; i++) {
        t += 1 * kS;
        lease::on_keepalive_ok(l, c, t, t);
    }
    EXPECT_EQ(l.deadline_ns, t - window + 7 * kS);
}

TEST(LeaseRelayed, ANewSessionCountsFromItsCreation) {
    const LeaseConfig c = relayed(8);
    Lease l = held_since_zero(c);
    for (int s = 1; s <= 5; s++) lease::on_keepalive_ok(l, c, s * kS, s * kS);
    lease::on_lease_gone(l, c, 6 * kS);
    lease::on_grant_ok(l, c, 78, 8000, 7 * kS, 7 * kS);
    EXPECT_EQ(l.deadline_ns, 14 * kS);
    lease::on_keepalive_ok(l, c, 8 * kS, 8 * kS);  // not the old session's sends
    EXPECT_EQ(l.deadline_ns, 14 * kS);
}

TEST(LeaseKeepalive, FailuresRetryFasterWithBackoffUntilTheDeadline) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    int64_t t = 10 * kS;
    std::vector<int64_t> gaps;
    while (true) {
        lease::tick(l, c, t);
        if (l.state != LeaseState::Held) break;
        const LeaseStep s = lease::next_step(l, c, t);
        if (s.action != LeaseAction::KeepAlive) {
            ASSERT_EQ(s.action, LeaseAction::Wait);
            ASSERT_GT(s.at_ns, t);  // never a busy loop
            t = s.at_ns;
            continue;
        }
        lease::on_failure(l, c, LeaseAction::KeepAlive, "connection refused to http://127.0.0.1:1", t);
        gaps.push_back(l.next_keepalive_ns - t);
        EXPECT_TRUE(lease::may_issue(l, t));  // still inside the deadline
    }
    EXPECT_EQ(l.state, LeaseState::Expired);
    EXPECT_EQ(t, 27 * kS);
    EXPECT_FALSE(lease::may_issue(l, t));
    ASSERT_GE(gaps.size(), 5u);
    EXPECT_EQ(gaps[0], 250 * kMs);
    EXPECT_EQ(gaps[1], 500 * kMs);
    EXPECT_EQ(gaps[2], 1000 * kMs);
    EXPECT_EQ(gaps.back(), 5 * kS);  // capped at TTL/6
    EXPECT_EQ(l.failures, gaps.size());
}

TEST(LeaseKeepalive, RetryDelayBounds) {
    EXPECT_EQ(lease::retry_delay_ns(1, 5000), 250 * kMs);
    EXPECT_EQ(lease::retry_delay_ns(2, 5000), 500 * kMs);
    EXPECT_EQ(lease::retry_delay_ns(3, 5000), 833 * kMs);  // TTL/6
    EXPECT_EQ(lease::retry_delay_ns(1000, 5000), 833 * kMs);
    EXPECT_EQ(lease::retry_delay_ns(0, 5000), 250 * kMs);
    EXPECT_EQ(lease::retry_delay_ns(-1, 5000), 250 * kMs);
    EXPECT_EQ(lease::retry_delay_ns(std::numeric_limits<int32_t>::max(), 300000), 50 * kS);
}

TEST(LeaseKeepalive, ConfirmedAfterTheDeadlineResumesTheSameIdOnTheSameLease) {
    const LeaseConfig c = config(10);
    Lease l = lease::start(c, 0);
    const int32_t w = acquire(l, c, 0);
    lease::tick(l, c, 9 * kS);
    ASSERT_EQ(l.state, LeaseState::Expired);
    // etcd was slow but the lease lived: a keepalive sent at 9.5 s is confirmed.
    ASSERT_EQ(lease::next_step(l, c, 9500 * kMs).action, LeaseAction::KeepAlive);
    lease::on_keepalive_ok(l, c, 9500 * kMs, 9600 * kMs);
    EXPECT_EQ(l.state, LeaseState::Held);
    EXPECT_EQ(l.worker, w);
    EXPECT_TRUE(lease::may_issue(l, 9600 * kMs));
}

TEST(LeaseKeepalive, LeaseGoneRefusesAtOnceAndReacquiresTheSameIdIfFree) {
    const LeaseConfig c = config(10);
    Lease l = lease::start(c, 0);
    TakenIds taken;
    taken_add(taken, 0);
    taken_add(taken, 1);
    const int32_t w = acquire(l, c, 0, 77, taken);
    ASSERT_EQ(w, 2);
    lease::on_lease_gone(l, c, 3 * kS);  // keepalive answered TTL 0
    EXPECT_EQ(l.state, LeaseState::Expired);
    EXPECT_FALSE(lease::may_issue(l, 3 * kS));
    EXPECT_EQ(l.lease_id, 0);
    EXPECT_EQ(l.worker, -1);
    EXPECT_NE(std::string(l.last_error).find("no longer exists"), std::string::npos);
    // Reacquire: a new grant, and id 2 again even though 0 and 1 became free.
    ASSERT_EQ(lease::next_step(l, c, 3 * kS).action, LeaseAction::Grant);
    lease::on_grant_ok(l, c, 78, 10000, 3 * kS, 3 * kS);
    ASSERT_EQ(lease::next_step(l, c, 3 * kS).action, LeaseAction::ListWorkers);
    EXPECT_EQ(lease::choose_worker(l, c, TakenIds{}, 5), 2);
    lease::on_claim_ok(l, c, 3 * kS);
    lease::on_mark_read(l, c, 3 * kS);
    EXPECT_EQ(l.state, LeaseState::Held);
    EXPECT_EQ(l.worker, 2);
    EXPECT_EQ(l.deadline_ns, 12 * kS);
}

TEST(LeaseKeepalive, LeaseGoneNamesTheLeaseAndTheCoordinator) {
    const LeaseConfig c = config(10);
    Lease a = lease::start(c, 0);
    acquire(a, c, 0, 77, TakenIds{});
    lease::on_lease_gone(a, c, 3 * kS);  // no names given: the lease id, "the coordinator"
    EXPECT_STREQ(a.last_error, "lease 77 no longer exists in the coordinator: the worker id it held is lost");
    Lease z = lease::start(c, 0);
    acquire(z, c, 0, 77, TakenIds{});
    lease::on_lease_gone(z, c, 3 * kS, "session 0x4d", "ZooKeeper");
    EXPECT_STREQ(z.last_error, "session 0x4d no longer exists in ZooKeeper: the worker id it held is lost");
    EXPECT_EQ(z.last_error_reason, LeaseError::LeaseGone);
}

TEST(LeaseKeepalive, PreviousIdTakenMeanwhileFallsBackToAnother) {
    const LeaseConfig c = config(10);
    Lease l = lease::start(c, 0);
    TakenIds taken;
    taken_add(taken, 0);
    acquire(l, c, 0, 77, taken);
    ASSERT_EQ(l.worker, 1);
    lease::on_lease_gone(l, c, kS);
    lease::on_grant_ok(l, c, 78, 10000, kS, kS);
    TakenIds now_taken;
    taken_add(now_taken, 1);
    EXPECT_EQ(lease::choose_worker(l, c, now_taken, 0), 0);
}

TEST(LeaseKeepalive, ExpiryThroughFailuresThenEtcdReturns) {
    const LeaseConfig c = config(5);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    int64_t t = 0;
    // etcd unreachable from the start: every keepalive fails, ids stop at 4 s.
    while (t < 20 * kS) {
        lease::tick(l, c, t);
        const LeaseStep s = lease::next_step(l, c, t);
        if (s.action == LeaseAction::KeepAlive) {
            lease::on_failure(l, c, s.action, "timed out after 1000 ms", t + kS);
            t += kS;
        } else {
            ASSERT_EQ(s.action, LeaseAction::Wait);
            ASSERT_GT(s.at_ns, t);
            t = s.at_ns;
        }
        EXPECT_EQ(lease::may_issue(l, t), t < 4 * kS);
    }
    EXPECT_EQ(l.state, LeaseState::Expired);
    // etcd is back; the lease expired there long ago: TTL 0.
    const LeaseStep s = lease::next_step(l, c, t + 10 * kS);
    ASSERT_EQ(s.action, LeaseAction::KeepAlive);
    lease::on_lease_gone(l, c, t);
    const int32_t w = acquire(l, c, t);
    EXPECT_EQ(w, 0);
    EXPECT_TRUE(lease::may_issue(l, t));
}

TEST(LeaseKeepalive, ALateAnswerNeverMakesKeepalivesBusyLoop) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    // Sent at 10 s, answered at 25 s: the next one is due by send time (20 s),
    // which has passed, but not before 25.1 s.
    lease::on_keepalive_ok(l, c, 10 * kS, 25 * kS);
    EXPECT_EQ(lease::next_step(l, c, 25 * kS).action, LeaseAction::Wait);
    EXPECT_EQ(lease::next_step(l, c, 25100 * kMs).action, LeaseAction::KeepAlive);
}

// ---------------------------------------------------------------------------
// Acquisition

TEST(LeaseAcquire, GrantFailureBacksOff) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Grant);
    lease::on_failure(l, c, LeaseAction::Grant, "connection refused to http://127.0.0.1:2379", 0);
    EXPECT_STREQ(l.last_error, "connection refused to http://127.0.0.1:2379");
    const LeaseStep s = lease::next_step(l, c, 0);
    EXPECT_EQ(s.action, LeaseAction::Wait);
    EXPECT_EQ(s.at_ns, 250 * kMs);
    EXPECT_EQ(lease::next_step(l, c, 250 * kMs).action, LeaseAction::Grant);
    EXPECT_EQ(l.state, LeaseState::Acquiring);
    EXPECT_EQ(l.failures, 1u);
}

TEST(LeaseAcquire, StaticIdTakenByAnotherNodeNamesItAndRetries) {
    const LeaseConfig c = config(30, 42);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    LeaseStep s = lease::next_step(l, c, 0);
    ASSERT_EQ(s.action, LeaseAction::Claim);  // no list for a static id
    EXPECT_EQ(l.candidate, 42);
    NodeIdentity other;
    other.host = "db2";
    other.port = 5433;
    other.system_identifier = 7312345678901234567ULL;
    other.started_unix_ms = 1764560687000;  // 2025-12-01 03:44:47 UTC
    lease::on_claim_taken(l, c, encode_node_identity(other), 1234, 0);
    EXPECT_TRUE(l.taken_by_other);
    EXPECT_EQ(l.state, LeaseState::Acquiring);
    EXPECT_FALSE(lease::may_issue(l, 0));
    EXPECT_STREQ(l.last_error,
                 "worker id 42 is held by another node: host db2 port 5433 (system identifier "
                 "7312345678901234567, started 2025-12-01 03:44:47 UTC)");
    s = lease::next_step(l, c, 0);
    EXPECT_EQ(s.action, LeaseAction::Wait);
    EXPECT_GT(s.at_ns, 0);
    // The other node's lease expired: the retry claims it.
    s = lease::next_step(l, c, s.at_ns);
    ASSERT_EQ(s.action, LeaseAction::Claim);
    EXPECT_EQ(l.candidate, 42);
    lease::on_claim_ok(l, c, kS);
    lease::on_mark_read(l, c, kS);
    EXPECT_EQ(l.state, LeaseState::Held);
    EXPECT_EQ(l.worker, 42);
    EXPECT_FALSE(l.taken_by_other);
}

// Issue 17, as issue 28 (finding 4) left it: a lease of this very instance
// that holds the id (an earlier lease of this run, whose release was lost)
// is revoked and the id claimed at once; a previous run of the node (another
// instance) is a holder like any other with the same name: never revoked on
// it (test/unit/instance_test.cpp).
TEST(LeaseAcquire, AnEarlierLeaseOfThisRunIsRevokedNotWaitedOut) {
    const LeaseConfig c = config(30, 42);
    NodeIdentity me;
    me.host = "db1";
    me.port = 5432;
    me.system_identifier = 7312345678901234567ULL;
    me.instance = "8b7d0e11aa22bb33cc44dd55ee66ff00";
    me.started_unix_ms = 2000;
    me.data_directory = "/var/lib/postgresql/15/main";
    NodeIdentity earlier = me;
    earlier.lease_ttl_ms = 30000;

    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Claim);
    lease::on_claim_taken(l, c, encode_node_identity(earlier), 1234, 0, encode_node_identity(me));
    EXPECT_FALSE(l.taken_by_other);
    EXPECT_EQ(l.revoke_lease, 1234);
    EXPECT_STREQ(l.last_error,
                 "worker id 42 is held by an earlier lease of this run (lease 1234): revoking that lease");
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Revoke);  // at once
    lease::on_revoked(l, 0);
    EXPECT_EQ(l.revoke_lease, 0);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Claim);
    EXPECT_EQ(l.candidate, 42);

    // A failed revoke is retried after the usual delay, still before a claim.
    lease::on_claim_taken(l, c, encode_node_identity(earlier), 1234, 0, encode_node_identity(me));
    lease::on_failure(l, c, LeaseAction::Revoke, "timed out", 0);
    EXPECT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Wait);
    EXPECT_EQ(lease::next_step(l, c, kS).action, LeaseAction::Revoke);

    // Not this run: another instance (or none recorded) with the same name,
    // or another data directory, port, host or system identifier. None is
    // revoked.
    for (int differ = 0; differ < 6; differ++) {
        NodeIdentity other = earlier;
        other.instance = "3f9a1c2e00112233445566778899aabb";
        if (differ == 0) other.data_directory = "/srv/other";
        if (differ == 1) other.port = 5433;
        if (differ == 2) other.host = "db2";
        if (differ == 3) other.system_identifier++;
        if (differ == 4) other.data_directory.clear();
        if (differ == 5) other.instance.clear();
        Lease o = lease::start(c, 0);
        lease::on_grant_ok(o, c, 9, 30000, 0, 0);
        lease::on_claim_taken(o, c, encode_node_identity(other), 1234, 0, encode_node_identity(me));
        EXPECT_TRUE(o.taken_by_other) << differ;
        EXPECT_EQ(o.revoke_lease, 0) << differ;
    }
}

TEST(NodeIdentity, CarriesTheInstanceAndReadsOlderValuesWithout) {
    NodeIdentity n;
    n.host = "db1";
    n.port = 5432;
    n.system_identifier = 1;
    n.instance = "00ff";
    n.started_unix_ms = 2;
    n.data_directory = "/srv/pg data";
    n.lease_ttl_ms = 30000;
    const std::string text = encode_node_identity(n);
    EXPECT_EQ(text, "snowflake-node host=db1 port=5432 system_identifier=1 instance=00ff started_unix_ms=2 "
                    "data_directory=/srv/pg_data lease_ttl_ms=30000");
    NodeIdentity back;
    ASSERT_TRUE(decode_node_identity(text, &back));
    EXPECT_EQ(back.data_directory, "/srv/pg_data");
    EXPECT_EQ(back.instance, "00ff");
    EXPECT_EQ(back.lease_ttl_ms, 30000);
    EXPECT_EQ(classify_holder(back, back), HolderKind::ThisRun);
    // A 1.2 node's key (no instance, no TTL), and a 1.1 node's (no data
    // directory either): read; never this run, at most the same name.
    ASSERT_TRUE(decode_node_identity(
        "snowflake-node host=db1 port=5432 system_identifier=1 started_unix_ms=2 data_directory=/srv/pg_data",
        &back));
    EXPECT_EQ(back.instance, "");
    EXPECT_EQ(back.lease_ttl_ms, 0);
    NodeIdentity me = back;
    me.instance = "00ff";
    EXPECT_EQ(classify_holder(back, me), HolderKind::SameName);
    ASSERT_TRUE(decode_node_identity(
        "snowflake-node host=db1 port=5432 system_identifier=1 started_unix_ms=2", &back));
    EXPECT_EQ(back.data_directory, "");
    EXPECT_EQ(classify_holder(back, back), HolderKind::Other) << "no data directory, no instance: another node";
    for (const char* bad : {"snowflake-node host=h port=1 system_identifier=2 started_unix_ms=3 instance=",
                            "snowflake-node host=h port=1 system_identifier=2 started_unix_ms=3 lease_ttl_ms=0",
                            "snowflake-node host=h port=1 system_identifier=2 started_unix_ms=3 lease_ttl_ms=x"})
        EXPECT_FALSE(decode_node_identity(bad, &back)) << bad;
    const unsigned char random[16] = {0x00, 0x01, 0xab, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};
    EXPECT_EQ(random_instance(random), "0001abff000000000000000000000010");
}

TEST(LeaseAcquire, TakenByOurOwnLeaseIsALostClaimAnswer) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    lease::choose_worker(l, c, TakenIds{}, 0);
    lease::on_failure(l, c, LeaseAction::Claim, "timed out after 1000 ms", 0);
    ASSERT_EQ(lease::next_step(l, c, kS).action, LeaseAction::Claim);
    lease::on_claim_taken(l, c, "whatever", 9, kS);
    EXPECT_EQ(l.worker, 0);
    EXPECT_EQ(lease::next_step(l, c, kS).action, LeaseAction::ReadMark);
}

TEST(LeaseAcquire, ContentionRotatesToOtherIds) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    TakenIds taken;
    EXPECT_EQ(lease::choose_worker(l, c, taken, 999), 0);  // lowest free first
    lease::on_claim_taken(l, c, "snowflake-node host=a port=1 system_identifier=1 started_unix_ms=1",
                         10, 0);
    EXPECT_EQ(l.contention, 1);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::ListWorkers);  // at once
    // The re-read did not show the winner (say it is slow): we still move on,
    // among 2, 4, ... 32 ids after the one lost.
    for (int32_t lost = 1; lost <= 7; lost++) {
        l.contention = lost;
        l.rotate_from = 1;
        std::set<int32_t> tried;
        for (uint32_t r = 0; r < 256; r++) {
            Lease copy = l;
            const int32_t w = lease::choose_worker(copy, c, taken, r);
            EXPECT_GE(w, 1);
            tried.insert(w);
        }
        const size_t spread = lost >= 5 ? 32u : size_t{1} << lost;
        EXPECT_EQ(tried.size(), spread) << lost;
        EXPECT_EQ(*tried.rbegin(), static_cast<int32_t>(spread));
    }
}

TEST(LeaseAcquire, ManyLostClaimsBackOffInsteadOfSpinning) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    int64_t t = 0;
    for (int i = 0; i < 20; i++) {
        LeaseStep s = lease::next_step(l, c, t);
        for (int guard = 0; guard < 10 && s.action != LeaseAction::ListWorkers; guard++) {
            if (s.action == LeaseAction::Wait) {
                ASSERT_GT(s.at_ns, t);
                t = s.at_ns;
            } else {
                ASSERT_EQ(s.action, LeaseAction::KeepAlive);  // the lease is kept meanwhile
                lease::on_keepalive_ok(l, c, t, t);
            }
            s = lease::next_step(l, c, t);
        }
        ASSERT_EQ(s.action, LeaseAction::ListWorkers);
        lease::choose_worker(l, c, TakenIds{}, static_cast<uint32_t>(i));
        lease::on_claim_taken(l, c, "x", 10, t);
    }
    EXPECT_GT(t, 0);
    EXPECT_EQ(l.failures, 0u);  // contention is not a failure
}

TEST(LeaseAcquire, AllIdsTaken) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    TakenIds taken;
    for (int32_t w = 0; w <= kMaxWorker; w++) taken_add(taken, w);
    EXPECT_EQ(lease::choose_worker(l, c, taken, 0), -1);
    EXPECT_EQ(l.candidate, -1);
    lease::on_failure(l, c, LeaseAction::ListWorkers, "all 1024 worker ids are taken", 0);
    EXPECT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Wait);
    EXPECT_EQ(lease::next_step(l, c, 250 * kMs).action, LeaseAction::ListWorkers);
}

TEST(LeaseAcquire, HighestIdAndWrapAround) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    TakenIds taken;
    for (int32_t w = 0; w < kMaxWorker; w++) taken_add(taken, w);
    EXPECT_EQ(lease::choose_worker(l, c, taken, 0), kMaxWorker);
    l.rotate_from = kMaxWorker;
    TakenIds t2;
    taken_add(t2, kMaxWorker);
    EXPECT_EQ(lease::choose_worker(l, c, t2, 0), 0);  // wraps
}

TEST(LeaseAcquire, TakenIdsIgnoreOutOfRange) {
    TakenIds t;
    taken_add(t, -1);
    taken_add(t, kMaxWorker + 1);
    for (int32_t w = 0; w <= kMaxWorker; w++) EXPECT_FALSE(taken_has(t, w));
    EXPECT_TRUE(taken_has(t, -1));  // never chosen
    EXPECT_TRUE(taken_has(t, kMaxWorker + 1));
}

TEST(LeaseAcquire, KeepaliveIsKeptWhileAcquisitionIsSlow) {
    const LeaseConfig c = config(6);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 6000, 0, 0);
    lease::choose_worker(l, c, TakenIds{}, 0);
    lease::on_failure(l, c, LeaseAction::Claim, "timed out after 1000 ms", 1 * kS);
    lease::on_failure(l, c, LeaseAction::Claim, "timed out after 1000 ms", 2 * kS);
    // The keepalive (due at 2 s) comes before the claim retry.
    EXPECT_EQ(lease::next_step(l, c, 2 * kS).action, LeaseAction::KeepAlive);
}

// ---------------------------------------------------------------------------
// Shutdown

TEST(LeaseShutdown, StopsIssuingAndHandsOverWhileHeld) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    lease::on_shutdown(l);
    EXPECT_FALSE(lease::may_issue(l, kS));
    EXPECT_EQ(lease::next_step(l, c, kS).action, LeaseAction::Wait);
    const ShutdownPlan p = plan_shutdown(l, kS);
    EXPECT_TRUE(p.write_exact_mark);
    EXPECT_TRUE(p.revoke);
}

TEST(LeaseShutdown, AfterTheDeadlineOnlyRevokes) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    acquire(l, c, 0);
    lease::tick(l, c, 27 * kS);
    lease::on_shutdown(l);
    const ShutdownPlan p = plan_shutdown(l, 27 * kS);
    EXPECT_FALSE(p.write_exact_mark);
    EXPECT_TRUE(p.revoke);
}

TEST(LeaseShutdown, NothingHeldNothingToDo) {
    const LeaseConfig c = config(30);
    Lease l = lease::start(c, 0);
    lease::on_shutdown(l);
    const ShutdownPlan p = plan_shutdown(l, 0);
    EXPECT_FALSE(p.write_exact_mark);
    EXPECT_FALSE(p.revoke);
}

// ---------------------------------------------------------------------------
// Marks and hand-over

TEST(LeaseMarks, HandoverStartsAboveBothMarks) {
    Handover h = plan_handover(Mark{1000, true}, 1000, Mark{5000, false}, kCoordMarkWindowMs);
    EXPECT_EQ(h.floor_ms, 5000);
    // Renewed from its old end with less than half left, the etcd mark lies
    // up to 1.5 windows past its writer's clock: a restart after a crash
    // waits that out, not SF001 (issue 22, for the etcd mark).
    EXPECT_EQ(h.grace_ms, kCoordMarkWindowMs * 3 / 2);
    h = plan_handover(Mark{9000, false}, 1000, Mark{5000, true}, kCoordMarkWindowMs);
    EXPECT_EQ(h.floor_ms, 9000);
    EXPECT_EQ(h.grace_ms, 1000);
    h = plan_handover(Mark{-1, false}, 1000, Mark{7000, true}, kCoordMarkWindowMs);
    EXPECT_EQ(h.floor_ms, 7000);
    EXPECT_EQ(h.grace_ms, 0);
    h = plan_handover(Mark{-1, false}, 1000, Mark{-1, false}, kCoordMarkWindowMs);
    EXPECT_EQ(h.floor_ms, -1);
    EXPECT_EQ(h.grace_ms, 0);
    h = plan_handover(Mark{4000, false}, 1000, Mark{4000, true}, kCoordMarkWindowMs);
    EXPECT_EQ(h.floor_ms, 4000);
    EXPECT_EQ(h.grace_ms, 1000);
}

TEST(LeaseMarks, HandoverSaysWhichMarkIsTheFloor) {
    // SF001's detail names the floor's source: the coordinator's mark only
    // when it is above the local one (a tie is this node's own mark).
    EXPECT_TRUE(plan_handover(Mark{1000, true}, 1000, Mark{5000, false}, kCoordMarkWindowMs).from_coordinator);
    EXPECT_FALSE(plan_handover(Mark{9000, false}, 1000, Mark{5000, true}, kCoordMarkWindowMs).from_coordinator);
    EXPECT_FALSE(plan_handover(Mark{4000, false}, 1000, Mark{4000, true}, kCoordMarkWindowMs).from_coordinator);
    EXPECT_FALSE(plan_handover(Mark{-1, false}, 1000, Mark{-1, false}, kCoordMarkWindowMs).from_coordinator);
    // The process's own reservation, not waited out: the local mark counts.
    EXPECT_FALSE(
        plan_handover(Mark{1000, true}, 1000, Mark{6000, false}, kCoordMarkWindowMs, true).from_coordinator);
}

TEST(LeaseMarks, OwnReservationIsNotWaitedOut) {
    // The process held worker 3, issued up to 1000, reserved up to 6000 in
    // etcd, lost the lease and got worker 3 back with the mark untouched.
    Handover h = plan_handover(Mark{1000, true}, 1000, Mark{6000, false}, kCoordMarkWindowMs, true);
    EXPECT_EQ(h.floor_ms, 1000);
    EXPECT_EQ(h.grace_ms, 0);
    // Someone else wrote it meanwhile: their reservation counts.
    h = plan_handover(Mark{1000, true}, 1000, Mark{6000, false}, kCoordMarkWindowMs, false);
    EXPECT_EQ(h.floor_ms, 6000);
}

// The etcd reservation as the lease driver keeps it for a busy node (a
// caller asks for the current millisecond whenever it is not covered).
int64_t renewed(int64_t coord_reserved, int64_t now) {
    const ReservationPlan p = plan_reservation(now, coord_reserved, now, kCoordMarkWindowMs);
    return p.write ? p.until_ms : coord_reserved;
}

// Node A holds worker 3 with a clock 60 s ahead of node B's. A stops (or
// crashes); B takes worker 3 over. No id of B may equal one of A's.
TEST(LeaseMarks, HandoverWithDisagreeingClocksNeverReissues) {
    const int32_t worker = 3;
    const Config cfg{worker, 0};
    for (bool clean : {true, false}) {
        SCOPED_TRACE(clean ? "clean shutdown" : "crash");
        // Node A: issues at its clock 100000..100999 under an etcd reservation.
        GeneratorState a = state_after(-1);
        int64_t coord_reserved = -1;
        int64_t a_last = -1;
        std::set<int64_t> a_ids;
        for (int64_t now = 100000; now < 101000; now++) {
            coord_reserved = renewed(coord_reserved, now);
            a.reserved_until_ms = issue_limit_ms(kMaxMs, coord_reserved);
            const Next n = next_id(a, now, cfg);
            ASSERT_EQ(n.status, Status::Issued);
            a_ids.insert(n.first_id);
            a_last = now;
        }
        EXPECT_GE(coord_reserved, a_last);
        const Mark etcd = clean ? exact_shutdown_mark(a.last_ms) : Mark{coord_reserved, false};
        Mark decoded;
        ASSERT_TRUE(decode_coord_mark(encode_coord_mark(etcd), &decoded));

        // Node B: its clock reads 60 s less; its local mark knows nothing.
        const Handover h = plan_handover(Mark{-1, false}, 1000, decoded, kCoordMarkWindowMs);
        GeneratorState b = state_after(h.floor_ms, h.grace_ms);
        b.reserved_until_ms = issue_limit_ms(kMaxMs, h.floor_ms);
        const Next refused = next_id(b, 41000, cfg);
        EXPECT_NE(refused.status, Status::Issued);  // B's clock is behind A's ids
        // Once B's clock passes the floor, B issues, always above A's ids.
        int64_t b_reserved = h.floor_ms;
        int issued = 0;
        for (int64_t now = h.floor_ms - 10; now < h.floor_ms + 2000; now++) {
            b_reserved = renewed(b_reserved, now);
            b.reserved_until_ms = issue_limit_ms(kMaxMs, b_reserved);
            const Next n = next_id(b, now, cfg);
            if (n.status != Status::Issued) continue;
            issued++;
            EXPECT_EQ(a_ids.count(n.first_id), 0u);
            EXPECT_GT(n.first_id, *a_ids.rbegin());
        }
        EXPECT_GT(issued, 1000);
    }
}

TEST(LeaseMarks, IssueLimitIsTheSmallerReservation) {
    EXPECT_EQ(issue_limit_ms(100, 200), 100);
    EXPECT_EQ(issue_limit_ms(300, 200), 200);
    EXPECT_EQ(issue_limit_ms(kMaxMs, -1), -1);
    GeneratorState s = state_after(-1);
    s.reserved_until_ms = issue_limit_ms(kMaxMs, 50);
    EXPECT_EQ(next_id(s, 51, Config{1, 0}).status, Status::NeedReservation);
    EXPECT_EQ(next_id(s, 50, Config{1, 0}).status, Status::Issued);
}

TEST(LeaseMarks, ExactShutdownMark) {
    EXPECT_EQ(exact_shutdown_mark(1234).ms, 1234);
    EXPECT_TRUE(exact_shutdown_mark(1234).clean);
    EXPECT_EQ(exact_shutdown_mark(-5).ms, -1);
    EXPECT_EQ(exact_shutdown_mark(kMaxMs + 5).ms, kMaxMs);
}

TEST(LeaseMarks, CoordMarkText) {
    EXPECT_EQ(encode_coord_mark(Mark{1234, false}), "1234 reserved");
    EXPECT_EQ(encode_coord_mark(Mark{1234, true}), "1234 exact");
    Mark m;
    ASSERT_TRUE(decode_coord_mark("-1 exact", &m));
    EXPECT_EQ(m.ms, -1);
    ASSERT_TRUE(decode_coord_mark(std::to_string(kMaxMs) + " reserved", &m));
    EXPECT_EQ(m.ms, kMaxMs);
    EXPECT_FALSE(m.clean);
    for (const char* bad : {"", "1234", "1234 ", " 1234 exact", "1234 exact ", "1234  exact",
                            "01 exact", "-2 exact", "x exact", "1234 EXACT", "99999999999999999999 exact",
                            "2199023255552 exact", "-0x1 exact"}) {
        EXPECT_FALSE(decode_coord_mark(bad, &m)) << bad;
    }
}

// ---------------------------------------------------------------------------
// Keys, identity, endpoints

TEST(LeaseKeys, BuildAndParse) {
    EXPECT_EQ(worker_key("/snowflake", 7), "/snowflake/workers/7");
    EXPECT_EQ(mark_key("/snowflake", 7), "/snowflake/marks/7");
    EXPECT_EQ(workers_prefix("/a/b"), "/a/b/workers/");
    EXPECT_EQ(parse_worker_key("/snowflake", "/snowflake/workers/0"), 0);
    EXPECT_EQ(parse_worker_key("/snowflake", "/snowflake/workers/1023"), 1023);
    for (const char* bad : {"/snowflake/workers/1024", "/snowflake/workers/-1", "/snowflake/workers/",
                            "/snowflake/workers/07", "/snowflake/workers/7/x", "/snowflake/marks/7",
                            "/other/workers/7", "/snowflake/workers/ 7", ""}) {
        EXPECT_EQ(parse_worker_key("/snowflake", bad), -1) << bad;
    }
}

TEST(LeaseKeys, Prefix) {
    std::string why;
    EXPECT_TRUE(check_lease_prefix("/snowflake", &why));
    EXPECT_TRUE(check_lease_prefix("/a/b-c_d", &why));
    EXPECT_FALSE(check_lease_prefix("", &why));
    EXPECT_FALSE(check_lease_prefix("snowflake", &why));
    EXPECT_EQ(why, "The prefix must start with \"/\".");
    EXPECT_FALSE(check_lease_prefix("/", &why));
    EXPECT_FALSE(check_lease_prefix("/snowflake/", &why));
    EXPECT_FALSE(check_lease_prefix("/snow flake", &why));
    EXPECT_FALSE(check_lease_prefix("/snow\nflake", &why));
    EXPECT_FALSE(check_lease_prefix("/" + std::string(200, 'a'), &why));
}

TEST(LeaseIdentity, RoundTrip) {
    NodeIdentity n;
    n.host = "db-1.example.org";
    n.port = 5432;
    n.system_identifier = std::numeric_limits<uint64_t>::max();
    n.started_unix_ms = -1;
    const std::string text = encode_node_identity(n);
    EXPECT_EQ(text,
              "snowflake-node host=db-1.example.org port=5432 system_identifier=18446744073709551615 "
              "started_unix_ms=-1");
    NodeIdentity back;
    ASSERT_TRUE(decode_node_identity(text, &back));
    EXPECT_EQ(back.host, n.host);
    EXPECT_EQ(back.port, n.port);
    EXPECT_EQ(back.system_identifier, n.system_identifier);
    EXPECT_EQ(back.started_unix_ms, n.started_unix_ms);
}

TEST(LeaseIdentity, HostIsSanitized) {
    NodeIdentity n;
    n.host = "a b\nc\x80";
    n.port = 1;
    NodeIdentity back;
    ASSERT_TRUE(decode_node_identity(encode_node_identity(n), &back));
    EXPECT_EQ(back.host, "a_b_c_");
    n.host = "";
    ASSERT_TRUE(decode_node_identity(encode_node_identity(n), &back));
    EXPECT_EQ(back.host, "unknown");
}

TEST(LeaseIdentity, UnknownFieldsAreIgnoredBadOnesRejected) {
    NodeIdentity n;
    EXPECT_TRUE(decode_node_identity(
        "snowflake-node host=h port=1 pid=42 system_identifier=2 started_unix_ms=3", &n));
    EXPECT_EQ(n.host, "h");
    for (const char* bad : {
             "", "snowflake-node", "node host=h port=1 system_identifier=2 started_unix_ms=3",
             "snowflake-node host=h port=0 system_identifier=2 started_unix_ms=3",
             "snowflake-node host=h port=65536 system_identifier=2 started_unix_ms=3",
             "snowflake-node host= port=1 system_identifier=2 started_unix_ms=3",
             "snowflake-node host=h port=1 system_identifier=-2 started_unix_ms=3",
             "snowflake-node host=h port=1 system_identifier=18446744073709551616 started_unix_ms=3",
             "snowflake-node host=h port=1 system_identifier=2",
             "snowflake-node host=h host=i port=1 system_identifier=2 started_unix_ms=3",
             "snowflake-node  host=h port=1 system_identifier=2 started_unix_ms=3",
             "snowflake-node host=h port=1 =x system_identifier=2 started_unix_ms=3",
             "snowflake-node host=h port=1 junk system_identifier=2 started_unix_ms=3",
         }) {
        EXPECT_FALSE(decode_node_identity(bad, &n)) << bad;
    }
}

TEST(LeaseIdentity, DescribeHolder) {
    EXPECT_EQ(describe_holder("snowflake-node host=h port=1 system_identifier=2 started_unix_ms=0"),
              "host h port 1 (system identifier 2, started 1970-01-01 00:00:00 UTC)");
    EXPECT_EQ(describe_holder("snowflake-node host=h port=1 system_identifier=2 started_unix_ms=-1"),
              "host h port 1 (system identifier 2, started 1969-12-31 23:59:59 UTC)");
    EXPECT_EQ(describe_holder("snowflake-node host=h port=1 system_identifier=2 started_unix_ms=951782400000"),
              "host h port 1 (system identifier 2, started 2000-02-29 00:00:00 UTC)");
    EXPECT_EQ(describe_holder("hello \"x\"\n"),
              "a holder that is not a snowflake node (its key holds \"hello ?x??\")");
    const std::string d = describe_holder(std::string(500, 'z'));
    EXPECT_LT(d.size(), 200u);
    EXPECT_NE(d.find("..."), std::string::npos);
    // Extreme start times do not crash.
    EXPECT_FALSE(describe_holder("snowflake-node host=h port=1 system_identifier=2 started_unix_ms="
                                 "-9223372036854775808").empty());
    EXPECT_FALSE(describe_holder("snowflake-node host=h port=1 system_identifier=2 started_unix_ms="
                                 "9223372036854775807").empty());
}

TEST(LeaseEndpoints, Valid) {
    std::vector<std::string> eps;
    std::string why;
    ASSERT_TRUE(parse_endpoints("http://127.0.0.1:2379", &eps, &why)) << why;
    EXPECT_EQ(eps, std::vector<std::string>{"http://127.0.0.1:2379"});
    ASSERT_TRUE(parse_endpoints(" http://a:1 ,\thttp://b.example.org:65535/, http://[::1]:2379", &eps, &why))
        << why;
    EXPECT_EQ(eps, (std::vector<std::string>{"http://a:1", "http://b.example.org:65535", "http://[::1]:2379"}));
    ASSERT_TRUE(parse_endpoints("", &eps, &why));
    EXPECT_TRUE(eps.empty());
    ASSERT_TRUE(parse_endpoints("  ", &eps, &why));
    EXPECT_TRUE(eps.empty());
}

TEST(LeaseEndpoints, GarbageIsRejectedWithAReason) {
    struct Case {
        const char* text;
        const char* reason;
    };
    const Case cases[] = {
        {"127.0.0.1:2379", "Endpoint 1 (\"127.0.0.1:2379\") is invalid: it does not start with http://."},
        {"https://a:1", "Endpoint 1 (\"https://a:1\") is invalid: only http:// endpoints are supported."},
        {"http://a:1,", "Endpoint 2 (\"\") is invalid: it is empty."},
        {"http://a:1,,http://b:2", "Endpoint 2 (\"\") is invalid: it is empty."},
        {"http://a", "Endpoint 1 (\"http://a\") is invalid: it has no port (write http://host:port)."},
        {"http://:1", "Endpoint 1 (\"http://:1\") is invalid: it has no host."},
        {"http://a:0", "Endpoint 1 (\"http://a:0\") is invalid: its port is not a number from 1 to 65535."},
        {"http://a:65536", "Endpoint 1 (\"http://a:65536\") is invalid: its port is not a number from 1 to 65535."},
        {"http://a:x", "Endpoint 1 (\"http://a:x\") is invalid: its port is not a number from 1 to 65535."},
        {"http://a:1/v3", "Endpoint 1 (\"http://a:1/v3\") is invalid: it has a path; give only http://host:port."},
        {"http://u@a:1", "Endpoint 1 (\"http://u@a:1\") is invalid: its host may contain only letters, digits, \"-\" and \".\"."},
        {"http://[::1:1", "Endpoint 1 (\"http://[::1:1\") is invalid: its IPv6 address is not closed by \"]\"."},
        {"http://[zz]:1", "Endpoint 1 (\"http://[zz]:1\") is invalid: its IPv6 address contains a character that is not a hex digit, \":\" or \".\"."},
        {"http://-a:1", "Endpoint 1 (\"http://-a:1\") is invalid: its host is not a valid host name."},
        {"http://a b:1", "Endpoint 1 (\"http://a b:1\") is invalid: its host may contain only letters, digits, \"-\" and \".\"."},
    };
    for (const Case& c : cases) {
        std::vector<std::string> eps{"untouched"};
        std::string why;
        EXPECT_FALSE(parse_endpoints(c.text, &eps, &why)) << c.text;
        EXPECT_EQ(why, c.reason);
        EXPECT_EQ(eps, std::vector<std::string>{"untouched"});
    }
    std::string many;
    for (int i = 0; i < 17; i++) many += (i ? "," : "") + std::string("http://h:") + std::to_string(i + 1);
    std::string why;
    EXPECT_FALSE(parse_endpoints(many, nullptr, &why));
    EXPECT_EQ(why, "At most 16 endpoints may be given.");
}

TEST(LeaseNames, StatesAndActions) {
    EXPECT_STREQ(lease::state_name(LeaseState::Acquiring), "acquiring");
    EXPECT_STREQ(lease::state_name(LeaseState::Held), "held");
    EXPECT_STREQ(lease::state_name(LeaseState::Expired), "expired");
    EXPECT_STREQ(lease::action_name(LeaseAction::KeepAlive), "keepalive");
}

}  // namespace

// LeaseConfig::worker_min/worker_max (the C library's worker id range,
// default 512..1023): every choice lies in the range, whatever the previous
// id, the rotation after a lost claim or the spread after contention.
namespace {

LeaseConfig range_config(int32_t lo, int32_t hi) {
    LeaseConfig c;
    c.worker_min = lo;
    c.worker_max = hi;
    return c;
}

TEST(LeaseWorkerRange, ChoosesTheLowestFreeIdOfTheRange) {
    const LeaseConfig c = range_config(512, 1023);
    Lease l = lease::start(c, 0);
    EXPECT_EQ(lease::choose_worker(l, c, TakenIds{}, 0), 512);
    TakenIds taken;
    for (int32_t w = 0; w < 516; w++) taken_add(taken, w);
    EXPECT_EQ(lease::choose_worker(l, c, taken, 7), 516);
}

TEST(LeaseWorkerRange, NoFreeIdInTheRangeIsNone) {
    const LeaseConfig c = range_config(10, 12);
    Lease l = lease::start(c, 0);
    TakenIds taken;
    for (int32_t w = 10; w <= 12; w++) taken_add(taken, w);
    // Ids outside the range are free, and never chosen.
    EXPECT_EQ(lease::choose_worker(l, c, taken, 0), -1);
    EXPECT_EQ(l.candidate, -1);
}

TEST(LeaseWorkerRange, APreviousIdOutsideTheRangeIsNotTaken) {
    const LeaseConfig c = range_config(600, 700);
    Lease l = lease::start(c, 0);
    l.previous_worker = 5;
    EXPECT_EQ(lease::choose_worker(l, c, TakenIds{}, 0), 600);
    l.previous_worker = 650;
    EXPECT_EQ(lease::choose_worker(l, c, TakenIds{}, 0), 650);
}

TEST(LeaseWorkerRange, RotationAndSpreadStayInTheRange) {
    const LeaseConfig c = range_config(1000, 1009);
    for (int32_t contention = 0; contention < 8; contention++)
        for (int32_t rotate = 0; rotate <= kMaxWorker; rotate += 37)
            for (uint32_t r = 0; r < 40; r += 3) {
                Lease l = lease::start(c, 0);
                l.contention = contention;
                l.rotate_from = rotate;
                const int32_t w = lease::choose_worker(l, c, TakenIds{}, r);
                ASSERT_GE(w, 1000) << contention << " " << rotate << " " << r;
                ASSERT_LE(w, 1009) << contention << " " << rotate << " " << r;
            }
    // After a lost claim of 1009 the search wraps to the range's start.
    Lease l = lease::start(c, 0);
    l.rotate_from = (1009 + 1) % (kMaxWorker + 1);
    EXPECT_EQ(lease::choose_worker(l, c, TakenIds{}, 0), 1000);
}

TEST(LeaseWorkerRange, TheDefaultIsTheWholeIdSpace) {
    const LeaseConfig c;
    EXPECT_EQ(c.worker_min, 0);
    EXPECT_EQ(c.worker_max, kMaxWorker);
    Lease l = lease::start(c, 0);
    TakenIds taken;
    for (int32_t w = 0; w < kMaxWorker; w++) taken_add(taken, w);
    EXPECT_EQ(lease::choose_worker(l, c, taken, 0), kMaxWorker);
}

}  // namespace

// An application process of the C library in a worker key: runtime and
// pid, port 0; read back, described as a process, and never of a node's
// name (so never revoked or waited out as "this node's previous run").
namespace {

TEST(LeaseIdentity, AnApplicationProcess) {
    NodeIdentity me;
    me.host = "app1";
    me.port = 0;
    me.instance = "00112233445566778899aabbccddeeff";
    me.started_unix_ms = 1764560687000;
    me.runtime = "python";
    me.pid = 4242;
    const std::string text = encode_node_identity(me);
    EXPECT_NE(text.find(" runtime=python pid=4242"), std::string::npos) << text;
    NodeIdentity back;
    ASSERT_TRUE(decode_node_identity(text, &back)) << text;
    EXPECT_EQ(back.runtime, "python");
    EXPECT_EQ(back.pid, 4242);
    EXPECT_EQ(back.port, 0);
    EXPECT_NE(describe_holder(text).find("application process (python, pid 4242) on host app1"), std::string::npos)
        << describe_holder(text);
    // Another process on the same host, same start: another holder.
    NodeIdentity other = me;
    other.instance = "ffeeddccbbaa99887766554433221100";
    other.pid = 4243;
    EXPECT_EQ(classify_holder(other, me), HolderKind::Other);
    EXPECT_EQ(classify_holder(me, me), HolderKind::ThisRun);
    // Port 0 without a runtime is no identity; a node's keys read as before.
    EXPECT_FALSE(
        decode_node_identity("snowflake-node host=a port=0 system_identifier=1 started_unix_ms=5", nullptr));
    NodeIdentity node;
    ASSERT_TRUE(
        decode_node_identity("snowflake-node host=a port=5432 system_identifier=1 started_unix_ms=5", &node));
    EXPECT_EQ(node.runtime, "");
    EXPECT_EQ(node.pid, 0);
}

}  // namespace
