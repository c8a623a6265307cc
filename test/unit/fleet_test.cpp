// Unit tests of the fleet's settings (issue 28: settings that must agree
// across a fleet): the text of <prefix>/fleet, the comparison with a node's
// settings, and the lease state machine's step that makes it before any id
// is claimed.

#include "core/coord_schema.hpp"
#include "core/lease.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace snowflake::core;

constexpr int64_t kMs = 1000000;  // ns per ms

constexpr int64_t k2025 = 1735689600000000;  // 2025-01-01 00:00:00 UTC in Unix microseconds
constexpr int64_t k2020 = 1577836800000000;

FleetSettings fleet(int64_t epoch_unix_us) {
    FleetSettings f;
    f.epoch_unix_us = epoch_unix_us;
    return f;
}

TEST(Fleet, KeyAndText) {
    EXPECT_EQ(fleet_key("/snowflake"), "/snowflake/fleet");
    EXPECT_EQ(encode_fleet_settings(fleet(k2025)), "snowflake-fleet epoch_unix_us=1735689600000000");
    EXPECT_EQ(parse_worker_key("/snowflake", fleet_key("/snowflake")), -1);  // never taken for a worker key
}

TEST(Fleet, TheSameEpochAgrees) {
    std::string why = "untouched";
    EXPECT_EQ(check_fleet_settings(encode_fleet_settings(fleet(k2025)), fleet(k2025), "/s/fleet", &why),
              FleetCheck::Agree);
    EXPECT_EQ(why, "untouched");
}

TEST(Fleet, AnotherEpochDiffersNamingBoth) {
    std::string why;
    EXPECT_EQ(check_fleet_settings(encode_fleet_settings(fleet(k2025)), fleet(k2020), "/s/fleet", &why),
              FleetCheck::Differ);
    EXPECT_EQ(why, "this node's snowflake.epoch is 2020-01-01 00:00:00 UTC, the fleet's (in /s/fleet) is "
                   "2025-01-01 00:00:00 UTC");
    // Microseconds count: the same millisecond spelled differently is not the same instant.
    EXPECT_EQ(check_fleet_settings(encode_fleet_settings(fleet(k2025 + 500)), fleet(k2025), "/s/fleet", &why),
              FleetCheck::Differ);
    EXPECT_NE(why.find("2025-01-01 00:00:00.000500 UTC"), std::string::npos) << why;
}

TEST(Fleet, UnknownFieldsAndOtherTextAreNotReadable) {
    std::string why;
    // A later version's setting that this one cannot check: no lease.
    EXPECT_EQ(check_fleet_settings("snowflake-fleet epoch_unix_us=1735689600000000 clock=tai", fleet(k2025),
                                   "/s/fleet", &why),
              FleetCheck::Unreadable);
    EXPECT_EQ(why, "the fleet's settings in /s/fleet record clock, a setting this version does not know");
    for (const char* bad :
         {"", "snowflake-fleet", "fleet epoch_unix_us=1",
          "snowflake-fleet epoch_unix_us=", "snowflake-fleet epoch_unix_us=x", "snowflake-fleet  epoch_unix_us=1",
          "snowflake-fleet epoch_unix_us=1 epoch_unix_us=1", "snowflake-fleet epoch_unix_us=1 layout=41/6",
          "snowflake-fleet epoch_unix_us=1 layout=42/6/6", "snowflake-fleet epoch_unix_us=1 layout=41/6/6/1",
          "snowflake-fleet epoch_unix_us=1 layout=41/0/22",
          "snowflake-fleet epoch_unix_us=1 layout=41/6/6 layout=41/6/6"}) {
        EXPECT_EQ(check_fleet_settings(bad, fleet(1), "/s/fleet", &why), FleetCheck::Unreadable) << bad;
        EXPECT_NE(why.find("not settings this version can read"), std::string::npos) << why;
    }
}

// snowflake.layout (issue 31): recorded only when it is not twitter, so a
// twitter fleet's key reads as before, and a node of another layout does
// not lease, with a sentence naming both.
TEST(Fleet, TheLayoutIsRecordedAndComparedNamingBoth) {
    FleetSettings js = fleet(k2025);
    js.layout = geometry_of(41, 6, 6);
    EXPECT_EQ(encode_fleet_settings(js), "snowflake-fleet epoch_unix_us=1735689600000000 layout=41/6/6");
    std::string why = "untouched";
    EXPECT_EQ(check_fleet_settings(encode_fleet_settings(js), js, "/s/fleet", &why), FleetCheck::Agree);
    EXPECT_EQ(why, "untouched");
    EXPECT_EQ(check_fleet_settings(encode_fleet_settings(js), fleet(k2025), "/s/fleet", &why), FleetCheck::Differ);
    EXPECT_EQ(why, "this node's snowflake.layout is twitter, the fleet's (in /s/fleet) is js-safe");
    EXPECT_EQ(check_fleet_settings(encode_fleet_settings(fleet(k2025)), js, "/s/fleet", &why), FleetCheck::Differ);
    EXPECT_EQ(why, "this node's snowflake.layout is js-safe, the fleet's (in /s/fleet) is twitter");
    FleetSettings custom = fleet(k2025);
    custom.layout = geometry_of(40, 12, 11);
    EXPECT_EQ(check_fleet_settings(encode_fleet_settings(custom), js, "/s/fleet", &why), FleetCheck::Differ);
    EXPECT_EQ(why, "this node's snowflake.layout is js-safe, the fleet's (in /s/fleet) is time 40, worker 12, "
                   "sequence 11, unit 1ms");
    // The twitter widths written out are twitter.
    EXPECT_EQ(check_fleet_settings("snowflake-fleet epoch_unix_us=1735689600000000 layout=41/10/12", fleet(k2025),
                                   "/s/fleet", &why),
              FleetCheck::Agree);
}

