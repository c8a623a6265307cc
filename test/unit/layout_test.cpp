// Unit tests of the 64-bit id layout (src/core/layout.hpp).

#include "core/layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace snowflake::core;

constexpr uint64_t kSignBit = uint64_t{1} << 63;

const std::vector<int64_t> kEdgeMs = {0, 1, 2, kMaxMs / 2, kMaxMs - 1, kMaxMs};
const std::vector<int32_t> kEdgeWorkers = {0, 1, 512, kMaxWorker - 1, kMaxWorker};
const std::vector<int32_t> kEdgeSequences = {0, 1, 2048, kMaxSequence - 1, kMaxSequence};

// The layout is usable at compile time (the glue relies on constexpr ids).
static_assert(compose(0, 0, 0) == 0, "the very first id is zero");
static_assert(decompose(compose(3, 2, 1)).sequence == 1, "constexpr round trip");

TEST(Layout, ConstantsDescribeTheDocumentedWidths) {
    EXPECT_EQ(kMaxMs, int64_t{2199023255551});  // 2^41 - 1, ~69.7 years of ms
    EXPECT_EQ(kMaxWorker, 1023);
    EXPECT_EQ(kMaxSequence, 4095);
    EXPECT_EQ(kIdsPerMs, 4096);
    EXPECT_EQ(kWorkerShift, 12);
    EXPECT_EQ(kTimestampShift, 22);
}

TEST(Layout, EachFieldSitsAtItsDocumentedBits) {
    EXPECT_EQ(compose(0, 0, 1), int64_t{1});
    EXPECT_EQ(compose(0, 1, 0), int64_t{1} << 12);
    EXPECT_EQ(compose(1, 0, 0), int64_t{1} << 22);
    EXPECT_EQ(compose(0, 0, kMaxSequence), int64_t{0xFFF});
    EXPECT_EQ(compose(0, kMaxWorker, 0), int64_t{0x3FF} << 12);
    EXPECT_EQ(compose(kMaxMs, 0, 0), kMaxMs << 22);
    // Every field at its maximum fills all 63 payload bits.
    EXPECT_EQ(compose(kMaxMs, kMaxWorker, kMaxSequence), std::numeric_limits<int64_t>::max());
}

TEST(Layout, RoundTripsAtEveryFieldEdge) {
    for (int64_t ms : kEdgeMs) {
        for (int32_t worker : kEdgeWorkers) {
            for (int32_t seq : kEdgeSequences) {
                const int64_t id = compose(ms, worker, seq);
                const Fields f = decompose(id);
                SCOPED_TRACE(testing::Message() << "ms=" << ms << " worker=" << worker
                                                << " seq=" << seq);
                EXPECT_EQ(f.ms, ms);
                EXPECT_EQ(f.worker, worker);
                EXPECT_EQ(f.sequence, seq);
                EXPECT_EQ(static_cast<uint64_t>(id) & kSignBit, 0u) << "id=" << id;
                EXPECT_TRUE(valid_id(id)) << "id=" << id;
            }
        }
    }
}

TEST(Layout, RoundTripsOnRandomValidFields) {
    std::mt19937_64 rng(0x5EED1);
    std::uniform_int_distribution<int64_t> ms_d(0, kMaxMs);
    std::uniform_int_distribution<int32_t> worker_d(0, kMaxWorker);
    std::uniform_int_distribution<int32_t> seq_d(0, kMaxSequence);
    for (int i = 0; i < 20000; i++) {
        const int64_t ms = ms_d(rng);
        const int32_t worker = worker_d(rng);
        const int32_t seq = seq_d(rng);
        const int64_t id = compose(ms, worker, seq);
        const Fields f = decompose(id);
        ASSERT_EQ(f.ms, ms);
        ASSERT_EQ(f.worker, worker);
        ASSERT_EQ(f.sequence, seq);
        ASSERT_GE(id, 0);
    }
}

TEST(Layout, DecomposeIsTheInverseOfComposeOnEveryNonNegativeId) {
    std::mt19937_64 rng(0x5EED2);
    std::uniform_int_distribution<int64_t> id_d(0, std::numeric_limits<int64_t>::max());
    for (int i = 0; i < 20000; i++) {
        const int64_t id = id_d(rng);
        const Fields f = decompose(id);
        ASSERT_TRUE(valid_ms(f.ms));
        ASSERT_TRUE(valid_worker(f.worker));
        ASSERT_TRUE(valid_sequence(f.sequence));
        ASSERT_EQ(compose(f.ms, f.worker, f.sequence), id);
    }
}

TEST(Layout, LaterMillisecondAlwaysSortsAfterWhateverWorkerAndSequence) {
    // The largest id of ms must be below the smallest id of ms + 1.
    std::vector<int64_t> ms_values = {0, 1, kMaxMs / 2, kMaxMs - 1};
    std::mt19937_64 rng(0x5EED3);
    std::uniform_int_distribution<int64_t> ms_d(0, kMaxMs - 1);
    for (int i = 0; i < 1000; i++) ms_values.push_back(ms_d(rng));

    for (int64_t ms : ms_values) {
        const int64_t last_of_ms = compose(ms, kMaxWorker, kMaxSequence);
        const int64_t first_of_next = compose(ms + 1, 0, 0);
        ASSERT_LT(last_of_ms, first_of_next) << "ms=" << ms;
        // Any pair of workers/sequences, not only the extremes.
        for (int32_t w1 : kEdgeWorkers) {
            for (int32_t w2 : kEdgeWorkers) {
                ASSERT_LT(compose(ms, w1, kMaxSequence), compose(ms + 1, w2, 0))
                    << "ms=" << ms << " w1=" << w1 << " w2=" << w2;
            }
        }
    }
}

