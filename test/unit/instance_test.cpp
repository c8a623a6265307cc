// Unit tests of what only this very instance wrote (issue 28). Finding 4:
// the identity in a worker key names the instance (a nonce made at each
// start), so a clone with the same host, port, system identifier and data
// directory is never taken for this node's previous run. Finding 6: a mark
// write whose answer was lost is adopted only if it was written with this
// lease's claim of the worker key, never because its value matches.

#include "core/coord_schema.hpp"
#include "core/lease.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace snowflake::core;

constexpr int64_t kMs = 1000000;  // ns per ms
constexpr int64_t kS = 1000 * kMs;

LeaseConfig static_config(int32_t worker) {
    LeaseConfig c;
    c.ttl_ms = 30000;
    c.static_worker = worker;
    c.leasing = true;
    c.check_fleet = false;  // the fleet's settings: test/unit/fleet_test.cpp
    return c;
}

// Two identities with the same name (host, port, system identifier, data
// directory), as a cloned VM's or a container's with a copied data
// directory; instance "" for a key of a version that recorded none.
std::string named(const std::string& instance, int64_t started_unix_ms) {
    return "snowflake-node host=db1 port=5432 system_identifier=7312345678901234567" +
           (instance.empty() ? std::string() : " instance=" + instance) +
           " started_unix_ms=" + std::to_string(started_unix_ms) + " data_directory=/var/lib/postgresql/15/main";
}
const std::string kMe = named("8b7d0e11aa22bb33cc44dd55ee66ff00", 1764560702000);
const std::string kClone = named("3f9a1c2e00112233445566778899aabb", 1764560687000);

Lease claiming(const LeaseConfig& c) {
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, c.ttl_ms, 0, 0);
    EXPECT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Claim);
    return l;
}

TEST(Instance, ACloneWithThisNodesNameIsNotRevoked) {
    const LeaseConfig c = static_config(42);
    Lease l = claiming(c);
    lease::on_claim_taken(l, c, kClone, 1234, 0, kMe);
    EXPECT_EQ(l.revoke_lease, 0) << "a live clone's lease must never be revoked on a name";
    EXPECT_NE(lease::next_step(l, c, 0).action, LeaseAction::Revoke);
    EXPECT_FALSE(lease::may_issue(l, 0));
    // The sentence names both instances.
    const std::string e = l.last_error;
    EXPECT_NE(e.find("3f9a1c2e"), std::string::npos) << e;
    EXPECT_NE(e.find("8b7d0e11"), std::string::npos) << e;
}

TEST(Instance, AKeyWithoutAnInstanceIsNotRevokedEither) {
    // A key written by a version that recorded no instance: this node's
    // previous run before an upgrade, or a clone: not known to be dead.
    const LeaseConfig c = static_config(42);
    Lease l = claiming(c);
    lease::on_claim_taken(l, c, named("", 1764560687000), 1234, 0, kMe);
    EXPECT_EQ(l.revoke_lease, 0);
    EXPECT_NE(lease::next_step(l, c, 0).action, LeaseAction::Revoke);
}

TEST(Instance, TheSameInstanceIsThisRunsEarlierLeaseAndIsRevoked) {
    const LeaseConfig c = static_config(42);
    Lease l = claiming(c);
    lease::on_claim_taken(l, c, kMe, 1234, 0, kMe);
    EXPECT_EQ(l.revoke_lease, 1234);
    EXPECT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Revoke);
}

TEST(Instance, AnyFreeIdMovesOnFromAClone) {
    LeaseConfig c = static_config(-1);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, c.ttl_ms, 0, 0);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::ListWorkers);
    ASSERT_EQ(lease::choose_worker(l, c, TakenIds{}, 0), 0);
    lease::on_claim_taken(l, c, kClone, 1234, 0, kMe);
    EXPECT_EQ(l.revoke_lease, 0);
    EXPECT_EQ(lease::next_step(l, c, 0).action, LeaseAction::ListWorkers);
}

// The previous run's lease is left to expire: the claim is tried again
// soon (within a second), so that the id is taken as soon as the
// coordinator has deleted the key; a holder that keeps the key for longer
// than its lease could live without a renewal renews it: a live clone.
TEST(Instance, APreviousRunIsWaitedOutAndAHolderThatOutlivesItsTtlIsALiveClone) {
    const LeaseConfig c = static_config(42);
    Lease l = claiming(c);
    const std::string holder = kClone + " lease_ttl_ms=10000";
    lease::on_claim_taken(l, c, holder, 1234, 0, kMe);
    EXPECT_EQ(l.last_error_reason, LeaseError::PreviousRun);
    LeaseStep s = lease::next_step(l, c, 0);
    ASSERT_EQ(s.action, LeaseAction::Wait);
    EXPECT_LE(s.at_ns, 1 * kS);
    int64_t t = s.at_ns;
    // Still held by the same lease well past its TTL (10 s): renewed.
    while (t < 40 * kS) {
        s = lease::next_step(l, c, t);
        if (s.action == LeaseAction::Wait) {
            t = s.at_ns;
        } else if (s.action == LeaseAction::KeepAlive) {
            lease::on_keepalive_ok(l, c, t, t);
        } else {
            ASSERT_EQ(s.action, LeaseAction::Claim) << t;
            lease::on_claim_taken(l, c, holder, 1234, t, kMe);
            ASSERT_EQ(l.revoke_lease, 0);
            if (t < 10 * kS) {
                EXPECT_EQ(l.last_error_reason, LeaseError::PreviousRun) << t;
            }
        }
    }
    EXPECT_EQ(l.last_error_reason, LeaseError::Clone);
    const std::string e = l.last_error;
    EXPECT_NE(e.find("live clone"), std::string::npos) << e;
    EXPECT_NE(e.find("3f9a1c2e"), std::string::npos) << e;
    EXPECT_NE(e.find("8b7d0e11"), std::string::npos) << e;
    // Its key goes (it stopped): the id is this node's.
    while ((s = lease::next_step(l, c, t)).action != LeaseAction::Claim) {
        if (s.action == LeaseAction::KeepAlive) lease::on_keepalive_ok(l, c, t, t);
        if (s.action == LeaseAction::Wait) t = s.at_ns;
    }
    lease::on_claim_ok(l, c, t);
    lease::on_mark_read(l, c, t);
    EXPECT_EQ(l.state, LeaseState::Held);
}

TEST(LostWrite, AdoptedOnlyWhenWrittenWithOurClaim) {
    const int64_t unconfirmed[] = {5000, 6000};
    Mark m;
    // One of our values, written with our claim of the worker key: ours.
    ASSERT_TRUE(adopt_lost_write(true, "6000 reserved", unconfirmed, 2, &m));
    EXPECT_EQ(m.ms, 6000);
    EXPECT_FALSE(m.clean);
    // The same value written by another holder: a coincidence, not ours.
    EXPECT_FALSE(adopt_lost_write(false, "6000 reserved", unconfirmed, 2, &m));
    // Written with our claim but not a value we sent without an answer, an
    // exact mark, or not a mark: not adopted either.
    EXPECT_FALSE(adopt_lost_write(true, "7000 reserved", unconfirmed, 2, &m));
    EXPECT_FALSE(adopt_lost_write(true, "6000 exact", unconfirmed, 2, &m));
    EXPECT_FALSE(adopt_lost_write(true, "six thousand", unconfirmed, 2, &m));
    EXPECT_FALSE(adopt_lost_write(true, "6000 reserved", nullptr, 0, &m));
}

}  // namespace
