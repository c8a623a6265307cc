// The lease state machine; see lease.hpp.
#include "lease.hpp"

#include "ascii.hpp"
#include "coord_schema.hpp"  // the holder of a worker key: classify_holder, describe_holder
#include "time.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace snowflake::core {

namespace {
// A worker id's digits at text[*at...] (spaces before and after skipped);
// -1 if there are none or the number is above kMaxWorker.
int32_t range_number(std::string_view text, size_t* at) noexcept {
    size_t i = *at;
    while (i < text.size() && text[i] == ' ') i++;
    int64_t v = 0;
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 5) v = v * 10 + (text[i++] - '0');
    if (i == start || (i < text.size() && text[i] >= '0' && text[i] <= '9')) return -1;
    while (i < text.size() && text[i] == ' ') i++;
    *at = i;
    return v <= kMaxWorker ? static_cast<int32_t>(v) : -1;
}
}  // namespace

const char* parse_worker_range(std::string_view text, int32_t* lo, int32_t* hi) noexcept {
    size_t at = 0;
    while (at < text.size() && text[at] == ' ') at++;
    if (at == text.size()) {
        *lo = 0;
        *hi = kMaxWorker;
        return nullptr;
    }
    const int32_t a = range_number(text, &at);
    if (a < 0) return "A worker id range is N-M or N, with worker ids from 0 to 1023.";
    int32_t b = a;
    if (at < text.size() && text[at] == '-') {
        at++;
        b = range_number(text, &at);
        if (b < 0) return "A worker id range is N-M or N, with worker ids from 0 to 1023.";
    }
    if (at != text.size()) return "A worker id range is N-M or N, with worker ids from 0 to 1023.";
    if (b < a) return "The range's first worker id is above its last.";
    *lo = a;
    *hi = b;
    return nullptr;
}

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

// The TTL the deadline counts with: the asked one, or what the coordinator
// granted if shorter. A grant is used as granted, below the settings' one
// second too (a ZooKeeper ensemble with a short minSessionTimeout): raising
// it would put the deadline past the session's end.
int64_t ttl_ms_of(const Lease& l, const LeaseConfig& cfg) {
    const int64_t asked = clamp_ttl_ms(cfg.ttl_ms);
    return l.granted_ttl_ms > 0 ? std::min(asked, l.granted_ttl_ms) : asked;
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
    const int divisor = cfg.relayed_renewals ? kRelayedRenewalDivisor : kDirectRenewalDivisor;
    l.deadline_ns = add_sat(l.counted_send_ns, (ttl - fencing_margin_ms(ttl)) * kNsPerMs);
    l.next_keepalive_ns = add_sat(l.confirmed_send_ns, ttl / divisor * kNsPerMs);
}

// A confirmation of a request sent at send_ns, newer than every earlier one:
// what the deadline counts from (see "Relayed renewals" in lease.hpp).
void count_confirmation(Lease& l, const LeaseConfig& cfg, int64_t send_ns) {
    l.confirmed_send_ns = send_ns;
    if (!cfg.relayed_renewals) {
        l.counted_send_ns = send_ns;
        return;
    }
    const int64_t window_ns = ttl_ms_of(l, cfg) / kRelayWindowDivisor * kNsPerMs;
    int32_t reached = 0;  // the oldest ones sent at least the window before this one
    while (reached < l.recent_count && l.recent_sends_ns[reached] <= send_ns - window_ns) {
        l.counted_send_ns = std::max(l.counted_send_ns, l.recent_sends_ns[reached]);
        reached++;
    }
    // Full (confirmations closer together than window / kRecentRenewals):
    // the oldest waiting one is dropped, which can only count from earlier.
    if (l.recent_count - reached == kRecentRenewals) reached++;
    std::copy(l.recent_sends_ns + reached, l.recent_sends_ns + l.recent_count, l.recent_sends_ns);
    l.recent_count -= reached;
    l.recent_sends_ns[l.recent_count++] = send_ns;
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
    // Not raised to the settings' one second: a shorter grant keeps half.
    const int64_t ttl = std::clamp<int64_t>(ttl_ms, 1, int64_t{3600} * 1000);
    return std::min(std::max<int64_t>(1000, ttl / 10), ttl / 2);
}

