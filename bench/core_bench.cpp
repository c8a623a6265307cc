// Google Benchmark of the pure core: the cost of one id (or UUID) with no
// lock, no clock read and no PostgreSQL around it. The issue's target is
// <= 20 ns per id for the core.
//
// Clocks are fakes: a counter that moves to the next millisecond every
// 4,096 ids, so that the generator never has to wait. Each benchmark reports
// items_per_second (ids or UUIDs); the "per_id" counter is its inverse.
//
// BM_Baseline_Compose is the floor to compare against, measured in the same
// run: packing an id from fields that are already known.

#include "core/generator.hpp"
#include "core/position.hpp"
#include "core/layout.hpp"
#include "core/uuid.hpp"

#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace {

using namespace snowflake::core;

// Reports CPU time per item (printed with an SI prefix, e.g. "2.9ns") next
// to the items/s rate.
void report_per_item(benchmark::State& state, int64_t items_per_iteration) {
    const int64_t items = state.iterations() * items_per_iteration;
    state.SetItemsProcessed(items);
    state.counters["per_id"] = benchmark::Counter(
        static_cast<double>(items), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Stops the run if the core returned something else than an id: the
// benchmark would measure the wrong path.
void require(benchmark::State& state, bool ok, const char* what) {
    if (!ok) state.SkipWithError(what);
}

// Baseline: compose() of a counter, the work every id needs at least.
void BM_Baseline_Compose(benchmark::State& state) {
    uint64_t n = 0;
    for (auto _ : state) {
        int64_t id = compose(static_cast<int64_t>(n >> kSequenceBits), 7,
                                   static_cast<int32_t>(n & kMaxSequence));
        benchmark::DoNotOptimize(id);
        n++;
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_Baseline_Compose);

// The slow path for one id: next_id() with the clock stepping every 4,096 ids.
void BM_NextId(benchmark::State& state) {
    GeneratorState s;
    Config config;
    config.worker = 7;
    config.tolerance_ms = 5;
    int64_t now = 1'000'000;
    int32_t left_in_ms = kIdsPerMs;
    for (auto _ : state) {
        if (left_in_ms == 0) {
            now++;
            left_in_ms = kIdsPerMs;
        }
        Next r = next_id(s, now, config);
        benchmark::DoNotOptimize(r);
        left_in_ms--;
        if (r.status != Status::Issued) {
            require(state, false, "next_id did not issue");
            break;
        }
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_NextId);

// The lock-free fast path as the glue uses it: fast_next() from the packed
// position, then installing the new position (a plain store here; the glue
// does a compare-and-swap).
void BM_FastNext(benchmark::State& state) {
    uint64_t packed = pack_position(-1, kMaxSequence, 7);
    int64_t now = 1'000'000;
    int32_t left_in_ms = kIdsPerMs;
    for (auto _ : state) {
        if (left_in_ms == 0) {
            now++;
            left_in_ms = kIdsPerMs;
        }
        FastNext f;
        if (!fast_next(packed, now, kMaxMs, &f)) {
            require(state, false, "fast_next refused");
            break;
        }
        packed = f.next;
        benchmark::DoNotOptimize(f.id);
        left_in_ms--;
    }
    benchmark::DoNotOptimize(packed);
    report_per_item(state, 1);
}
BENCHMARK(BM_FastNext);

// Same, with a reservation in use (the window is extended every 1,000 ms as
// the glue would after persisting a new high-water mark).
void BM_FastNext_Reserved(benchmark::State& state) {
    uint64_t packed = pack_position(-1, kMaxSequence, 7);
    int64_t now = 1'000'000;
    int64_t reserved = now + 1'000;
    int32_t left_in_ms = kIdsPerMs;
    for (auto _ : state) {
        if (left_in_ms == 0) {
            now++;
            left_in_ms = kIdsPerMs;
            if (now > reserved) reserved += 1'000;
        }
        FastNext f;
        if (!fast_next(packed, now, reserved, &f)) {
            require(state, false, "fast_next refused");
            break;
        }
        packed = f.next;
        benchmark::DoNotOptimize(f.id);
        left_in_ms--;
    }
    benchmark::DoNotOptimize(packed);
    report_per_item(state, 1);
}
BENCHMARK(BM_FastNext_Reserved);

// The fast path as the extension runs it (core::fast_issue() over shared
// words: an atomic word and reservation, a compare-and-swap), with a fake
// clock that moves every 4,096 ids. Leased: the deadline read after the word
// and a boot clock read after the swap (a fake counter here). Beside it, in
// the same run, 1.2's sequence (the lease checked once, before the word),
// the baseline the protocol's cost is judged against.
struct BenchWords {
    std::atomic<uint64_t> word{pack_position(-1, kMaxSequence, 7)};
    std::atomic<int64_t> reserved{kMaxMs};
    std::atomic<int64_t> deadline{kNoDeadline};
    int64_t clock = 1'000'000;
    int64_t boot = 0;
    int32_t left_in_ms = kIdsPerMs;

    uint64_t load_word() { return word.load(std::memory_order_acquire); }
    bool cas_word(uint64_t& expected, uint64_t desired) { return word.compare_exchange_strong(expected, desired); }
    int64_t load_reserved() { return reserved.load(std::memory_order_relaxed); }
    void limit_reserved(int64_t ms) { reserved.store(ms); }
    int64_t now_ms() {
        if (left_in_ms-- == 0) {
            clock++;
            left_in_ms = kIdsPerMs - 1;
        }
        return clock;
    }
    int64_t lease_deadline_ns() { return deadline.load(std::memory_order_acquire); }
    int64_t boot_ns() { return ++boot; }
};

void BM_FastIssue(benchmark::State& state) {
    BenchWords w;
    if (state.range(0) != 0) w.deadline = int64_t{1} << 62;
    for (auto _ : state) {
        int64_t id = 0;
        if (fast_issue(w, &id) != Fast::Issued) {
            require(state, false, "fast_issue did not issue");
            break;
        }
        benchmark::DoNotOptimize(id);
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_FastIssue)->Arg(0)->Arg(1)->ArgName("leased");

void BM_FastIssue_1_2(benchmark::State& state) {
    BenchWords w;
    if (state.range(0) != 0) w.deadline = int64_t{1} << 62;
    for (auto _ : state) {
        const int64_t deadline = w.lease_deadline_ns();
        if (deadline != kNoDeadline && w.boot_ns() >= deadline) {
            require(state, false, "lease");
            break;
        }
        uint64_t cur = w.load_word();
        const int64_t now = w.now_ms();
        const int64_t reserved = w.load_reserved();
        FastNext f;
        if (!fast_next(cur, now, reserved, &f) || !w.cas_word(cur, f.next)) {
            require(state, false, "fast_next refused");
            break;
        }
        benchmark::DoNotOptimize(f.id);
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_FastIssue_1_2)->Arg(0)->Arg(1)->ArgName("leased");

// A whole millisecond in one call: next_ids(4096), one call per ms.
void BM_NextIdsBatch4096(benchmark::State& state) {
    GeneratorState s;
    Config config;
    config.worker = 7;
    int64_t now = 1'000'000;
    for (auto _ : state) {
        Next r = next_ids(s, now++, config, kIdsPerMs);
        benchmark::DoNotOptimize(r);
        if (r.status != Status::Issued || r.count != kIdsPerMs) {
            require(state, false, "next_ids did not issue a full millisecond");
            break;
        }
    }
    report_per_item(state, kIdsPerMs);
}
BENCHMARK(BM_NextIdsBatch4096);

// The same batch, but the caller also materialises every id of it, as the
// SQL set-returning function does one row at a time.
void BM_NextIdsBatch4096_Expand(benchmark::State& state) {
    GeneratorState s;
    Config config;
    config.worker = 7;
    int64_t now = 1'000'000;
    for (auto _ : state) {
        Next r = next_ids(s, now++, config, kIdsPerMs);
        for (int64_t id = r.first_id, end = r.first_id + r.count; id < end; id++) {
            benchmark::DoNotOptimize(id);
        }
    }
    report_per_item(state, kIdsPerMs);
}
BENCHMARK(BM_NextIdsBatch4096_Expand);

// Bytes of a UUIDv7 from ticks and 8 random bytes (the randomness itself,
// pg_strong_random() in the glue, is not part of the core).
void BM_BuildUuidv7(benchmark::State& state) {
    std::array<uint8_t, kUuidRandomBytes> random;
    for (size_t i = 0; i < random.size(); i++) random[i] = static_cast<uint8_t>(std::rand());
    int64_t ticks = int64_t{1'700'000'000'000} * 4096;
    for (auto _ : state) {
        random[0]++;  // different bytes every time, cheaply
        Uuid u = build_uuidv7(ticks++, random.data());
        benchmark::DoNotOptimize(u);
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_BuildUuidv7);

// The monotonic tick step with a clock that stands still (the common case
// when UUIDs are made faster than the clock's resolution) ...
void BM_AscendingTicks_StandingClock(benchmark::State& state) {
    UuidClock clock;
    const int64_t now = int64_t{1'700'000'000'000} * 4096;
    for (auto _ : state) {
        int64_t t = ascending_ticks(clock, now);
        benchmark::DoNotOptimize(t);
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_AscendingTicks_StandingClock);

// ... and with a clock that advances every call.
void BM_AscendingTicks_AdvancingClock(benchmark::State& state) {
    UuidClock clock;
    int64_t now = int64_t{1'700'000'000'000} * 4096;
    for (auto _ : state) {
        int64_t t = ascending_ticks(clock, now += 3);
        benchmark::DoNotOptimize(t);
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_AscendingTicks_AdvancingClock);

// One whole UUID as the core makes it: ns to ticks, the monotonic step, bytes.
void BM_Uuidv7_FromNs(benchmark::State& state) {
    std::array<uint8_t, kUuidRandomBytes> random{};
    UuidClock clock;
    int64_t ns = int64_t{1'700'000'000'000} * 1'000'000;
    for (auto _ : state) {
        ns += 37;
        random[0]++;
        Uuid u = build_uuidv7(ascending_ticks(clock, uuid_ticks_from_ns(ns)), random.data());
        benchmark::DoNotOptimize(u);
    }
    report_per_item(state, 1);
}
BENCHMARK(BM_Uuidv7_FromNs);

}  // namespace

BENCHMARK_MAIN();
