#include "lease.hpp"

#include "generator.hpp"
#include "time.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace snowflake::core {

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinRetryMs = 250;
constexpr int64_t kMinKeepaliveGapNs = 100 * kNsPerMs;
// Lost claims in a row before the choice backs off instead of retrying at once.
constexpr int32_t kContentionBeforeBackoff = 8;
// After n lost claims in a row, a random one among the 2^n (at most this
// many) lowest free ids: nodes that start together spread out quickly, and
// ids stay low when few of them compete.
constexpr int32_t kSpreadAfterContention = 32;

// TTLs outside what the settings allow are clamped, so that the arithmetic
// below cannot overflow whatever it is given.
int64_t clamp_ttl_ms(int64_t ttl_ms) {
    return std::clamp<int64_t>(ttl_ms, 1000, int64_t{3600} * 1000);
}

int64_t ttl_ms_of(const Lease& l, const LeaseConfig& cfg) {
    const int64_t asked = clamp_ttl_ms(cfg.ttl_ms);
    return l.granted_ttl_ms > 0 ? std::min(asked, clamp_ttl_ms(l.granted_ttl_ms)) : asked;
}

int64_t add_sat(int64_t a, int64_t b) {
    if (b > 0 && a > kNever - b) return kNever;
    if (b < 0 && a < std::numeric_limits<int64_t>::min() - b) return std::numeric_limits<int64_t>::min();
    return a + b;
}

void set_error(Lease& l, LeaseError reason, const char* text) {
    if (text == nullptr) text = "";
    l.last_error_reason = reason;
    std::snprintf(l.last_error, sizeof l.last_error, "%s", text);
}

void recompute_deadline(Lease& l, const LeaseConfig& cfg) {
    const int64_t ttl = ttl_ms_of(l, cfg);
    l.deadline_ns = add_sat(l.confirmed_send_ns, (ttl - fencing_margin_ms(ttl)) * kNsPerMs);
    l.next_keepalive_ns = add_sat(l.confirmed_send_ns, ttl / 3 * kNsPerMs);
}

// Forgets the id being acquired (not the lease).
void reset_candidate(Lease& l, const LeaseConfig& cfg) {
    l.candidate = cfg.static_worker >= 0 ? cfg.static_worker : -1;
}

// Forgets the lease and everything that hung on it.
void drop_lease(Lease& l, const LeaseConfig& cfg, int64_t now_ns) {
    if (l.worker >= 0) l.previous_worker = l.worker;
    l.lease_id = 0;
    l.granted_ttl_ms = 0;
    l.worker = -1;
    l.mark_read = false;
    l.next_keepalive_ns = 0;
    l.retry_at_ns = now_ns;
    reset_candidate(l, cfg);
    if (l.state == LeaseState::Held) l.state = LeaseState::Expired;
}

bool holds_id(const Lease& l) { return l.lease_id != 0 && l.worker >= 0 && l.mark_read; }

}  // namespace

int64_t fencing_margin_ms(int64_t ttl_ms) noexcept {
    const int64_t ttl = clamp_ttl_ms(ttl_ms);
    return std::min(std::max<int64_t>(1000, ttl / 10), ttl / 2);
}

const char* lease_state_name(LeaseState s) noexcept {
    switch (s) {
        case LeaseState::Static: return "static";
        case LeaseState::Acquiring: return "acquiring";
        case LeaseState::Held: return "held";
        case LeaseState::Expired: return "expired";
        case LeaseState::Standby: return "standby";
    }
    return "unknown";
}

const char* lease_action_name(LeaseAction a) noexcept {
    switch (a) {
        case LeaseAction::Wait: return "wait";
        case LeaseAction::Grant: return "grant";
        case LeaseAction::ListWorkers: return "list workers";
        case LeaseAction::Claim: return "claim";
        case LeaseAction::ReadMark: return "read mark";
        case LeaseAction::KeepAlive: return "keepalive";
        case LeaseAction::Revoke: return "revoke";
    }
    return "unknown";
}

const char* lease_error_name(LeaseError e) noexcept {
    switch (e) {
        case LeaseError::None: return "none";
        case LeaseError::Grant: return "grant";
        case LeaseError::ListWorkers: return "list_workers";
        case LeaseError::Claim: return "claim";
        case LeaseError::ReadMark: return "read_mark";
        case LeaseError::KeepAlive: return "keepalive";
        case LeaseError::Revoke: return "revoke";
        case LeaseError::HeldByOther: return "held_by_other";
        case LeaseError::PreviousRun: return "previous_run";
        case LeaseError::LeaseGone: return "lease_gone";
        case LeaseError::DeadlinePassed: return "deadline_passed";
    }
    return "unknown";
}

