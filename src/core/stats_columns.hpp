// The columns of snowflake_stats(), one row each: the column's name and SQL
// type, the Prometheus metric that shows it on /metrics, the metric's HELP,
// and how its value is read from a StatsSnapshot. src/pg/stats.cpp builds the
// SQL row from this table and prometheus.cpp the metrics, so the two cannot
// disagree on a value or miss a column.
//
// Adding a statistic: a field in StatsSnapshot (stats_snapshot.hpp) and the
// line in src/pg/stats.cpp that fills it, one row here, and the OUT column in
// both SQL scripts (snowflake--X.Y.sql and the upgrade script), at the same
// position as its row. stats.cpp refuses a table that does not match the
// function's declared columns (or 1.1's, a prefix of them); test/http.sh and
// stats_columns_test fail while a column has no metric.
#pragma once

#include "pure.hpp"

#include "clock_health.hpp"
#include "lease.hpp"
#include "stats_snapshot.hpp"
#include "time.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake::core {

// The SQL type of a column (the datum stats.cpp makes of a StatValue).
enum class SqlType {
    Int4,         // n
    Int8,         // n
    TimestampTz,  // n, Unix microseconds
    Text,         // text
    Bool,         // n != 0
    Float8,       // f
};

// How /metrics shows a column.
enum class MetricKind {
    None,             // shown by another column's metric (lease_id: in snowflake_lease_info)
    Counter,          // n, as the bits of a uint64_t
    Gauge,            // n, always sampled (NULL in SQL shows as its value, e.g. -1)
    GaugeBool,        // 0 or 1; no sample when not present
    Seconds,          // n milliseconds as seconds; no sample when not present
    UnixSeconds,      // n Unix microseconds as seconds, to the millisecond; no sample when not present
    LeaseInfo,        // the lease state and lease id as labels of a gauge of 1
    LeaseErrorInfo,   // the kind of the last lease failure as a label, while no lease is held
    CoordinatorInfo,  // the coordinator and the lease session as labels of a gauge of 1
    LayoutInfo,       // the text as the label layout of a gauge of 1
};

// One column's value in a snapshot.
struct StatValue {
    bool present = true;    // false: NULL in SQL
    int64_t n = 0;          // integers, counters, booleans (0/1), milliseconds, Unix microseconds
    double f = 0;           // Float8 (the metric of such a column takes n)
    const char* text = "";  // Text (points into the snapshot or a constant)
};

struct StatsColumn {
    const char* column;  // the snowflake_stats column
    SqlType sql_type;
    const char* metric;  // the Prometheus metric (nullptr with MetricKind::None)
    MetricKind kind;
    const char* help;    // HELP, before " (snowflake_stats.<column>)"
    StatValue (*value)(const StatsSnapshot&) noexcept;
};

namespace stats_value {

// A counter's value.
constexpr StatValue count(uint64_t v) noexcept { return StatValue{true, static_cast<int64_t>(v), 0, ""}; }
// An integer that may be NULL.
constexpr StatValue integer(int64_t v, bool present = true) noexcept { return StatValue{present, v, 0, ""}; }
// An id-space millisecond as Unix microseconds (last_timestamp,
// high_water_mark); NULL when negative.
constexpr StatValue id_time(const StatsSnapshot& s, int64_t ms) noexcept {
    return StatValue{ms >= 0, s.epoch_unix_us + ms * kUsPerMs, 0, ""};
}
// A clock error the kernel reports: SQL shows milliseconds with fractions,
// the metric whole milliseconds rounded up; NULL when not reported.
inline StatValue clock_error(int64_t us) noexcept {
    return StatValue{us >= 0, (us + kUsPerMs - 1) / kUsPerMs, us >= 0 ? clock_error_ms(us) : 0, ""};
}

}  // namespace stats_value

