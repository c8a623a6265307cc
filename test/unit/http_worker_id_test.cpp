// snowflake.http_worker_id's rule (core/http_worker_id.hpp): which values a
// node may run with, and the first rule a bad one breaks.
#include "core/http_worker_id.hpp"

#include "core/layout.hpp"

#include <gtest/gtest.h>

using namespace snowflake::core;

TEST(HttpWorkerId, OffIsAlwaysAllowed) {
    EXPECT_EQ(check_http_worker_id(kHttpWorkerIdOff, 7, false), HttpWorkerIdCheck::Ok);
    EXPECT_EQ(check_http_worker_id(kHttpWorkerIdOff, -1, false), HttpWorkerIdCheck::Ok);
    EXPECT_EQ(check_http_worker_id(kHttpWorkerIdOff, -1, true), HttpWorkerIdCheck::Ok);
    EXPECT_EQ(check_http_worker_id(kHttpWorkerIdOff, 7, true), HttpWorkerIdCheck::Ok);
}

TEST(HttpWorkerId, AnIdOfItsOwnBesideAStaticOne) {
    EXPECT_EQ(check_http_worker_id(9, 7, false), HttpWorkerIdCheck::Ok);
    EXPECT_EQ(check_http_worker_id(0, kMaxWorker, false), HttpWorkerIdCheck::Ok);
    EXPECT_EQ(check_http_worker_id(kMaxWorker, 0, false), HttpWorkerIdCheck::Ok);
}

TEST(HttpWorkerId, OutOfRange) {
    EXPECT_EQ(check_http_worker_id(kMaxWorker + 1, 7, false), HttpWorkerIdCheck::OutOfRange);
    EXPECT_EQ(check_http_worker_id(-2, 7, false), HttpWorkerIdCheck::OutOfRange);
}

TEST(HttpWorkerId, RefusedWithLeasedIds) {
    // With or without a set worker id (leased as it is, or any free one).
    EXPECT_EQ(check_http_worker_id(9, 7, true), HttpWorkerIdCheck::Leasing);
    EXPECT_EQ(check_http_worker_id(9, -1, true), HttpWorkerIdCheck::Leasing);
    EXPECT_EQ(check_http_worker_id(7, 7, true), HttpWorkerIdCheck::Leasing);
}

TEST(HttpWorkerId, NeedsAStaticWorkerId) {
    EXPECT_EQ(check_http_worker_id(9, -1, false), HttpWorkerIdCheck::NoWorkerId);
}

TEST(HttpWorkerId, NotTheNodesOwnWorkerId) {
    EXPECT_EQ(check_http_worker_id(7, 7, false), HttpWorkerIdCheck::SameAsWorkerId);
    EXPECT_EQ(check_http_worker_id(0, 0, false), HttpWorkerIdCheck::SameAsWorkerId);
}
