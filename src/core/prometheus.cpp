// The /metrics text; see prometheus.hpp.
#include "prometheus.hpp"

#include "stats_columns.hpp"
#include "text.hpp"
#include "time.hpp"

#include <type_traits>

namespace snowflake::core::http {
namespace {

// v in units of 10^-digits seconds (digits 0 to 6) as exact decimal
// seconds, trailing zeros dropped: "1.5", "0.00025", "-2".
void exact_seconds(BufWriter& w, int64_t v, int digits) noexcept {
    int64_t per_second = 1;
    for (int k = 0; k < digits; k++) per_second *= 10;
    if (v < 0) {
        w.ch('-');
        v = -v;  // v is far from INT64_MIN here (times and durations)
    }
    w.i64(v / per_second);
    int64_t f = v % per_second;
    if (f == 0) return;
    char frac[6];
    for (int k = digits - 1; k >= 0; k--) {
        frac[k] = static_cast<char>('0' + f % 10);
        f /= 10;
    }
    size_t n = static_cast<size_t>(digits);
    while (frac[n - 1] == '0') n--;
    w.ch('.');
    w.raw(frac, n);
}

// Seconds from milliseconds, exact.
void seconds_from_ms(BufWriter& w, int64_t ms) noexcept { exact_seconds(w, ms, 3); }

// Seconds from microseconds, exact.
void seconds_from_us(BufWriter& w, int64_t us) noexcept { exact_seconds(w, us, 6); }

// A Prometheus label value: backslash, double quote and newline escaped,
// other control characters dropped.
void label_value(BufWriter& w, const char* s) noexcept {
    for (const char* p = s; *p != '\0'; p++) {
        if (*p == '\\' || *p == '"') {
            w.ch('\\');
            w.ch(*p);
        } else if (*p == '\n') {
            w.str("\\n");
        } else if (static_cast<unsigned char>(*p) >= 0x20) {
            w.ch(*p);
        }
    }
}

// One metric: HELP naming the snowflake_stats column (or "health"), TYPE,
// and one sample unless the value is missing (a NULL column).
void metric_head(BufWriter& w, const char* name, const char* type, const char* help,
                 const char* column) {
    w.str("# HELP ");
    w.str(name);
    w.ch(' ');
    w.str(help);
    if (column != nullptr) {
        w.str(" (snowflake_stats.");
        w.str(column);
        w.ch(')');
    }
    w.str("\n# TYPE ");
    w.str(name);
    w.ch(' ');
    w.str(type);
    w.ch('\n');
}

// One sample line without labels: "name value".
template <class Int>
void sample(BufWriter& w, const char* name, Int v) {
    w.str(name);
    w.ch(' ');
    if constexpr (std::is_signed_v<Int>)
        w.i64(v);
    else
        w.u64(v);
    w.ch('\n');
}

// A counter: HELP, TYPE and its sample.
void counter(BufWriter& w, const char* name, const char* help, const char* column, uint64_t v) {
    metric_head(w, name, "counter", help, column);
    sample(w, name, v);
}

// A gauge of an integer: HELP, TYPE and its sample.
void gauge_int(BufWriter& w, const char* name, const char* help, const char* column, int64_t v) {
    metric_head(w, name, "gauge", help, column);
    sample(w, name, v);
}

// A gauge in seconds from milliseconds; no sample when present is false.
void gauge_seconds(BufWriter& w, const char* name, const char* help, const char* column, int64_t ms,
                   bool present = true) {
    metric_head(w, name, "gauge", help, column);
    if (!present) return;
    w.str(name);
    w.ch(' ');
    seconds_from_ms(w, ms);
    w.ch('\n');
}

// The metric of one column of snowflake_stats (stats_columns.hpp).
void column_metric(BufWriter& w, const StatsColumn& c, const StatsSnapshot& s) {
    const StatValue v = c.value(s);
    switch (c.kind) {
        case MetricKind::None:
            return;
        case MetricKind::Counter:
            counter(w, c.metric, c.help, c.column, static_cast<uint64_t>(v.n));
            return;
        case MetricKind::Gauge:
            gauge_int(w, c.metric, c.help, c.column, v.n);
            return;
        case MetricKind::GaugeBool:
            metric_head(w, c.metric, "gauge", c.help, c.column);
            if (v.present) sample(w, c.metric, int64_t{v.n != 0 ? 1 : 0});
            return;
        case MetricKind::Seconds:
            gauge_seconds(w, c.metric, c.help, c.column, v.n, v.present);
            return;
        case MetricKind::UnixSeconds:
            gauge_seconds(w, c.metric, c.help, c.column, floor_div(v.n, kUsPerMs), v.present);
            return;
        case MetricKind::LeaseInfo:
            // The lease id is a label: as a sample value (a float)
            // Prometheus would round it. The metric shows the lease_id
            // column too (MetricKind::None there).
            metric_head(w, c.metric, "gauge", c.help, "lease_state, snowflake_stats.lease_id");
            w.str(c.metric);
            w.str("{state=\"");
            w.str(v.text);
            w.str("\",lease_id=\"");
            if (s.lease_id != 0) w.i64(s.lease_id);
            w.str("\"} 1\n");
            return;
        case MetricKind::CoordinatorInfo:
            // The session id is a label, as lease_id is in
            // snowflake_lease_info (the lease_session column is
            // MetricKind::None).
            metric_head(w, c.metric, "gauge", c.help, "coordinator, snowflake_stats.lease_session");
            w.str(c.metric);
            w.str("{coordinator=\"");
            w.str(v.text);
            w.str("\",session=\"");
            w.str(s.lease_session);
            w.str("\"} 1\n");
            return;
        case MetricKind::LayoutInfo:
            // A profile's name or "time 40, worker 12, sequence 11, unit
            // 1ms": no quote or backslash to escape.
            metric_head(w, c.metric, "gauge", c.help, c.column);
            w.str(c.metric);
            w.str("{layout=\"");
            w.str(v.text);
            w.str("\"} 1\n");
            return;
        case MetricKind::LeaseErrorInfo:
            // The kind of the last failure, a bounded word; its sentence is
            // in snowflake_stats and the server log, never in a label.
            metric_head(w, c.metric, "gauge", c.help, c.column);
            if (s.lease_last_error_reason != LeaseError::None &&
                (s.lease_state == LeaseState::Acquiring || s.lease_state == LeaseState::Expired)) {
                w.str(c.metric);
                w.str("{reason=\"");
                w.str(lease::error_name(s.lease_last_error_reason));
                w.str("\"} 1\n");
            }
            return;
    }
}

void request_metrics(BufWriter& w, const RequestStats& r) {
    constexpr Endpoint kAll[] = {Endpoint::IdsBatch, Endpoint::IdDecode, Endpoint::UuidsBatch,
                                 Endpoint::Livez,    Endpoint::Readyz,   Endpoint::Metrics,
                                 Endpoint::NotFound};
    metric_head(w, "snowflake_http_requests_total", "counter",
                "Requests the HTTP endpoint answered since its worker started, by endpoint and status code.",
                nullptr);
    for (const Endpoint e : kAll) {
        for (const RequestStats::CodeCount& c : r.of(e).codes) {
            if (c.status == 0) continue;
            w.str("snowflake_http_requests_total{endpoint=\"");
            w.str(endpoint_name(e));
            w.str("\",code=\"");
            if (c.status > 0)
                w.i64(c.status);
            else
                w.str("other");
            w.str("\"} ");
            w.u64(c.count);
            w.ch('\n');
        }
    }
    counter(w, "snowflake_http_ids_issued_total",
            "Ids the HTTP endpoint handed out since its worker started (a share of snowflake_ids_issued_total).",
            nullptr, r.ids());
    counter(w, "snowflake_http_uuids_issued_total",
            "UUIDv7 values the HTTP endpoint handed out since its worker started.", nullptr, r.uuids());
    metric_head(w, "snowflake_http_request_duration_seconds", "histogram",
                "Time the HTTP endpoint took to decide and queue each answer, by endpoint.", nullptr);
    for (const Endpoint e : kAll) {
        const RequestStats::PerEndpoint& p = r.of(e);
        uint64_t cumulative = 0;
        for (int i = 0; i <= kDurationBuckets; i++) {
            w.str("snowflake_http_request_duration_seconds_bucket{endpoint=\"");
            w.str(endpoint_name(e));
            w.str("\",le=\"");
            if (i < kDurationBuckets) {
                cumulative += p.buckets[i];
                seconds_from_us(w, kDurationBucketsUs[i]);
            } else {
                cumulative = p.count;
                w.str("+Inf");
            }
            w.str("\"} ");
            w.u64(cumulative);
            w.ch('\n');
        }
        w.str("snowflake_http_request_duration_seconds_sum{endpoint=\"");
        w.str(endpoint_name(e));
        w.str("\"} ");
        seconds_from_us(w, p.sum_us);
        w.str("\nsnowflake_http_request_duration_seconds_count{endpoint=\"");
        w.str(endpoint_name(e));
        w.str("\"} ");
        w.u64(p.count);
        w.ch('\n');
    }
}

}  // namespace

void RequestStats::record(Endpoint e, int status, int64_t duration_us) noexcept {
    const int i = static_cast<int>(e);
    if (i < 0 || i >= kEndpointCount) return;
    PerEndpoint& p = per_[i];
    if (status < 100 || status > 599) status = -1;
    // The code's slot or a free one; the last slot is kept for "other".
    CodeCount* slot = &p.codes[kMaxCodes - 1];
    for (int k = 0; k < kMaxCodes - 1; k++) {
        if (p.codes[k].status == status || p.codes[k].status == 0) {
            slot = &p.codes[k];
            break;
        }
    }
    if (slot == &p.codes[kMaxCodes - 1]) status = -1;
    slot->status = status;
    slot->count++;
    if (duration_us < 0) duration_us = 0;
    int b = 0;
    while (b < kDurationBuckets && duration_us > kDurationBucketsUs[b]) b++;
    if (b < kDurationBuckets) p.buckets[b]++;
    p.count++;
    p.sum_us += duration_us;
}

size_t format_metrics(char* buf, size_t cap, const StatsSnapshot& s, const Health& h) noexcept {
    BufWriter w(buf, cap);
    const int64_t epoch_ms = floor_div(s.epoch_unix_us, kUsPerMs);
    char epoch_text[40];
    if (format_rfc3339_ms(epoch_text, sizeof(epoch_text), epoch_ms) == 0) return 0;

    // Identity: the worker id as a label, and as a value (-1 while unset).
    metric_head(w, "snowflake_info", "gauge", "Always 1; the labels name this node's worker id and epoch.",
                nullptr);
    w.str("snowflake_info{worker_id=\"");
    if (s.worker_id >= 0) w.i64(s.worker_id);
    w.str("\",epoch=\"");
    w.str(epoch_text);
    w.str("\"} 1\n");
    metric_head(w, "snowflake_build_info", "gauge", "Always 1; the label is the version of the snowflake library loaded.",
                nullptr);
    w.str("snowflake_build_info{version=\"");
    label_value(w, h.version != nullptr ? h.version : "");
    w.str("\"} 1\n");
    gauge_seconds(w, "process_start_time_seconds", "Start time of the PostgreSQL server, Unix time.", nullptr,
                  floor_div(s.server_start_unix_us, kUsPerMs), s.server_start_unix_us > 0);
    // Every column of snowflake_stats, in its order, from the one table.
    for (const StatsColumn& c : kStatsColumns) column_metric(w, c, s);

    // Refusals and failed mark writes, since the server started (not reset
    // by snowflake_stats_reset()).
    metric_head(w, "snowflake_ids_refused_total", "counter",
                "Calls refused ids since the server started, by cause and SQLSTATE of the error.", nullptr);
    for (int i = 0; i < kRefusalCount; i++) {
        w.str("snowflake_ids_refused_total{cause=\"");
        w.str(kRefusalCause[i]);
        w.str("\",sqlstate=\"");
        w.str(kRefusalSqlstate[i]);
        w.str("\"} ");
        w.u64(s.refusals[i]);
        w.ch('\n');
    }
    metric_head(w, "snowflake_mark_write_failures_total", "counter",
                "Writes of the high-water mark that failed since the server started: the mark file "
                "(mark=\"file\") and the worker id's mark in the coordinator, etcd or ZooKeeper "
                "(mark=\"etcd\", the label's value for both).",
                nullptr);
    w.str("snowflake_mark_write_failures_total{mark=\"file\"} ");
    w.u64(s.mark_write_failures);
    w.str("\nsnowflake_mark_write_failures_total{mark=\"etcd\"} ");
    w.u64(s.coord_mark_write_failures);
    w.ch('\n');

    // Health, computed when scraped.
    gauge_int(w, "snowflake_ready", "1 when this node can issue ids now (what /healthz says), else 0.",
              nullptr, h.ready ? 1 : 0);
    const int64_t behind = s.last_ms >= 0 && h.now_ms < s.last_ms ? s.last_ms - h.now_ms : 0;
    gauge_seconds(w, "snowflake_clock_behind_last_id_seconds",
                  "How far the clock is behind the last id issued (0 when it is not).", nullptr,
                  behind);
    if (h.requests != nullptr) request_metrics(w, *h.requests);
    return w.finish();
}

}  // namespace snowflake::core::http