const char* lease::state_name(LeaseState s) noexcept {
    switch (s) {
        case LeaseState::Static: return "static";
        case LeaseState::Acquiring: return "acquiring";
        case LeaseState::Held: return "held";
        case LeaseState::Expired: return "expired";
        case LeaseState::Standby: return "standby";
    }
    return "unknown";
}

const char* lease::action_name(LeaseAction a) noexcept {
    switch (a) {
        case LeaseAction::Wait: return "wait";
        case LeaseAction::Grant: return "grant";
        case LeaseAction::CheckFleet: return "check fleet";
        case LeaseAction::ListWorkers: return "list workers";
        case LeaseAction::Claim: return "claim";
        case LeaseAction::ReadMark: return "read mark";
        case LeaseAction::KeepAlive: return "keepalive";
        case LeaseAction::Revoke: return "revoke";
    }
    return "unknown";
}

const char* lease::error_name(LeaseError e) noexcept {
    switch (e) {
        case LeaseError::None: return "none";
        case LeaseError::Grant: return "grant";
        case LeaseError::CheckFleet: return "check_fleet";
        case LeaseError::ListWorkers: return "list_workers";
        case LeaseError::Claim: return "claim";
        case LeaseError::ReadMark: return "read_mark";
        case LeaseError::KeepAlive: return "keepalive";
        case LeaseError::Revoke: return "revoke";
        case LeaseError::HeldByOther: return "held_by_other";
        case LeaseError::PreviousRun: return "previous_run";
        case LeaseError::Clone: return "clone";
        case LeaseError::FleetSettings: return "fleet_settings";
        case LeaseError::LeaseGone: return "lease_gone";
        case LeaseError::DeadlinePassed: return "deadline_passed";
    }
    return "unknown";
}

const char* lease::error_hint(LeaseError e) noexcept {
    switch (e) {
        case LeaseError::Clone:
            return "Two servers run from copies of one data directory with the same host name, port and path "
                   "(a cloned VM, a container with a copied data directory): give each copy its own "
                   "snowflake.worker_id (or leave it unset), or stop one of them.";
        case LeaseError::FleetSettings:
            return "Set snowflake.epoch and snowflake.layout to the fleet's (the detail names the one that "
                   "differs), as on every other node under this snowflake.lease_prefix, and restart the server: "
                   "nodes with different epochs or layouts issue the same ids. A fleet that moves to another "
                   "epoch or layout moves to a new snowflake.lease_prefix (its marks count the old epoch's "
                   "milliseconds, for ids of the old layout).";
        default: return nullptr;
    }
}

static LeaseError error_of(LeaseAction a) {
    switch (a) {
        case LeaseAction::Grant: return LeaseError::Grant;
        case LeaseAction::CheckFleet: return LeaseError::CheckFleet;
        case LeaseAction::ListWorkers: return LeaseError::ListWorkers;
        case LeaseAction::Claim: return LeaseError::Claim;
        case LeaseAction::ReadMark: return LeaseError::ReadMark;
        case LeaseAction::KeepAlive: return LeaseError::KeepAlive;
        case LeaseAction::Revoke: return LeaseError::Revoke;
        case LeaseAction::Wait: break;
    }
    return LeaseError::None;
}