TEST(Layout, WithinOneWorkerAndMillisecondIdsFollowTheSequence) {
    for (int32_t worker : kEdgeWorkers) {
        for (int32_t seq = 0; seq < kMaxSequence; seq++) {
            ASSERT_EQ(compose(77, worker, seq) + 1, compose(77, worker, seq + 1));
        }
    }
}

TEST(Layout, FirstIdOfMsBoundsTheIdsOfThatMillisecond) {
    for (int64_t ms : kEdgeMs) {
        const int64_t first = first_id_of_ms(ms);
        EXPECT_EQ(first, compose(ms, 0, 0));
        EXPECT_EQ(decompose(first).ms, ms);
        for (int32_t worker : kEdgeWorkers) {
            for (int32_t seq : kEdgeSequences) {
                EXPECT_LE(first, compose(ms, worker, seq));
                if (ms > 0) {
                    EXPECT_GT(first, compose(ms - 1, worker, seq));
                }
            }
        }
        if (ms < kMaxMs) {
            EXPECT_LT(first, first_id_of_ms(ms + 1));
            EXPECT_EQ(first_id_of_ms(ms + 1) - first, int64_t{1} << kTimestampShift);
        }
    }
}

TEST(Layout, ValidPredicatesAtTheirBoundaries) {
    EXPECT_FALSE(valid_ms(-1));
    EXPECT_TRUE(valid_ms(0));
    EXPECT_TRUE(valid_ms(kMaxMs));
    EXPECT_FALSE(valid_ms(kMaxMs + 1));
    EXPECT_FALSE(valid_ms(std::numeric_limits<int64_t>::min()));
    EXPECT_FALSE(valid_ms(std::numeric_limits<int64_t>::max()));

    EXPECT_FALSE(valid_worker(-1));
    EXPECT_TRUE(valid_worker(0));
    EXPECT_TRUE(valid_worker(kMaxWorker));
    EXPECT_FALSE(valid_worker(kMaxWorker + 1));
    // The argument is 64-bit: a value that only fits 10 bits after truncation is still invalid.
    EXPECT_FALSE(valid_worker(int64_t{1} << 32));

    EXPECT_FALSE(valid_sequence(-1));
    EXPECT_TRUE(valid_sequence(0));
    EXPECT_TRUE(valid_sequence(kMaxSequence));
    EXPECT_FALSE(valid_sequence(kMaxSequence + 1));
    EXPECT_FALSE(valid_sequence(int64_t{1} << 32));

    EXPECT_FALSE(valid_id(-1));
    EXPECT_FALSE(valid_id(std::numeric_limits<int64_t>::min()));
    EXPECT_TRUE(valid_id(0));
    EXPECT_TRUE(valid_id(std::numeric_limits<int64_t>::max()));
}

TEST(Layout, OutOfRangeSequenceIsMaskedWithoutCarryingIntoTheWorker) {
    for (int32_t worker : kEdgeWorkers) {
        // kIdsPerMs would carry one into the worker field if it were added, not masked.
        Fields f = decompose(compose(500, worker, kIdsPerMs));
        EXPECT_EQ(f.ms, 500);
        EXPECT_EQ(f.worker, worker);
        EXPECT_EQ(f.sequence, 0);

        f = decompose(compose(500, worker, -1));  // all bits set
        EXPECT_EQ(f.ms, 500);
        EXPECT_EQ(f.worker, worker);
        EXPECT_EQ(f.sequence, kMaxSequence);

        f = decompose(compose(500, worker, std::numeric_limits<int32_t>::max()));
        EXPECT_EQ(f.ms, 500);
        EXPECT_EQ(f.worker, worker);
        EXPECT_EQ(f.sequence, kMaxSequence);
    }
}

TEST(Layout, OutOfRangeWorkerIsMaskedWithoutCarryingIntoTheMilliseconds) {
    for (int32_t seq : kEdgeSequences) {
        Fields f = decompose(compose(500, kMaxWorker + 1, seq));
        EXPECT_EQ(f.ms, 500);
        EXPECT_EQ(f.worker, 0);
        EXPECT_EQ(f.sequence, seq);

        f = decompose(compose(500, -1, seq));
        EXPECT_EQ(f.ms, 500);
        EXPECT_EQ(f.worker, kMaxWorker);
        EXPECT_EQ(f.sequence, seq);
    }
}

TEST(Layout, OutOfRangeMillisecondsNeverReachTheSignBit) {
    const std::vector<int64_t> bad_ms = {kMaxMs + 1, -1, std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min()};
    for (int64_t ms : bad_ms) {
        const int64_t id = compose(ms, kMaxWorker, kMaxSequence);
        EXPECT_GE(id, 0) << "ms=" << ms;
        const Fields f = decompose(id);
        EXPECT_EQ(f.ms, ms & kMaxMs) << "ms=" << ms;
        EXPECT_EQ(f.worker, kMaxWorker);
        EXPECT_EQ(f.sequence, kMaxSequence);
    }
}

TEST(Layout, DecomposeIgnoresTheSignBit) {
    // A negative value is not a valid id; decompose still only reads payload bits.
    const int64_t id = compose(1234, 56, 78);
    const auto with_sign = static_cast<int64_t>(static_cast<uint64_t>(id) | kSignBit);
    const Fields f = decompose(with_sign);
    EXPECT_EQ(f.ms, 1234);
    EXPECT_EQ(f.worker, 56);
    EXPECT_EQ(f.sequence, 78);
}

}  // namespace