static LeaseError error_of(LeaseAction a) {
    switch (a) {
        case LeaseAction::Grant: return LeaseError::Grant;
        case LeaseAction::ListWorkers: return LeaseError::ListWorkers;
        case LeaseAction::Claim: return LeaseError::Claim;
        case LeaseAction::ReadMark: return LeaseError::ReadMark;
        case LeaseAction::KeepAlive: return LeaseError::KeepAlive;
        case LeaseAction::Revoke: return LeaseError::Revoke;
        case LeaseAction::Wait: break;
    }
    return LeaseError::None;
}

Lease lease_start(const LeaseConfig& cfg, int64_t now_ns) noexcept {
    Lease l;
    if (!cfg.leasing) {
        l.state = LeaseState::Static;
        l.worker = cfg.static_worker;
        return l;
    }
    l.state = LeaseState::Acquiring;
    l.retry_at_ns = now_ns;
    reset_candidate(l, cfg);
    return l;
}

int64_t lease_retry_delay_ns(int32_t consecutive_failures, int64_t ttl_ms) noexcept {
    const int32_t n = std::clamp<int32_t>(consecutive_failures, 1, 11);
    const int64_t cap = std::max<int64_t>(kMinRetryMs, clamp_ttl_ms(ttl_ms) / 6);
    return std::min<int64_t>(kMinRetryMs << (n - 1), cap) * kNsPerMs;
}

LeaseStep lease_next_step(const Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
    (void)cfg;
    LeaseStep s;
    if (l.state == LeaseState::Static) {
        s.at_ns = kNever;
        return s;
    }
    if (l.stopping) {
        s.at_ns = add_sat(now_ns, 1000 * kNsPerMs);
        return s;
    }
    if (l.lease_id != 0 && now_ns >= l.next_keepalive_ns) {
        s.action = LeaseAction::KeepAlive;
        s.at_ns = now_ns;
        return s;
    }
    if (holds_id(l)) {
        // Wake for the next keepalive, and at the deadline to publish Expired.
        s.at_ns = l.state == LeaseState::Held ? std::min(l.next_keepalive_ns, l.deadline_ns)
                                              : l.next_keepalive_ns;
        return s;
    }
    if (now_ns < l.retry_at_ns) {
        s.at_ns = l.lease_id != 0 ? std::min(l.retry_at_ns, l.next_keepalive_ns) : l.retry_at_ns;
        return s;
    }
    s.at_ns = now_ns;
    if (l.lease_id == 0) {
        s.action = LeaseAction::Grant;
    } else if (l.revoke_lease != 0) {
        s.action = LeaseAction::Revoke;
    } else if (l.worker >= 0) {
        s.action = LeaseAction::ReadMark;
    } else if (l.candidate >= 0) {
        s.action = LeaseAction::Claim;
    } else {
        s.action = LeaseAction::ListWorkers;
    }
    return s;
}

bool lease_may_issue(LeaseState state, int64_t deadline_ns, int64_t now_ns) noexcept {
    if (state == LeaseState::Static) return true;
    return state == LeaseState::Held && now_ns < deadline_ns;
}

bool lease_may_issue(const Lease& l, int64_t now_ns) noexcept {
    if (l.stopping) return false;
    if (l.state == LeaseState::Held && !holds_id(l)) return false;
    return lease_may_issue(l.state, l.deadline_ns, now_ns);
}

bool lease_tick(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
    (void)cfg;
    if (l.state != LeaseState::Held || now_ns < l.deadline_ns) return false;
    l.state = LeaseState::Expired;
    char text[kLeaseErrorSize];
    std::snprintf(text, sizeof text,
                  "no keepalive of lease %lld was confirmed in time: ids are refused until "
                  "the lease is renewed or a new one is held",
                  static_cast<long long>(l.lease_id));
    set_error(l, LeaseError::DeadlinePassed, text);
    return true;
}