Lease lease::start(const LeaseConfig& cfg, int64_t now_ns) noexcept {
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

int64_t lease::retry_delay_ns(int32_t consecutive_failures, int64_t ttl_ms) noexcept {
    const int32_t n = std::clamp<int32_t>(consecutive_failures, 1, 11);
    const int64_t cap = std::max<int64_t>(kMinRetryMs, clamp_ttl_ms(ttl_ms) / 6);
    return std::min<int64_t>(kMinRetryMs << (n - 1), cap) * kNsPerMs;
}

LeaseStep lease::next_step(const Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
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
    } else if (cfg.check_fleet && !l.fleet_checked) {
        s.action = LeaseAction::CheckFleet;
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

bool lease::may_issue(LeaseState state, int64_t deadline_ns, int64_t now_ns) noexcept {
    if (state == LeaseState::Static) return true;
    return state == LeaseState::Held && now_ns < deadline_ns;
}

bool lease::may_issue(const Lease& l, int64_t now_ns) noexcept {
    if (l.stopping) return false;
    if (l.state == LeaseState::Held && !holds_id(l)) return false;
    return lease::may_issue(l.state, l.deadline_ns, now_ns);
}

bool lease::tick(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
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

void lease::on_grant_ok(Lease& l, const LeaseConfig& cfg, int64_t lease_id, int64_t granted_ttl_ms,
                       int64_t send_ns, int64_t now_ns) noexcept {
    l.lease_id = lease_id;
    l.granted_ttl_ms = granted_ttl_ms > 0 ? granted_ttl_ms : 0;
    l.worker = -1;
    l.mark_read = false;
    l.fleet_checked = false;
    reset_candidate(l, cfg);
    // A new lease (session): the service started counting it itself.
    l.confirmed_send_ns = send_ns;
    l.counted_send_ns = send_ns;
    l.recent_count = 0;
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

int32_t lease::choose_worker(Lease& l, const LeaseConfig& cfg, const TakenIds& taken,
                            uint32_t random_value) noexcept {
    if (cfg.static_worker >= 0) {
        l.candidate = cfg.static_worker;
        return l.candidate;
    }
    l.candidate = -1;
    const int32_t lo = std::clamp<int32_t>(cfg.worker_min, 0, kMaxWorker);
    const int32_t hi = std::clamp<int32_t>(cfg.worker_max, lo, kMaxWorker);
    if (l.previous_worker >= lo && l.previous_worker <= hi && !taken_has(taken, l.previous_worker)) {
        l.candidate = l.previous_worker;
        return l.candidate;
    }
    const int32_t n = hi - lo + 1;
    // Offset of the search's start in the range: rotate_from outside it (the
    // default 0, one past the range's last id) starts at its lowest id.
    const int32_t start = l.rotate_from >= lo && l.rotate_from <= hi ? l.rotate_from - lo : 0;
    int32_t free_ids[kSpreadAfterContention];
    int32_t found = 0;
    const int32_t wanted =
        l.contention >= 5 ? kSpreadAfterContention : std::min<int32_t>(int32_t{1} << l.contention, kSpreadAfterContention);
    for (int32_t i = 0; i < n && found < wanted; i++) {
        const int32_t w = lo + (start + i) % n;
        if (!taken_has(taken, w)) free_ids[found++] = w;
    }
    if (found == 0) return -1;
    l.candidate = free_ids[random_value % static_cast<uint32_t>(found)];
    return l.candidate;
}

void lease::on_fleet_checked(Lease& l, const LeaseConfig& cfg, FleetCheck result, const char* sentence,
                             int64_t now_ns) noexcept {
    if (l.lease_id == 0) return;
    if (result == FleetCheck::Agree) {
        l.fleet_checked = true;
        l.consecutive_failures = 0;
        l.retry_at_ns = now_ns;
        return;
    }
    l.failures++;
    if (l.consecutive_failures < std::numeric_limits<int32_t>::max()) l.consecutive_failures++;
    set_error(l, LeaseError::FleetSettings, sentence);
    l.retry_at_ns = add_sat(now_ns, lease::retry_delay_ns(l.consecutive_failures, ttl_ms_of(l, cfg)));
}

void lease::on_claim_ok(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
    (void)cfg;
    l.worker = l.candidate;
    l.mark_read = false;
    l.contention = 0;
    l.consecutive_failures = 0;
    l.taken_by_other = false;
    l.same_name_lease = 0;
    l.retry_at_ns = now_ns;
}

namespace {

// A static id held by another run with this node's name (see
// lease::on_claim_taken): left to its lease's expiry, the claim tried again
// soon; a live clone once the same lease kept it well past its TTL.
void held_by_same_name(Lease& l, const LeaseConfig& cfg, const NodeIdentity& holder, const NodeIdentity& me,
                       int64_t holder_lease, int64_t now_ns) {
    if (l.same_name_lease != holder_lease || holder_lease == 0) {
        l.same_name_lease = holder_lease;
        l.same_name_seen_ns = now_ns;
        l.same_name_ttl_ms = holder.lease_ttl_ms > 0 ? holder.lease_ttl_ms : int64_t{kMaxLeaseTtlS} * 1000;
    }
    const int64_t ttl = std::min<int64_t>(l.same_name_ttl_ms, int64_t{3600} * 1000);
    const int64_t verdict_ns = add_sat(l.same_name_seen_ns,
                                       (ttl + std::max(lease::kCloneVerdictMinMs, ttl / 2)) * kNsPerMs);
    const bool live = holder_lease != 0 && now_ns >= verdict_ns;
    l.taken_by_other = true;
    l.failures++;
    if (l.consecutive_failures < std::numeric_limits<int32_t>::max()) l.consecutive_failures++;
    const std::string theirs = describe_instance(holder), mine = describe_instance(me);
    const std::string name = printable(holder.host, 40) + " port " + std::to_string(holder.port);
    char text[kLeaseErrorSize];
    if (live) {
        std::snprintf(text, sizeof text,
                      "worker id %d is held by a live clone of this node (host %s): %s renews its lease; "
                      "this node is %s",
                      static_cast<int>(l.candidate), name.c_str(), theirs.c_str(), mine.c_str());
        set_error(l, LeaseError::Clone, text);
        l.retry_at_ns = add_sat(now_ns, lease::retry_delay_ns(l.consecutive_failures, ttl_ms_of(l, cfg)));
        return;
    }
    std::snprintf(text, sizeof text,
                  "worker id %d is held by another run of this node (host %s): %s, this one is %s; "
                  "a previous run's lease is left to expire",
                  static_cast<int>(l.candidate), name.c_str(), theirs.c_str(), mine.c_str());
    set_error(l, LeaseError::PreviousRun, text);
    l.retry_at_ns = add_sat(now_ns, std::min<int64_t>(1000, ttl_ms_of(l, cfg) / 4) * kNsPerMs);
}

}  // namespace

void lease::on_claim_taken(Lease& l, const LeaseConfig& cfg, std::string_view holder_text,
                          int64_t holder_lease, int64_t now_ns, std::string_view own_identity) noexcept {
    if (holder_lease != 0 && holder_lease == l.lease_id) {
        lease::on_claim_ok(l, cfg, now_ns);
        return;
    }
    const int32_t tried = l.candidate;
    NodeIdentity holder, me;
    const HolderKind kind = decode_node_identity(holder_text, &holder) && decode_node_identity(own_identity, &me)
                                ? classify_holder(holder, me)
                                : HolderKind::Other;
    if (kind == HolderKind::ThisRun && holder_lease != 0) {
        char text[kLeaseErrorSize];
        std::snprintf(text, sizeof text,
                      "worker id %d is held by an earlier lease of this run (lease %lld): revoking that lease",
                      static_cast<int>(tried), static_cast<long long>(holder_lease));
        set_error(l, LeaseError::PreviousRun, text);
        l.revoke_lease = holder_lease;
        l.retry_at_ns = now_ns;
        return;
    }
    if (kind == HolderKind::SameName && cfg.static_worker >= 0) {
        held_by_same_name(l, cfg, holder, me, holder_lease, now_ns);
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
        l.retry_at_ns = add_sat(now_ns, lease::retry_delay_ns(l.consecutive_failures, ttl_ms_of(l, cfg)));
        return;
    }
    l.contention = l.contention < std::numeric_limits<int32_t>::max() ? l.contention + 1 : l.contention;
    if (tried >= 0) l.rotate_from = (tried + 1) % (kMaxWorker + 1);
    if (tried == l.previous_worker) l.previous_worker = -1;
    reset_candidate(l, cfg);
    l.retry_at_ns = l.contention > kContentionBeforeBackoff
                        ? add_sat(now_ns, lease::retry_delay_ns(l.contention - kContentionBeforeBackoff,
                                                               ttl_ms_of(l, cfg)))
                        : now_ns;
}

void lease::on_revoked(Lease& l, int64_t now_ns) noexcept {
    l.revoke_lease = 0;
    l.retry_at_ns = now_ns;
}

void lease::on_mark_read(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept {
    if (l.worker < 0 || l.lease_id == 0) return;
    l.mark_read = true;
    l.previous_worker = l.worker;
    l.consecutive_failures = 0;
    l.state = LeaseState::Held;
    lease::tick(l, cfg, now_ns);
}

void lease::on_keepalive_ok(Lease& l, const LeaseConfig& cfg, int64_t send_ns,
                           int64_t now_ns) noexcept {
    if (l.lease_id == 0) return;
    l.renewals++;
    l.consecutive_failures = 0;
    if (send_ns > l.confirmed_send_ns) {
        count_confirmation(l, cfg, send_ns);
        recompute_deadline(l, cfg);
    }
    // A keepalive answered late must not make the next one due at once, over
    // and over; the deadline still counts from the send time.
    l.next_keepalive_ns = std::max(l.next_keepalive_ns, add_sat(now_ns, kMinKeepaliveGapNs));
    if (l.state == LeaseState::Expired && holds_id(l) && now_ns < l.deadline_ns) {
        // The lease never lapsed in the coordinator, so neither did our key: ours again.
        l.state = LeaseState::Held;
    }
}

void lease::on_lease_gone(Lease& l, const LeaseConfig& cfg, int64_t now_ns, const char* lease_text,
                          const char* coordinator) noexcept {
    if (l.state == LeaseState::Static) return;
    l.failures++;
    char own[40];
    if (lease_text == nullptr) {
        std::snprintf(own, sizeof own, "lease %lld", static_cast<long long>(l.lease_id));
        lease_text = own;
    }
    char text[kLeaseErrorSize];
    std::snprintf(text, sizeof text, "%s no longer exists in %s%s", lease_text,
                  coordinator != nullptr ? coordinator : "the coordinator",
                  l.worker >= 0 ? ": the worker id it held is lost" : "");
    set_error(l, LeaseError::LeaseGone, text);
    drop_lease(l, cfg, now_ns);
}

void lease::on_failure(Lease& l, const LeaseConfig& cfg, LeaseAction what, const char* error,
                      int64_t now_ns) noexcept {
    if (l.state == LeaseState::Static) return;
    l.failures++;
    l.consecutive_failures =
        l.consecutive_failures < std::numeric_limits<int32_t>::max() ? l.consecutive_failures + 1
                                                                      : l.consecutive_failures;
    set_error(l, error_of(what), error);
    const int64_t at = add_sat(now_ns, lease::retry_delay_ns(l.consecutive_failures, ttl_ms_of(l, cfg)));
    if (what == LeaseAction::KeepAlive) {
        l.next_keepalive_ns = at;
    } else {
        l.retry_at_ns = at;
    }
}

void lease::on_shutdown(Lease& l) noexcept { l.stopping = true; }

bool adopt_lost_write(bool current_ours, std::string_view current_value, const int64_t* unconfirmed, size_t n,
                      Mark* out) noexcept {
    Mark found;
    if (!current_ours || !decode_coord_mark(current_value, &found) || found.clean) return false;
    if (unconfirmed == nullptr || std::find(unconfirmed, unconfirmed + n, found.ms) == unconfirmed + n)
        return false;
    *out = found;
    return true;
}

ShutdownPlan plan_shutdown(const Lease& l, int64_t now_ns) noexcept {
    ShutdownPlan p;
    if (l.state == LeaseState::Static) return p;
    p.write_exact_mark = holds_id(l) && l.state == LeaseState::Held && now_ns < l.deadline_ns;
    p.revoke = l.lease_id != 0;
    return p;
}

}  // namespace snowflake::core