LeaseConfig checking(int32_t static_worker) {
    LeaseConfig c;
    c.ttl_ms = 30000;
    c.static_worker = static_worker;
    c.leasing = true;
    EXPECT_TRUE(c.check_fleet);  // the default
    return c;
}

TEST(Fleet, EachNewLeaseChecksTheFleetBeforeItClaims) {
    const LeaseConfig c = checking(-1);
    Lease l = lease::start(c, 0);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Grant);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::CheckFleet);
    lease::on_fleet_checked(l, c, FleetCheck::Agree, nullptr, 0);
    ASSERT_EQ(lease::next_step(l, c, 0).action, LeaseAction::ListWorkers);
    ASSERT_GE(lease::choose_worker(l, c, TakenIds{}, 0), 0);
    lease::on_claim_ok(l, c, 0);
    lease::on_mark_read(l, c, 0);
    ASSERT_EQ(l.state, LeaseState::Held);
    // The lease is lost: the next one checks again.
    lease::on_lease_gone(l, c, 10 * kMs);
    ASSERT_EQ(lease::next_step(l, c, 10 * kMs).action, LeaseAction::Grant);
    lease::on_grant_ok(l, c, 10, 30000, 10 * kMs, 10 * kMs);
    EXPECT_EQ(lease::next_step(l, c, 10 * kMs).action, LeaseAction::CheckFleet);
}

TEST(Fleet, ADifferentEpochClaimsNothingAndIsRetried) {
    const LeaseConfig c = checking(5);
    Lease l = lease::start(c, 0);
    lease::on_grant_ok(l, c, 9, 30000, 0, 0);
    std::string why;
    ASSERT_EQ(check_fleet_settings(encode_fleet_settings(fleet(k2025)), fleet(k2020), "/s/fleet", &why),
              FleetCheck::Differ);
    lease::on_fleet_checked(l, c, FleetCheck::Differ, why.c_str(), 0);
    EXPECT_EQ(l.state, LeaseState::Acquiring);
    EXPECT_FALSE(lease::may_issue(l, 0));
    EXPECT_EQ(l.last_error_reason, LeaseError::FleetSettings);
    EXPECT_EQ(std::string(l.last_error), why);
    EXPECT_STREQ(lease::error_name(l.last_error_reason), "fleet_settings");
    ASSERT_NE(lease::error_hint(l.last_error_reason), nullptr);
    EXPECT_NE(std::string(lease::error_hint(l.last_error_reason)).find("snowflake.epoch"), std::string::npos);
    // Never a claim; the check again after a delay; the lease kept alive.
    LeaseStep s = lease::next_step(l, c, 0);
    ASSERT_EQ(s.action, LeaseAction::Wait);
    EXPECT_GT(s.at_ns, 0);
    int64_t t = s.at_ns;
    for (int i = 0; i < 20; i++) {
        s = lease::next_step(l, c, t);
        if (s.action == LeaseAction::KeepAlive) {
            lease::on_keepalive_ok(l, c, t, t);
        } else {
            ASSERT_EQ(s.action, s.at_ns > t ? LeaseAction::Wait : LeaseAction::CheckFleet) << i;
            if (s.action == LeaseAction::CheckFleet)
                lease::on_fleet_checked(l, c, FleetCheck::Differ, why.c_str(), t);
        }
        const LeaseStep next = lease::next_step(l, c, t);
        if (next.action == LeaseAction::Wait) t = next.at_ns;
    }
    EXPECT_EQ(l.worker, -1);
    EXPECT_LE(lease::next_step(l, c, t).at_ns - t, 5000 * kMs);  // backoff capped at TTL/6
    // The record corrected by hand: the next check agrees, the id is claimed.
    while (lease::next_step(l, c, t).action != LeaseAction::CheckFleet) t = lease::next_step(l, c, t).at_ns;
    lease::on_fleet_checked(l, c, FleetCheck::Agree, nullptr, t);
    EXPECT_EQ(lease::next_step(l, c, t).action, LeaseAction::Claim);
    // A failed call is a failure of its own kind.
    Lease f = lease::start(c, 0);
    lease::on_grant_ok(f, c, 9, 30000, 0, 0);
    lease::on_failure(f, c, LeaseAction::CheckFleet, "timed out", 0);
    EXPECT_STREQ(lease::error_name(f.last_error_reason), "check_fleet");
    EXPECT_EQ(lease::error_hint(f.last_error_reason), nullptr);
}

TEST(Fleet, WithoutLeasingNothingIsChecked) {
    LeaseConfig c = checking(5);
    c.leasing = false;
    const Lease l = lease::start(c, 0);
    EXPECT_EQ(lease::next_step(l, c, 0).action, LeaseAction::Wait);
}

}  // namespace