void lease_on_grant_ok(Lease& l, const LeaseConfig& cfg, int64_t lease_id, int64_t granted_ttl_ms,
                       int64_t send_ns, int64_t now_ns) noexcept {
    l.lease_id = lease_id;
    l.granted_ttl_ms = granted_ttl_ms > 0 ? granted_ttl_ms : 0;
    l.worker = -1;
    l.mark_read = false;
    reset_candidate(l, cfg);
    l.confirmed_send_ns = send_ns;
    recompute_deadline(l, cfg);
    l.consecutive_failures = 0;
    l.retry_at_ns = now_ns;
}

void taken_add(TakenIds& t, int32_t worker) noexcept {
    if (!valid_worker(worker)) return;
    t.bits[worker / 64] |= uint64_t{1} << (worker % 64);
}

bool taken_has(const TakenIds& t, int32_t worker) noexcept {
    if (!valid_worker(worker)) return true;
    return (t.bits[worker / 64] >> (worker % 64)) & 1U;
}

int32_t lease_choose_worker(Lease& l, const LeaseConfig& cfg, const TakenIds& taken,
                            uint32_t random_value) noexcept {
    if (cfg.static_worker >= 0) {
        l.candidate = cfg.static_worker;
        return l.candidate;
    }
    l.candidate = -1;
    if (l.previous_worker >= 0 && !taken_has(taken, l.previous_worker)) {
        l.candidate = l.previous_worker;
        return l.candidate;
    }
    constexpr int32_t n = kMaxWorker + 1;
    const int32_t start = ((l.rotate_from % n) + n) % n;
    int32_t free_ids[kSpreadAfterContention];
    int32_t found = 0;
    const int32_t wanted =
        l.contention >= 5 ? kSpreadAfterContention : std::min<int32_t>(int32_t{1} << l.contention, kSpreadAfterContention);
    for (int32_t i = 0; i < n && found < wanted; i++) {
        const int32_t w = (start + i) % n;
        if (!taken_has(taken, w)) free_ids[found++] = w;
    }
    if (found == 0) return -1;
    l.candidate = free_ids[random_value % static_cast<uint32_t>(found)];
    return l.candidate;
}

void lease_on_claim_ok(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
    (void)cfg;
    l.worker = l.candidate;
    l.mark_read = false;
    l.contention = 0;
    l.consecutive_failures = 0;
    l.taken_by_other = false;
    l.retry_at_ns = now_ns;
}

void lease_on_claim_taken(Lease& l, const LeaseConfig& cfg, std::string_view holder_text,
                          int64_t holder_lease, int64_t now_ns, std::string_view own_identity) noexcept {
    if (holder_lease != 0 && holder_lease == l.lease_id) {
        lease_on_claim_ok(l, cfg, now_ns);
        return;
    }
    const int32_t tried = l.candidate;
    NodeIdentity holder, me;
    if (holder_lease != 0 && decode_node_identity(holder_text, &holder) &&
        decode_node_identity(own_identity, &me) && same_node(holder, me)) {
        char text[kLeaseErrorSize];
        std::snprintf(text, sizeof text,
                      "worker id %d is held by this node's previous run (lease %lld): revoking that lease",
                      static_cast<int>(tried), static_cast<long long>(holder_lease));
        set_error(l, LeaseError::PreviousRun, text);
        l.revoke_lease = holder_lease;
        l.retry_at_ns = now_ns;
        return;
    }
    if (cfg.static_worker >= 0) {
        l.taken_by_other = true;
        l.failures++;
        l.consecutive_failures++;
        const std::string who = describe_holder(holder_text);
        char text[kLeaseErrorSize];
        std::snprintf(text, sizeof text, "worker id %d is held by another node: %s",
                      static_cast<int>(tried), who.c_str());
        set_error(l, LeaseError::HeldByOther, text);
        l.retry_at_ns = add_sat(now_ns, lease_retry_delay_ns(l.consecutive_failures, ttl_ms_of(l, cfg)));
        return;
    }
    l.contention = l.contention < std::numeric_limits<int32_t>::max() ? l.contention + 1 : l.contention;
    if (tried >= 0) l.rotate_from = (tried + 1) % (kMaxWorker + 1);
    if (tried == l.previous_worker) l.previous_worker = -1;
    reset_candidate(l, cfg);
    l.retry_at_ns = l.contention > kContentionBeforeBackoff
                        ? add_sat(now_ns, lease_retry_delay_ns(l.contention - kContentionBeforeBackoff,
                                                               ttl_ms_of(l, cfg)))
                        : now_ns;
}

