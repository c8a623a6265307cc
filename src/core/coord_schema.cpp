// The key and value schema, the node identity and the fleet's settings;
// see coord_schema.hpp.
#include "coord_schema.hpp"

#include "ascii.hpp"
#include "decimal.hpp"
#include "id_layout.hpp"
#include "layout.hpp"
#include "time.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace snowflake::core {

// ---------------------------------------------------------------------------
// Mark values

std::string encode_coord_mark(const Mark& m) noexcept {
    return std::to_string(m.ms) + (m.clean ? " exact" : " reserved");
}

bool decode_coord_mark(std::string_view text, Mark* out) noexcept {
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

std::string workers_prefix(std::string_view prefix) noexcept { return std::string(prefix) + "/workers/"; }

std::string worker_key(std::string_view prefix, int32_t worker) noexcept {
    return workers_prefix(prefix) + std::to_string(worker);
}

std::string mark_key(std::string_view prefix, int32_t worker) noexcept {
    return std::string(prefix) + "/marks/" + std::to_string(worker);
}

std::string fleet_key(std::string_view prefix) noexcept { return std::string(prefix) + "/fleet"; }

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
constexpr std::string_view kFleetTag = "snowflake-fleet";

std::string sanitized(const std::string& s, size_t max_len) {
    std::string out;
    for (char c : s.substr(0, max_len)) out += (c <= 0x20 || c >= 0x7f) ? '_' : c;
    return out;
}

// The "<tag> key=value key=value" lines of identities and fleet settings:
// calls field(key, value) for each field; false for a line that is not one
// of tag, or for a field that field() refuses.
template <class Field>
bool read_fields(std::string_view text, std::string_view tag, Field field) {
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
            if (tok != tag) return false;
            first = false;
            continue;
        }
        const size_t eq = tok.find('=');
        if (eq == std::string_view::npos || eq == 0) return false;
        if (!field(tok.substr(0, eq), tok.substr(eq + 1))) return false;
    }
    return !first;
}

}  // namespace

std::string random_instance(const unsigned char (&random)[16]) noexcept {
    static const char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : random) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
    }
    return out;
}

std::string encode_node_identity(const NodeIdentity& n) noexcept {
    std::string host = sanitized(n.host, 255);
    if (host.empty()) host = "unknown";
    const std::string dir = sanitized(n.data_directory, 1024);
    const std::string instance = sanitized(n.instance, 64);
    return std::string(kIdentityTag) + " host=" + host + " port=" + std::to_string(n.port) +
           " system_identifier=" + std::to_string(n.system_identifier) +
           (instance.empty() ? std::string() : " instance=" + instance) +
           " started_unix_ms=" + std::to_string(n.started_unix_ms) +
           (dir.empty() ? std::string() : " data_directory=" + dir) +
           (n.lease_ttl_ms > 0 ? " lease_ttl_ms=" + std::to_string(n.lease_ttl_ms) : std::string()) +
           (n.runtime.empty() ? std::string()
                              : " runtime=" + sanitized(n.runtime, 32) + " pid=" + std::to_string(n.pid));
}

HolderKind classify_holder(const NodeIdentity& holder, const NodeIdentity& me) noexcept {
    if (holder.system_identifier != me.system_identifier) return HolderKind::Other;
    if (!me.instance.empty() && holder.instance == me.instance) return HolderKind::ThisRun;
    const bool same_name = !me.data_directory.empty() && holder.data_directory == me.data_directory &&
                           holder.host == me.host && holder.port == me.port;
    return same_name ? HolderKind::SameName : HolderKind::Other;
}

bool decode_node_identity(std::string_view text, NodeIdentity* out) noexcept {
    NodeIdentity n;
    bool have_host = false, have_port = false, have_sysid = false, have_started = false;
    const bool read = read_fields(text, kIdentityTag, [&](std::string_view key, std::string_view value) {
        int64_t v = 0;
        if (key == "host") {
            if (have_host || value.empty()) return false;
            n.host = std::string(value);
            have_host = true;
        } else if (key == "port") {
            if (have_port || !parse_i64(value, &v) || v < 0 || v > 65535) return false;
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
        } else if (key == "instance") {
            if (!n.instance.empty() || value.empty()) return false;
            n.instance = std::string(value);
        } else if (key == "lease_ttl_ms") {
            if (n.lease_ttl_ms != 0 || !parse_i64(value, &v) || v <= 0) return false;
            n.lease_ttl_ms = v;
        } else if (key == "runtime") {
            if (!n.runtime.empty() || value.empty()) return false;
            n.runtime = std::string(value);
        } else if (key == "pid") {
            if (n.pid != 0 || !parse_i64(value, &v) || v <= 0) return false;
            n.pid = v;
        }
        // Other fields: written by a later version; ignored.
        return true;
    });
    if (!read || !have_host || !have_port || !have_sysid || !have_started) return false;
    if (n.port == 0 && n.runtime.empty()) return false;  // port 0: an application process only
    if (out != nullptr) *out = std::move(n);
    return true;
}

