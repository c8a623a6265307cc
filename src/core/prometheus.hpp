// The Prometheus text exposition (format 0.0.4) of /metrics: every column of
// snowflake_stats (from the one table in stats_columns.hpp), the refusal and
// mark-write counters, the health gauges and the HTTP request statistics.
// Written into a caller's buffer without allocating, like the JSON answers.
#pragma once

#include "pure.hpp"

#include "http_api.hpp"
#include "stats_snapshot.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core::http {

// Upper bounds of the request duration histogram, microseconds.
constexpr int64_t kDurationBucketsUs[] = {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
                                          100000, 250000, 500000, 1000000, 2500000};
constexpr int kDurationBuckets = sizeof(kDurationBucketsUs) / sizeof(kDurationBucketsUs[0]);

// Requests answered by the HTTP worker since it started, by endpoint and
// status code, and how long each took to decide and queue its answer. Kept by
// the worker (one thread), so plain counters; the label sets are bounded:
// six endpoints times at most kMaxCodes status codes (codes beyond are
// counted under code "other").
class RequestStats {
public:
    static constexpr int kMaxCodes = 24;
    // Counts one answer: its endpoint, status code and duration.
    void record(Endpoint e, int status, int64_t duration_us) noexcept;
    // Ids and UUIDs handed out by the batch endpoints (taken from the
    // generator, whether or not the answer reached the client).
    void add_ids(int32_t n) noexcept { ids_ += n > 0 ? static_cast<uint64_t>(n) : 0; }
    void add_uuids(int32_t n) noexcept { uuids_ += n > 0 ? static_cast<uint64_t>(n) : 0; }
    uint64_t ids() const noexcept { return ids_; }
    uint64_t uuids() const noexcept { return uuids_; }

    struct CodeCount {
        int status = 0;  // 0: unused; -1: other
        uint64_t count = 0;
    };
    struct PerEndpoint {
        CodeCount codes[kMaxCodes];
        uint64_t buckets[kDurationBuckets] = {};  // not cumulative
        uint64_t count = 0;
        int64_t sum_us = 0;
    };
    // The counts of one endpoint.
    const PerEndpoint& of(Endpoint e) const noexcept { return per_[static_cast<int>(e)]; }

private:
    PerEndpoint per_[kEndpointCount];
    uint64_t ids_ = 0;
    uint64_t uuids_ = 0;
};

// What /metrics shows beside the snapshot.
struct Health {
    bool ready = false;   // generator_ready()
    int64_t now_ms = 0;   // the clock, id-space milliseconds
    const char* version = "";                 // snowflake_build_info{version}
    const RequestStats* requests = nullptr;   // the HTTP worker's; nullptr: none shown
};
// Prometheus text exposition (format 0.0.4) of every column of
// snowflake_stats, the health gauges and the request statistics. Each
// metric's HELP ends with "(snowflake_stats.COLUMN)" naming the column it
// shows, when it shows one.
size_t format_metrics(char* buf, size_t cap, const StatsSnapshot& s, const Health& h) noexcept;

}  // namespace snowflake::core::http