void lease_on_revoked(Lease& l, int64_t now_ns) noexcept {
    l.revoke_lease = 0;
    l.retry_at_ns = now_ns;
}

void lease_on_mark_read(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
    if (l.worker < 0 || l.lease_id == 0) return;
    l.mark_read = true;
    l.previous_worker = l.worker;
    l.consecutive_failures = 0;
    l.state = LeaseState::Held;
    lease_tick(l, cfg, now_ns);
}

void lease_on_keepalive_ok(Lease& l, const LeaseConfig& cfg, int64_t send_ns,
                           int64_t now_ns) noexcept {
    if (l.lease_id == 0) return;
    l.renewals++;
    l.consecutive_failures = 0;
    if (send_ns > l.confirmed_send_ns) {
        l.confirmed_send_ns = send_ns;
        recompute_deadline(l, cfg);
    }
    // A keepalive answered late must not make the next one due at once, over
    // and over; the deadline still counts from the send time.
    l.next_keepalive_ns = std::max(l.next_keepalive_ns, add_sat(now_ns, kMinKeepaliveGapNs));
    if (l.state == LeaseState::Expired && holds_id(l) && now_ns < l.deadline_ns) {
        // The lease never lapsed in etcd, so neither did our key: ours again.
        l.state = LeaseState::Held;
    }
}

void lease_on_lease_gone(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
    if (l.state == LeaseState::Static) return;
    l.failures++;
    char text[kLeaseErrorSize];
    std::snprintf(text, sizeof text, "lease %lld no longer exists in etcd%s",
                  static_cast<long long>(l.lease_id),
                  l.worker >= 0 ? ": the worker id it held is lost" : "");
    set_error(l, LeaseError::LeaseGone, text);
    drop_lease(l, cfg, now_ns);
}

void lease_on_failure(Lease& l, const LeaseConfig& cfg, LeaseAction what, const char* error,
                      int64_t now_ns) noexcept {
    if (l.state == LeaseState::Static) return;
    l.failures++;
    l.consecutive_failures =
        l.consecutive_failures < std::numeric_limits<int32_t>::max() ? l.consecutive_failures + 1
                                                                      : l.consecutive_failures;
    set_error(l, error_of(what), error);
    const int64_t at = add_sat(now_ns, lease_retry_delay_ns(l.consecutive_failures, ttl_ms_of(l, cfg)));
    if (what == LeaseAction::KeepAlive) {
        l.next_keepalive_ns = at;
    } else {
        l.retry_at_ns = at;
    }
}

void lease_on_shutdown(Lease& l) noexcept { l.stopping = true; }

ShutdownPlan plan_shutdown(const Lease& l, int64_t now_ns) noexcept {
    ShutdownPlan p;
    if (l.state == LeaseState::Static) return p;
    p.write_exact_mark = holds_id(l) && l.state == LeaseState::Held && now_ns < l.deadline_ns;
    p.revoke = l.lease_id != 0;
    return p;
}

// ---------------------------------------------------------------------------
// Marks

Handover plan_handover(const Mark& local, int64_t local_window_ms, const Mark& etcd_in,
                       int64_t etcd_window_ms, bool etcd_mark_is_ours) noexcept {
    const Mark etcd = etcd_mark_is_ours ? Mark{-1, true} : etcd_in;
    Handover h;
    h.floor_ms = std::max<int64_t>(std::max(local.ms, etcd.ms), -1);
    if (h.floor_ms < 0) return h;
    if (local.ms == h.floor_ms && !local.clean) h.grace_ms = std::max(h.grace_ms, local_window_ms);
    // A reservation in etcd is renewed from its old end when less than half
    // a window is left: it reaches up to 1.5 windows past the writer's clock.
    if (etcd.ms == h.floor_ms && !etcd.clean)
        h.grace_ms = std::max(h.grace_ms, etcd_window_ms + etcd_window_ms / 2);
    h.grace_ms = std::max<int64_t>(h.grace_ms, 0);
    return h;
}

Mark exact_shutdown_mark(int64_t generator_last_ms) noexcept {
    Mark m;
    m.ms = std::clamp<int64_t>(generator_last_ms, -1, kMaxMs);
    m.clean = true;
    return m;
}