// In the order of the SQL function's columns (and of the metrics).
inline constexpr StatsColumn kStatsColumns[] = {
    {"worker_id", SqlType::Int4, "snowflake_worker_id", MetricKind::Gauge,
     "Worker id of this node, -1 while unset.",
     [](const StatsSnapshot& s) noexcept { return stats_value::integer(s.worker_id, s.worker_id >= 0); }},
    {"epoch", SqlType::TimestampTz, "snowflake_epoch_seconds", MetricKind::UnixSeconds,
     "Start of the id range, Unix time.",
     [](const StatsSnapshot& s) noexcept { return stats_value::integer(s.epoch_unix_us); }},
    {"ids_issued", SqlType::Int8, "snowflake_ids_issued_total", MetricKind::Counter, "Ids issued by this node.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.ids_issued); }},
    {"last_timestamp", SqlType::TimestampTz, "snowflake_last_id_timestamp_seconds", MetricKind::UnixSeconds,
     "Time of the last id issued, Unix time.",
     [](const StatsSnapshot& s) noexcept { return stats_value::id_time(s, s.last_ms); }},
    {"overflow_waits", SqlType::Int8, "snowflake_overflow_waits_total", MetricKind::Counter,
     "Calls that waited because a millisecond's ids (ids_per_ms) were used up.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.generator.overflow_waits); }},
    {"clock_backwards_events", SqlType::Int8, "snowflake_clock_backwards_events_total", MetricKind::Counter,
     "Calls that found the clock behind the last id.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.generator.clock_backwards_events); }},
    {"clock_backwards_max_ms", SqlType::Int8, "snowflake_clock_backwards_max_seconds", MetricKind::Seconds,
     "Largest distance the clock was seen behind the last id.",
     [](const StatsSnapshot& s) noexcept { return stats_value::integer(s.generator.clock_backwards_max_ms); }},
    {"clock_backwards_errors", SqlType::Int8, "snowflake_clock_backwards_errors_total", MetricKind::Counter,
     "Calls refused because the clock was behind beyond snowflake.clock_tolerance_ms.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.generator.clock_backwards_errors); }},
    {"since", SqlType::TimestampTz, "snowflake_stats_since_timestamp_seconds", MetricKind::UnixSeconds,
     "When the counters started (server start or snowflake_stats_reset()), Unix time.",
     [](const StatsSnapshot& s) noexcept { return stats_value::integer(s.since_unix_us); }},
    {"high_water_mark", SqlType::TimestampTz, "snowflake_high_water_mark_timestamp_seconds",
     MetricKind::UnixSeconds, "End of the durable reservation: ids may be issued up to this time, Unix time.",
     [](const StatsSnapshot& s) noexcept { return stats_value::id_time(s, s.reserved_until_ms); }},
    {"reservations", SqlType::Int8, "snowflake_reservations_total", MetricKind::Counter,
     "Times the reservation was extended on disk.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.generator.reservations); }},
    {"reservation_waits", SqlType::Int8, "snowflake_reservation_waits_total", MetricKind::Counter,
     "Id requests that waited for a reservation.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.reservation_waits); }},
    {"startup_waits", SqlType::Int8, "snowflake_startup_waits_total", MetricKind::Counter,
     "Calls held back by the high-water mark of the previous run.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.generator.startup_waits); }},
    {"reservation_window_ms", SqlType::Int8, "snowflake_reservation_window_seconds", MetricKind::Seconds,
     "Reservation window in force.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.reservation_window_ms); }},
    {"last_mark_write_ms", SqlType::Int8, "snowflake_last_mark_write_seconds", MetricKind::Seconds,
     "Duration of the last mark write.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.last_mark_write_ms); }},
    {"lease_state", SqlType::Text, "snowflake_lease_info", MetricKind::LeaseInfo,
     "Always 1; the labels name the lease state (static, acquiring, held, expired or standby) and the lease "
     "id in decimal (the etcd lease or the ZooKeeper session; empty for none).",
     [](const StatsSnapshot& s) noexcept {
         return StatValue{true, 0, 0, lease::state_name(s.lease_state)};
     }},
    {"lease_id", SqlType::Int8, nullptr, MetricKind::None, nullptr,
     [](const StatsSnapshot& s) noexcept { return stats_value::integer(s.lease_id, s.lease_id != 0); }},
    {"lease_deadline", SqlType::TimestampTz, "snowflake_lease_deadline_timestamp_seconds", MetricKind::UnixSeconds,
     "Ids are refused after this time unless a keepalive is confirmed, Unix time.",
     [](const StatsSnapshot& s) noexcept {
         return stats_value::integer(s.lease_deadline_unix_us, s.lease_deadline_unix_us >= 0);
     }},
    {"lease_renewals", SqlType::Int8, "snowflake_lease_renewals_total", MetricKind::Counter,
     "Keepalives the coordinator (etcd or ZooKeeper) confirmed.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.lease_renewals); }},
    {"lease_failures", SqlType::Int8, "snowflake_lease_failures_total", MetricKind::Counter,
     "Failed calls to the coordinator (etcd or ZooKeeper).",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.lease_failures); }},
    {"lease_last_error", SqlType::Text, "snowflake_lease_last_error_info", MetricKind::LeaseErrorInfo,
     "Always 1 while no lease is held after a failure; the reason label is the kind of the last failure "
     "(grant, check_fleet, list_workers, claim, read_mark, keepalive, revoke, held_by_other, previous_run, clone, "
     "fleet_settings, lease_gone, deadline_passed); the text is in the column",
     [](const StatsSnapshot& s) noexcept {
         return StatValue{s.lease_last_error[0] != '\0', 0, 0, s.lease_last_error};
     }},
    {"clock_synchronized", SqlType::Bool, "snowflake_clock_synchronized", MetricKind::GaugeBool,
     "1 when the kernel reports the clock synchronised, 0 when not.",
     [](const StatsSnapshot& s) noexcept {
         return stats_value::integer(s.clock_synchronized ? 1 : 0, s.clock_known);
     }},
    {"clock_max_error_ms", SqlType::Float8, "snowflake_clock_max_error_seconds", MetricKind::Seconds,
     "Maximum clock error the kernel reports.",
     [](const StatsSnapshot& s) noexcept { return stats_value::clock_error(s.clock_max_error_us); }},
    {"clock_est_error_ms", SqlType::Float8, "snowflake_clock_est_error_seconds", MetricKind::Seconds,
     "Estimated clock error the kernel reports.",
     [](const StatsSnapshot& s) noexcept { return stats_value::clock_error(s.clock_est_error_us); }},
    {"clock_health_refusals", SqlType::Int8, "snowflake_clock_health_refusals_total", MetricKind::Counter,
     "Calls refused by snowflake.max_clock_error_ms.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.clock_health_refusals); }},
    // 1.2: the coordinator the worker id is leased from.
    {"coordinator", SqlType::Text, "snowflake_coordinator_info", MetricKind::CoordinatorInfo,
     "Always 1; the labels name the coordinator worker ids are leased from (etcd, zookeeper or none) and the "
     "lease or session id as that coordinator prints it (empty for none).",
     [](const StatsSnapshot& s) noexcept {
         return StatValue{true, 0, 0, s.coordinator};
     }},
    {"lease_session", SqlType::Text, nullptr, MetricKind::None, nullptr,
     [](const StatsSnapshot& s) noexcept {
         return StatValue{s.lease_session[0] != '\0', 0, 0, s.lease_session};
     }},
    {"lease_granted_ttl_ms", SqlType::Int8, "snowflake_lease_granted_ttl_seconds", MetricKind::Seconds,
     "Lease TTL (ZooKeeper: session timeout) the coordinator granted.",
     [](const StatsSnapshot& s) noexcept {
         return stats_value::integer(s.lease_granted_ttl_ms, s.lease_granted_ttl_ms > 0);
     }},
    // 1.2: clock failover to a backup worker id (snowflake.clock_backwards).
    {"backup_worker_id", SqlType::Int4, "snowflake_backup_worker_id", MetricKind::Gauge,
     "Backup worker id ids are issued under while the clock is behind this node's last id, -1 while none.",
     [](const StatsSnapshot& s) noexcept {
         return stats_value::integer(s.backup_worker_id, s.backup_worker_id >= 0);
     }},
    {"backup_until", SqlType::TimestampTz, "snowflake_backup_until_seconds", MetricKind::UnixSeconds,
     "Time of the last id under this node's own worker id, Unix time: it goes back to it when the clock "
     "passes this.",
     [](const StatsSnapshot& s) noexcept { return stats_value::id_time(s, s.backup_until_ms); }},
    {"clock_failovers", SqlType::Int8, "snowflake_clock_failovers_total", MetricKind::Counter,
     "Times the clock stepped back and ids went on under a backup worker id, since the server started.",
     [](const StatsSnapshot& s) noexcept { return stats_value::count(s.clock_failovers); }},
    // 1.3: HTTP ids under a worker id of their own (snowflake.http_worker_id).
    {"http_worker_id", SqlType::Int4, "snowflake_http_worker_id", MetricKind::Gauge,
     "Worker id the HTTP endpoint issues its ids under (snowflake.http_worker_id), -1 while they are issued "
     "under worker_id.",
     [](const StatsSnapshot& s) noexcept {
         return stats_value::integer(s.http_worker_id, s.http_worker_id >= 0);
     }},
    // 1.3: the node's layout (snowflake.layout).
    {"layout", SqlType::Text, "snowflake_layout_info", MetricKind::LayoutInfo,
     "Always 1; the layout label is snowflake.layout (a profile's name, or the fields' widths)",
     [](const StatsSnapshot& s) noexcept {
         return StatValue{true, 0, 0, s.layout};
     }},
    {"ids_per_ms", SqlType::Int4, "snowflake_layout_ids_per_millisecond", MetricKind::Gauge,
     "Ids a millisecond the layout has for one worker id: the cap of one node's id rate is a thousand times this.",
     [](const StatsSnapshot& s) noexcept { return stats_value::integer(s.ids_per_ms); }},
    {"lifetime_end", SqlType::TimestampTz, "snowflake_lifetime_end_timestamp_seconds", MetricKind::UnixSeconds,
     "End of the layout's time field from the epoch: no id is issued from then on, Unix time.",
     [](const StatsSnapshot& s) noexcept { return stats_value::integer(s.lifetime_end_unix_us); }},
};
constexpr int kStatsColumnCount = static_cast<int>(sizeof(kStatsColumns) / sizeof(kStatsColumns[0]));
// snowflake_stats as extension 1.1 declared it: the first 25 columns, and
// as 1.2 did: the first 31. A database not yet updated gets these from the
// new library.
constexpr int kStatsColumnCount_1_1 = 25;
constexpr int kStatsColumnCount_1_2 = 31;
static_assert(kStatsColumnCount_1_1 < kStatsColumnCount_1_2, "1.2 added columns after 1.1's");
static_assert(kStatsColumnCount_1_2 < kStatsColumnCount, "1.3 added columns after 1.2's");

}  // namespace snowflake::core
