// The etcd key and value schema and the node identity; see etcd_schema.hpp.
#include "etcd_schema.hpp"

#include "ascii.hpp"
#include "decimal.hpp"
#include "layout.hpp"
#include "time.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace snowflake::core {

// ---------------------------------------------------------------------------
// Mark values

std::string encode_etcd_mark(const Mark& m) noexcept {
    return std::to_string(m.ms) + (m.clean ? " exact" : " reserved");
}

bool decode_etcd_mark(std::string_view text, Mark* out) noexcept {
    const size_t sp = text.find(' ');
    if (sp == std::string_view::npos) return false;
    const std::string_view kind = text.substr(sp + 1);
    Mark m;
    if (!parse_i64(text.substr(0, sp), &m.ms) || m.ms < -1 || m.ms > kMaxMs) return false;
    if (kind == "exact") {
        m.clean = true;
    } else if (kind == "reserved") {
        m.clean = false;
    } else {
        return false;
    }
    *out = m;
    return true;
}

// ---------------------------------------------------------------------------
// Keys

std::string workers_prefix(std::string_view prefix) noexcept {
    return std::string(prefix) + "/workers/";
}

std::string worker_key(std::string_view prefix, int32_t worker) noexcept {
    return workers_prefix(prefix) + std::to_string(worker);
}

std::string mark_key(std::string_view prefix, int32_t worker) noexcept {
    return std::string(prefix) + "/marks/" + std::to_string(worker);
}

int32_t parse_worker_key(std::string_view prefix, std::string_view key) noexcept {
    const std::string head = workers_prefix(prefix);
    if (key.size() <= head.size() || key.substr(0, head.size()) != head) return -1;
    int64_t v = 0;
    if (!parse_i64(key.substr(head.size()), &v) || !valid_worker(v)) return -1;
    return static_cast<int32_t>(v);
}

bool check_lease_prefix(std::string_view prefix, std::string* reason) noexcept {
    const char* why = nullptr;
    if (prefix.empty() || prefix[0] != '/') {
        why = "The prefix must start with \"/\".";
    } else if (prefix.size() < 2 || prefix.back() == '/') {
        why = "The prefix must not end with \"/\".";
    } else if (prefix.size() > 200) {
        why = "The prefix must be at most 200 bytes long.";
    } else {
        for (char c : prefix) {
            if (c <= 0x20 || c >= 0x7f) {
                why = "The prefix may contain only printable ASCII characters other than space.";
                break;
            }
        }
    }
    if (why == nullptr) return true;
    if (reason != nullptr) *reason = why;
    return false;
}

// ---------------------------------------------------------------------------
// Node identity

namespace {

constexpr std::string_view kIdentityTag = "snowflake-node";

}  // namespace

std::string encode_node_identity(const NodeIdentity& n) noexcept {
    std::string host;
    for (char c : n.host.substr(0, 255)) host += (c <= 0x20 || c >= 0x7f) ? '_' : c;
    if (host.empty()) host = "unknown";
    std::string dir;
    for (char c : n.data_directory.substr(0, 1024)) dir += (c <= 0x20 || c >= 0x7f) ? '_' : c;
    return std::string(kIdentityTag) + " host=" + host + " port=" + std::to_string(n.port) +
           " system_identifier=" + std::to_string(n.system_identifier) +
           " started_unix_ms=" + std::to_string(n.started_unix_ms) +
           (dir.empty() ? std::string() : " data_directory=" + dir);
}

bool same_node(const NodeIdentity& a, const NodeIdentity& b) noexcept {
    return !a.data_directory.empty() && a.data_directory == b.data_directory && a.host == b.host &&
           a.port == b.port && a.system_identifier == b.system_identifier;
}

bool decode_node_identity(std::string_view text, NodeIdentity* out) noexcept {
    NodeIdentity n;
    bool have_host = false, have_port = false, have_sysid = false, have_started = false;
    size_t pos = 0;
    bool first = true;
    while (pos <= text.size()) {
        size_t end = text.find(' ', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view tok = text.substr(pos, end - pos);
        pos = end + 1;
        if (tok.empty()) {
            if (end == text.size()) break;
            return false;  // two spaces in a row, or a leading space
        }
        if (first) {
            if (tok != kIdentityTag) return false;
            first = false;
            continue;
        }
        const size_t eq = tok.find('=');
        if (eq == std::string_view::npos || eq == 0) return false;
        const std::string_view key = tok.substr(0, eq), value = tok.substr(eq + 1);
        int64_t v = 0;
        if (key == "host") {
            if (have_host || value.empty()) return false;
            n.host = std::string(value);
            have_host = true;
        } else if (key == "port") {
            if (have_port || !parse_i64(value, &v) || v < 1 || v > 65535) return false;
            n.port = static_cast<int32_t>(v);
            have_port = true;
        } else if (key == "system_identifier") {
            if (have_sysid || !parse_u64(value, &n.system_identifier)) return false;
            have_sysid = true;
        } else if (key == "started_unix_ms") {
            if (have_started || !parse_i64(value, &n.started_unix_ms)) return false;
            have_started = true;
        } else if (key == "data_directory") {
            if (!n.data_directory.empty() || value.empty()) return false;
            n.data_directory = std::string(value);
        }
        // Other fields: written by a later version; ignored.
    }
    if (first || !have_host || !have_port || !have_sysid || !have_started) return false;
    if (out != nullptr) *out = std::move(n);
    return true;
}

std::string describe_holder(std::string_view value) noexcept {
    NodeIdentity n;
    if (!decode_node_identity(value, &n)) {
        return "a holder that is not a snowflake node (its key holds \"" + printable(value, 80) + "\")";
    }
    const UtcTime t = utc_from_unix_ms(n.started_unix_ms);
    char when[64];
    std::snprintf(when, sizeof when, "%04lld-%02d-%02d %02d:%02d:%02d UTC", static_cast<long long>(t.date.year),
                  t.date.month, t.date.day, t.hour, t.minute, t.second);
    return "host " + printable(n.host, 255) + " port " + std::to_string(n.port) +
           " (system identifier " + std::to_string(n.system_identifier) + ", started " + when + ")";
}

}  // namespace snowflake::core