namespace {

// Strict decimal: optional '-', digits, no leading zeros (except "0").
bool parse_i64(std::string_view s, int64_t* out) {
    bool neg = false;
    if (!s.empty() && s[0] == '-') {
        neg = true;
        s.remove_prefix(1);
    }
    if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (v > limit) return false;
    *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return true;
}

bool parse_u64(std::string_view s, uint64_t* out) {
    if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        const auto d = static_cast<uint64_t>(c - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

}  // namespace

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

std::string printable(std::string_view s, size_t max_len) {
    std::string out;
    for (char c : s.substr(0, std::min(s.size(), max_len))) {
        out += (c < 0x20 || c >= 0x7f || c == '"') ? '?' : c;
    }
    if (s.size() > max_len) out += "...";
    return out;
}

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

// ---------------------------------------------------------------------------
// Endpoints

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

bool host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
}

bool ipv6_char(char c) {
    return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
           c == '.';
}

// Checks one trimmed entry; on success appends its normal form.
bool parse_endpoint(std::string_view e, std::string* normal, std::string* why) {
    constexpr std::string_view scheme = "http://";
    if (e.substr(0, 8) == "https://") {
        *why = "only http:// endpoints are supported";
        return false;
    }
    if (e.size() < scheme.size() || e.substr(0, scheme.size()) != scheme) {
        *why = "it does not start with http://";
        return false;
    }
    std::string_view rest = e.substr(scheme.size());
    if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    std::string_view host;
    if (!rest.empty() && rest[0] == '[') {
        const size_t close = rest.find(']');
        if (close == std::string_view::npos || close == 1) {
            *why = "its IPv6 address is not closed by \"]\"";
            return false;
        }
        host = rest.substr(0, close + 1);
        for (char c : host.substr(1, host.size() - 2)) {
            if (!ipv6_char(c)) {
                *why = "its IPv6 address contains a character that is not a hex digit, \":\" or \".\"";
                return false;
            }
        }
        rest.remove_prefix(close + 1);
    } else {
        const size_t colon = rest.find(':');
        host = rest.substr(0, colon == std::string_view::npos ? rest.size() : colon);
        if (host.empty()) {
            *why = "it has no host";
            return false;
        }
        for (char c : host) {
            if (!host_char(c)) {
                *why = "its host may contain only letters, digits, \"-\" and \".\"";
                return false;
            }
        }
        if (host.size() > 253 || host[0] == '-' || host[0] == '.') {
            *why = "its host is not a valid host name";
            return false;
        }
        rest.remove_prefix(host.size());
    }
    if (rest.empty() || rest[0] != ':') {
        *why = "it has no port (write http://host:port)";
        return false;
    }
    rest.remove_prefix(1);
    int64_t port = 0;
    if (rest.find('/') != std::string_view::npos) {
        *why = "it has a path; give only http://host:port";
        return false;
    }
    if (!parse_i64(rest, &port) || port < 1 || port > 65535) {
        *why = "its port is not a number from 1 to 65535";
        return false;
    }
    *normal = std::string(scheme) + std::string(host) + ":" + std::to_string(port);
    return true;
}

}  // namespace

bool parse_endpoints(std::string_view text, std::vector<std::string>* out,
                     std::string* reason) noexcept {
    std::vector<std::string> result;
    size_t start = 0;
    size_t index = 0;
    bool all_space = true;
    for (char c : text) {
        if (!is_space(c)) all_space = false;
    }
    if (all_space) {
        if (out != nullptr) out->clear();
        return true;
    }
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view e = text.substr(start, end - start);
        start = end + 1;
        index++;
        while (!e.empty() && is_space(e.front())) e.remove_prefix(1);
        while (!e.empty() && is_space(e.back())) e.remove_suffix(1);
        std::string why;
        std::string normal;
        if (e.empty()) {
            why = "it is empty";
        } else if (parse_endpoint(e, &normal, &why)) {
            if (result.size() == kMaxEndpoints) {
                if (reason != nullptr) {
                    *reason = "At most " + std::to_string(kMaxEndpoints) + " endpoints may be given.";
                }
                return false;
            }
            result.push_back(std::move(normal));
            if (end == text.size()) break;
            continue;
        }
        if (reason != nullptr) {
            *reason = "Endpoint " + std::to_string(index) + " (\"" + printable(e, 80) + "\") is invalid: " +
                      why + ".";
        }
        return false;
    }
    if (out != nullptr) *out = std::move(result);
    return true;
}

}  // namespace snowflake::core