namespace {

std::string started_text(int64_t unix_ms) {
    const UtcTime t = utc_from_unix_ms(unix_ms);
    char when[64];
    std::snprintf(when, sizeof when, "%04lld-%02d-%02d %02d:%02d:%02d UTC", static_cast<long long>(t.date.year),
                  t.date.month, t.date.day, t.hour, t.minute, t.second);
    return when;
}

}  // namespace

std::string describe_holder(std::string_view value) noexcept {
    NodeIdentity n;
    if (!decode_node_identity(value, &n)) {
        return "a holder that is not a snowflake node (its key holds \"" + printable(value, 80) + "\")";
    }
    if (!n.runtime.empty())
        return "an application process (" + printable(n.runtime, 32) + ", pid " + std::to_string(n.pid) +
               ") on host " + printable(n.host, 255) + " (started " + started_text(n.started_unix_ms) + ")";
    return "host " + printable(n.host, 255) + " port " + std::to_string(n.port) + " (system identifier " +
           std::to_string(n.system_identifier) + ", started " + started_text(n.started_unix_ms) + ")";
}

std::string describe_instance(const NodeIdentity& n) noexcept {
    return (n.instance.empty() ? std::string("instance (none recorded)")
                               : "instance " + printable(std::string_view(n.instance).substr(0, 8), 8)) +
           " (started " + started_text(n.started_unix_ms) + ")";
}

std::string utc_text(int64_t unix_us) noexcept {
    const UtcTime t = utc_from_unix_us(unix_us);
    char text[80];
    if (t.micros != 0)
        std::snprintf(text, sizeof text, "%04lld-%02d-%02d %02d:%02d:%02d.%06d UTC",
                      static_cast<long long>(t.date.year), t.date.month, t.date.day, t.hour, t.minute, t.second,
                      t.micros);
    else
        std::snprintf(text, sizeof text, "%04lld-%02d-%02d %02d:%02d:%02d UTC",
                      static_cast<long long>(t.date.year), t.date.month, t.date.day, t.hour, t.minute, t.second);
    return text;
}

// ---------------------------------------------------------------------------
// The fleet's settings

namespace {

std::string widths_text(const Geometry& g) {
    return std::to_string(g.time_bits) + "/" + std::to_string(g.worker_bits) + "/" +
           std::to_string(g.sequence_bits);
}

// "41/6/6": the widths of a geometry (layout.hpp's geometry_valid()).
bool parse_widths(std::string_view v, Geometry* out) {
    int64_t w[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        const size_t slash = i < 2 ? v.find('/') : v.size();
        if (slash == std::string_view::npos || !parse_i64(v.substr(0, slash), &w[i]) || w[i] < 1 || w[i] > 63)
            return false;
        v = i < 2 ? v.substr(slash + 1) : std::string_view{};
    }
    const auto t = static_cast<int32_t>(w[0]), wk = static_cast<int32_t>(w[1]), s = static_cast<int32_t>(w[2]);
    if (!geometry_valid(t, wk, s)) return false;
    *out = geometry_of(t, wk, s);
    return true;
}

}  // namespace

std::string encode_fleet_settings(const FleetSettings& f) noexcept {
    std::string text = std::string(kFleetTag) + " epoch_unix_us=" + std::to_string(f.epoch_unix_us);
    if (f.layout != kTwitter) text += " layout=" + widths_text(f.layout);
    return text;
}

FleetCheck check_fleet_settings(std::string_view recorded, const FleetSettings& mine, std::string_view key,
                                std::string* sentence) noexcept {
    FleetSettings theirs;
    bool have_epoch = false, have_layout = false;
    std::string unknown;
    const bool read = read_fields(recorded, kFleetTag, [&](std::string_view k, std::string_view value) {
        if (k == "epoch_unix_us") {
            if (have_epoch || !parse_i64(value, &theirs.epoch_unix_us)) return false;
            have_epoch = true;
        } else if (k == "layout") {
            if (have_layout || !parse_widths(value, &theirs.layout)) return false;
            have_layout = true;
        } else if (unknown.empty()) {
            unknown = std::string(k);
        }
        return true;
    });
    std::string why;
    FleetCheck result = FleetCheck::Agree;
    if (!read || !have_epoch) {
        result = FleetCheck::Unreadable;
        why = "the fleet's settings in " + std::string(key) + " are not settings this version can read (\"" +
              printable(recorded, 60) + "\")";
    } else if (!unknown.empty()) {
        result = FleetCheck::Unreadable;
        why = "the fleet's settings in " + std::string(key) + " record " + printable(unknown, 40) +
              ", a setting this version does not know";
    } else if (theirs.epoch_unix_us != mine.epoch_unix_us) {
        result = FleetCheck::Differ;
        why = "this node's snowflake.epoch is " + utc_text(mine.epoch_unix_us) + ", the fleet's (in " +
              std::string(key) + ") is " + utc_text(theirs.epoch_unix_us);
    } else if (theirs.layout != mine.layout) {
        result = FleetCheck::Differ;
        why = "this node's snowflake.layout is " + geometry_text(mine.layout) + ", the fleet's (in " +
              std::string(key) + ") is " + geometry_text(theirs.layout);
    }
    if (result != FleetCheck::Agree && sentence != nullptr) *sentence = why;
    return result;
}

}  // namespace snowflake::core
