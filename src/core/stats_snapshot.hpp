// The values of snowflake_stats as plain data: one snapshot, taken under the
// lock by the glue (stats.cpp, take_stats_snapshot()), is what both the SQL
// function snowflake_stats() and the HTTP endpoint /metrics
// (prometheus.hpp, format_metrics()) turn into output, both through the one
// table of columns in stats_columns.hpp, so the two never disagree.
//
// Adding a statistic: one field here, one line where stats.cpp fills the
// snapshot, one row in stats_columns.hpp, and the column in both SQL
// scripts. test/http.sh fails while a column of snowflake_stats has no
// metric.
#pragma once

#include "pure.hpp"

#include "generator.hpp"
#include "lease.hpp"

#include <cstdint>

namespace snowflake::core {

// Why a call was refused ids (snowflake_ids_refused_total{cause,sqlstate});
// counted where the glue raises the error, never on the id path itself.
enum class Refusal {
    ClockBehind,        // SF001
    ClockOutOfRange,    // SF002
    NoLease,            // SF003: no worker id lease held
    CoordReservation,   // SF003: the reservation in the coordinator (etcd or ZooKeeper) could not be extended
    ClockUnhealthy,     // SF004
    MarkWrite,          // the mark file could not be written (a file-access SQLSTATE, 58030 as a rule)
    MarkWorkerMissing,  // 55000: the mark worker is not running
    WalEpoch,           // 55000: the replayed WAL records count from another epoch
    LostMark,           // 58P01: the mark file is missing from a data directory that issued ids
    ReplicatedMark,     // 55000: promoted without a mark that came through the WAL
    Count
};
constexpr int kRefusalCount = static_cast<int>(Refusal::Count);
// The cause label and the SQLSTATE label of each.
constexpr const char* kRefusalCause[kRefusalCount] = {"clock_behind",        "clock_out_of_range", "no_lease",
                                                      "etcd_reservation",    "clock_unhealthy",    "mark_write",
                                                      "mark_worker_missing", "wal_epoch",          "lost_mark",
                                                      "replicated_mark"};
constexpr const char* kRefusalSqlstate[kRefusalCount] = {"SF001", "SF002", "SF003", "SF003", "SF004",
                                                         "58030", "55000", "55000", "58P01", "55000"};

struct StatsSnapshot {
    int32_t worker_id = -1;               // worker_id (-1: unset, NULL in SQL)
    int64_t epoch_unix_us = 0;            // epoch
    uint64_t ids_issued = 0;              // ids_issued
    int64_t last_ms = -1;                 // last_timestamp, id-space ms (-1: none, NULL)
    Counters generator;                   // overflow_waits, clock_backwards_*, reservations, startup_waits
    int64_t since_unix_us = 0;            // since
    int64_t reserved_until_ms = -1;       // high_water_mark, id-space ms (-1: none, NULL)
    uint64_t reservation_waits = 0;       // reservation_waits
    uint64_t reservation_window_ms = 0;   // reservation_window_ms
    uint64_t last_mark_write_ms = 0;      // last_mark_write_ms
    LeaseState lease_state = LeaseState::Static;  // lease_state
    int64_t lease_id = 0;                 // lease_id (0: none, NULL)
    int64_t lease_deadline_unix_us = -1;  // lease_deadline (-1: none, NULL)
    uint64_t lease_renewals = 0;          // lease_renewals
    uint64_t lease_failures = 0;          // lease_failures
    char lease_last_error[kLeaseErrorSize] = {};  // lease_last_error ("": NULL)
    LeaseError lease_last_error_reason = LeaseError::None;  // its kind (metrics only)
    bool clock_known = false;             // clock_*: the kernel answered
    bool clock_synchronized = false;      // clock_synchronized
    int64_t clock_max_error_us = -1;      // clock_max_error_ms (-1: not reported, NULL)
    int64_t clock_est_error_us = -1;      // clock_est_error_ms (-1: not reported, NULL)
    uint64_t clock_health_refusals = 0;   // clock_health_refusals
    char coordinator[12] = "none";        // coordinator: etcd, zookeeper or none (1.2)
    char lease_session[24] = {};          // lease_session: the lease id as the coordinator prints it ("": NULL)
    int64_t lease_granted_ttl_ms = 0;     // lease_granted_ttl_ms: TTL or session timeout granted (0: NULL)
    int32_t backup_worker_id = -1;        // backup_worker_id: clock failover's backup id (-1: NULL)
    int64_t backup_until_ms = -1;         // backup_until: the own id's last millisecond (-1: NULL)
    uint64_t clock_failovers = 0;         // clock_failovers: backups started since server start
    int32_t http_worker_id = -1;          // http_worker_id: the HTTP endpoint's own worker id (-1: off, NULL)
    char layout[64] = "twitter";          // layout: snowflake.layout (core::geometry_text)
    int32_t ids_per_ms = 4096;            // ids_per_ms: the layout's ids a millisecond per worker id
    int64_t lifetime_end_unix_us = 0;     // lifetime_end: the end of the layout's time field from the epoch
    // Metrics only (no column): the server's start time, Unix microseconds
    // (0: unknown).
    int64_t server_start_unix_us = 0;
    uint64_t refusals[kRefusalCount] = {};   // by Refusal, since server start
    uint64_t mark_write_failures = 0;        // the local mark file, since server start
    uint64_t coord_mark_write_failures = 0;  // the coordinator's mark (etcd or ZooKeeper), since server start
};

}  // namespace snowflake::core
