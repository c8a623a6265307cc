// Worker ids leased from a coordinator (etcd or ZooKeeper): the lease state
// machine (grant, claim, mark read, keepalive, expiry, retries), without the
// network.
//
// Pure: the caller passes in the time (a monotonic clock in nanoseconds for
// everything about the lease, id-space milliseconds for marks), performs the
// coordinator's calls itself (core/coordinator.hpp: src/etcd, src/zk) and
// reports their outcome here. The
// state is plain data (no pointers, no heap), so it can live in shared
// memory. Nothing here sleeps, reads a clock or does I/O.
//
// Safety argument, in two independent layers:
//  1. Fencing. etcd expires a lease TTL seconds after it last renewed it, by
//     its own clock. It received our grant or keepalive after we sent it, so
//     it cannot expire the lease before send_time + TTL. We stop issuing ids
//     at deadline = send time of the last grant/keepalive etcd confirmed
//     + TTL - margin. The margin, max(1 s, TTL/10), absorbs what the send time
//     cannot: clock-rate error between our monotonic clock and etcd's (NTP
//     slews up to 0.05 %, VMs worse: TTL/10 is far above that), a backend that
//     checked the deadline and was then descheduled before handing out its
//     id, and etcd's expiry check interval (~0.5 s). 1 s is the floor so that
//     a short TTL still keeps a scheduling stall inside the margin.
//     ZooKeeper's leader learns of a renewal later than that, from the
//     follower that answered it: there the deadline counts from an earlier
//     confirmation (LeaseConfig::relayed_renewals, below).
//  2. Marks. Each worker id has a mark in the coordinator
//     (<prefix>/marks/<id>): a reservation, written before any id in it is
//     issued, that reaches ahead of the holder's clock. Ids are only issued
//     up to min(local reservation, coordinator's reservation). A new holder
//     starts above max(local mark, coordinator's mark), so it never
//     reissues an earlier holder's ids even if their clocks disagree. The
//     mark is written with a compare on its mod revision and on the worker
//     key still being attached to the writer's lease, so an old holder that
//     lost the id cannot move it any more.
//
// The other halves of leasing, each in its own file: handover.hpp (where a
// new holder starts, how far ids may be issued: the marks), coord_schema.hpp
// (the keys and values in the coordinator, and the node identity a worker
// key holds), endpoints.hpp (snowflake.etcd_endpoints).
//
// Who drives it: the lease driver, src/coord/lease_driver.hpp, the one loop
// (grant, list, claim, revoke of this node's previous run, read the mark and
// hand over, keepalive, the renewal of the coordinator's mark with
// plan_reservation() of reservation.hpp, clean shutdown with the exact mark
// and the revoke) that both the background worker (src/pg/lease_worker.cpp,
// over shared memory) and the client tests (test/coord/lease_loop_test.cpp,
// against a real etcd) run. One Lease per node, owned by the driver; it
// reports each call's outcome here (lease_on_*), with the boot clock of its host, and its host
// publishes the fields backends need (state, worker, deadline_ns, the
// coordinator's reservation) after each step.
//
// Backends only test lease::may_issue(published state, deadline_ns, now) with
// the boot clock before issuing, and cap the generator with
// reserved_until_ms = issue_limit_ms(local reserved_until, the coordinator's
// reserved_until); on NeedReservation beyond the coordinator's reservation
// they ask the worker and wait (in slices) for it to publish a new one.
#pragma once

#include "pure.hpp"

#include "coord_schema.hpp"
#include "layout.hpp"
#include "mark.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace snowflake::core {

// ---------------------------------------------------------------------------
// Settings

constexpr int32_t kMinLeaseTtlS = 5;
constexpr int32_t kMaxLeaseTtlS = 300;
constexpr int32_t kDefaultLeaseTtlS = 30;

struct LeaseConfig {
    int64_t ttl_ms = int64_t{kDefaultLeaseTtlS} * 1000;  // snowflake.lease_ttl
    int32_t static_worker = -1;  // snowflake.worker_id: -1 = lease any free id
    // The range any free id is chosen from (choose_worker(); the whole id
    // space for the extension; 512..1023 by default for the C library's
    // processes, sf_config's worker_id_min/worker_id_max).
    int32_t worker_min = 0;
    int32_t worker_max = kMaxWorker;
    bool leasing = true;         // false when no coordinator is set (etcd_endpoints, zookeeper_hosts)
    // The service learns of a renewal only when a follower relays it
    // (ZooKeeper: see "Relayed renewals" below); false for etcd, whose
    // leader renews the lease when the keepalive reaches it.
    bool relayed_renewals = false;
    // Each new lease compares this node's settings with the fleet's
    // (<prefix>/fleet, coord_schema.hpp) before it claims an id.
    bool check_fleet = true;
};

// Relayed renewals. A ZooKeeper follower answers a renewal (a request that
// went through the leader) without the leader having refreshed the session:
// the leader, which expires sessions, learns that the session was active
// from the follower's answer to its next ping, sent every tickTime/2. A
// follower cut off from the leader right after answering the last renewal
// leaves the leader counting the session from an earlier one. So with
// relayed renewals the deadline counts from the send time of the newest
// confirmed renewal sent at least the relay window (TTL/4) before the last
// confirmed one: the follower had that long to answer a ping between the two,
// and it answered the last one through the leader, so it was still in touch.
// TTL/4 covers tickTime/2 whenever the session timeout is at least
// 2 x tickTime, ZooKeeper's default minimum for it. The session's creation
// counts at once (the leader creates the session itself). Renewals then go
// every TTL/8, so that the deadline still lies about 5/8 of the TTL, less the
// margin, after the next renewal is due (etcd: 2/3 of it).
constexpr int kRelayWindowDivisor = 4;      // the relay window: TTL / 4
constexpr int kRelayedRenewalDivisor = 8;   // a renewal every TTL / 8 (etcd: TTL / 3)
constexpr int kDirectRenewalDivisor = 3;
constexpr int kRecentRenewals = 8;          // confirmed send times kept for the rule above

// max(1 s, TTL/10), at most half the TTL (a grant under two seconds): see
// the safety argument at the top.
int64_t fencing_margin_ms(int64_t ttl_ms) noexcept;

// ---------------------------------------------------------------------------
// The state machine

enum class LeaseState {
    Static,     // no coordinator: snowflake.worker_id is used as is
    Acquiring,  // trying to get a lease and an id; none held since start
    Held,       // an id is held and its mark read: ids may be issued until the deadline
    Expired,    // an id was held and is lost (deadline passed or lease gone); trying again
    Standby,    // shown only: the server is a standby, which takes no lease until promoted
};

enum class LeaseAction {
    Wait,         // nothing to do before at_ns
    Grant,        // client.grant(ttl)
    CheckFleet,   // client.ensure_fleet(<prefix>/fleet), then check_fleet_settings()
    ListWorkers,  // client.range(<prefix>/workers/), then lease::choose_worker()
    Claim,        // client.claim(<prefix>/workers/<candidate>, identity, lease_id)
    ReadMark,     // client.get(<prefix>/marks/<worker>), plan_handover()
    KeepAlive,    // client.keepalive(lease_id)
    Revoke,       // client.revoke(revoke_lease): this node's earlier lease holds the candidate
};

// What the last failure was, as a bounded word for metric labels
// (snowflake_lease_last_error_info{reason}); the sentence is last_error.
enum class LeaseError {
    None,
    Grant,           // a failed call, by the action that made it
    CheckFleet,
    ListWorkers,     // ... also: every worker id held by another node
    Claim,
    ReadMark,        // ... also: a mark this version cannot read
    KeepAlive,
    Revoke,
    HeldByOther,     // snowflake.worker_id is held by another node
    // The id is held by another run with this node's name (its previous
    // run, whose lease is left to expire, or a clone not yet seen renewing),
    // or by an earlier lease of this very run (being revoked).
    PreviousRun,
    Clone,           // the id is held by a live clone: this node's name, another instance, renewed
    FleetSettings,   // this node's settings (snowflake.epoch) differ from the fleet's: no lease
    LeaseGone,       // the coordinator no longer knows the lease (ZooKeeper: session)
    DeadlinePassed,  // no keepalive confirmed before the deadline
};

struct LeaseStep {
    LeaseAction action = LeaseAction::Wait;
    int64_t at_ns = 0;  // Wait: when to ask again (the worker may wake earlier)
};

constexpr size_t kLeaseErrorSize = 256;

struct Lease {
    LeaseState state = LeaseState::Acquiring;
    int64_t lease_id = 0;            // etcd lease or ZooKeeper session; 0 = none
    int64_t granted_ttl_ms = 0;      // min(asked, granted)
    int32_t worker = -1;             // id claimed (Held, or claimed and reading its mark)
    int32_t candidate = -1;          // id to claim next (-1: list workers first)
    int32_t previous_worker = -1;    // last id held: preferred when reacquiring
    bool mark_read = false;          // the claimed id's mark in the coordinator has been read
    bool stopping = false;           // lease::on_shutdown() was called
    int64_t confirmed_send_ns = 0;   // send time of the last grant/keepalive the coordinator confirmed
    // The send time the deadline counts from: confirmed_send_ns, or with
    // relayed renewals the newest one known to have reached the leader.
    int64_t counted_send_ns = 0;
    // Relayed renewals: confirmed send times newer than counted_send_ns,
    // oldest first (recent_count of them).
    int64_t recent_sends_ns[kRecentRenewals] = {};
    int32_t recent_count = 0;
    int64_t deadline_ns = 0;         // ids may be issued while now < deadline (Held)
    int64_t next_keepalive_ns = 0;   // when the next keepalive is due (lease_id != 0)
    int64_t retry_at_ns = 0;         // earliest time for the next acquisition step
    int32_t consecutive_failures = 0;
    int32_t contention = 0;          // claims lost in a row (rotates the choice)
    int32_t rotate_from = 0;         // lowest-free search starts here after contention
    uint64_t renewals = 0;           // confirmed keepalives
    uint64_t failures = 0;           // failed calls of any kind
    bool taken_by_other = false;     // static id held by another node (see last_error)
    // An earlier lease of this very run (the same instance) that holds the
    // candidate: revoked before the claim is tried again.
    int64_t revoke_lease = 0;
    // The candidate held by another run with this node's name (HolderKind::
    // SameName): its lease, when this node first saw it hold the id, and
    // that lease's TTL (its identity's; the longest TTL if it records none).
    // Still held by the same lease well past that TTL: it was renewed, a
    // live clone.
    int64_t same_name_lease = 0;
    int64_t same_name_seen_ns = 0;
    int64_t same_name_ttl_ms = 0;
    bool fleet_checked = false;             // this lease's fleet settings agree (LeaseConfig::check_fleet)
    char last_error[kLeaseErrorSize] = {};  // sentence; empty if none yet
    LeaseError last_error_reason = LeaseError::None;
};

// The worker ids found under <prefix>/workers/ (parse_worker_key of each key).
struct TakenIds {
    uint64_t bits[(kMaxWorker + 1 + 63) / 64] = {};
};
void taken_add(TakenIds& t, int32_t worker) noexcept;  // ignores -1 and out-of-range ids
bool taken_has(const TakenIds& t, int32_t worker) noexcept;

// The lease state machine's functions: core::lease::start(), ...
namespace lease {

const char* state_name(LeaseState s) noexcept;  // "static", "acquiring", ...
const char* action_name(LeaseAction a) noexcept;  // "wait", "grant", "list workers", ...
const char* error_name(LeaseError e) noexcept;  // "none", "grant", "list_workers", ...
// What to do about an error that needs the operator (a full sentence for an
// errhint), or null when the general hint applies.
const char* error_hint(LeaseError e) noexcept;

// A fresh state: Static when !cfg.leasing, otherwise Acquiring with a grant
// due at now_ns.
Lease start(const LeaseConfig& cfg, int64_t now_ns) noexcept;

// What the worker should do now (or wait for).
LeaseStep next_step(const Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept;

// Held and now < deadline and not stopping; always true when Static.
bool may_issue(const Lease& l, int64_t now_ns) noexcept;
// The same test on the published fields, for backends.
bool may_issue(LeaseState state, int64_t deadline_ns, int64_t now_ns) noexcept;

// Moves Held to Expired once now >= deadline. Returns true if it did.
bool tick(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept;

// Outcomes. send_ns is the monotonic time just before the request was sent.
// A lease was granted: claim an id under it next.
void on_grant_ok(Lease& l, const LeaseConfig& cfg, int64_t lease_id, int64_t granted_ttl_ms,
                 int64_t send_ns, int64_t now_ns) noexcept;
// Chooses the id to claim, within [cfg.worker_min, cfg.worker_max]: the
// previous id if free and in the range, else the lowest free id of the range
// at or after rotate_from (wrapping inside the range); after n lost claims in a row, a random
// one (random_value) among the min(2^n, 32) lowest free ids from there, so
// that nodes starting together spread out. Sets l.candidate and returns it,
// or -1 if every id is taken (then call lease::on_failure with a sentence).
// Static: the static id.
int32_t choose_worker(Lease& l, const LeaseConfig& cfg, const TakenIds& taken,
                      uint32_t random_value) noexcept;
// The fleet's settings as <prefix>/fleet records them, compared with this
// node's (check_fleet_settings(); sentence: its sentence unless Agree).
// Agree: claim next. Otherwise no id is claimed under this lease; the check
// is retried with the usual backoff (the record may be corrected by hand),
// last_error is the sentence (LeaseError::FleetSettings).
void on_fleet_checked(Lease& l, const LeaseConfig& cfg, FleetCheck result, const char* sentence,
                      int64_t now_ns) noexcept;
// The claim of l.candidate succeeded: read its mark next.
void on_claim_ok(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept;
// The claim's compare failed: the key exists. holder_text is its value (a
// node identity, or anything: it is only described), holder_lease its lease.
// If holder_lease is our own lease, an earlier claim whose answer was lost
// did succeed: this counts as lease::on_claim_ok. Otherwise, with a static id
// the claim is retried after a delay and last_error names the holder; with
// any free id the next id is chosen at once (ListWorkers again).
// Who holds it is classify_holder() of holder_text and own_identity:
// - ThisRun (the same instance): an earlier lease of this very run, whose
//   answer or release was lost: its lease is revoked (LeaseAction::Revoke)
//   and the id claimed again at once.
// - SameName (this node's host, port, system identifier and data directory,
//   another instance or none recorded): this node's previous run or a clone.
//   Never revoked: a previous run is dead when its lease stops being
//   renewed, which the coordinator shows by deleting the key when the lease
//   expires, not because a name matches. With a static id the claim is
//   tried again every second, last_error names both instances
//   (LeaseError::PreviousRun); once the same lease has held the key for
//   max(kCloneVerdictMinMs, TTL/2) past its TTL it was renewed: a live clone
//   (LeaseError::Clone), retried with the usual backoff. With any free id:
//   the next id, as for another node.
void on_claim_taken(Lease& l, const LeaseConfig& cfg, std::string_view holder_text,
                    int64_t holder_lease, int64_t now_ns,
                    std::string_view own_identity = {}) noexcept;
// How long past its TTL (at least; half the TTL when longer) a key of
// another run with this node's name must stay held by one lease, from when
// this node first saw it, before that lease counts as renewed (a live
// clone): the coordinator's expiry runs late by its check interval (etcd
// ~0.5 s; ZooKeeper a tick, and its leader learns of a last renewal up to
// half a tick after the follower that answered it).
constexpr int64_t kCloneVerdictMinMs = 3000;
// The lease in revoke_lease is revoked (or was not found): claim again.
void on_revoked(Lease& l, int64_t now_ns) noexcept;
// The claimed id's mark was read and handed over: Held.
void on_mark_read(Lease& l, const LeaseConfig& cfg, int64_t now_ns) noexcept;
// A keepalive sent at send_ns was confirmed: the deadline moves on.
void on_keepalive_ok(Lease& l, const LeaseConfig& cfg, int64_t send_ns,
                     int64_t now_ns) noexcept;
// keepalive answered TTL 0, or a call said the lease is not found: the key
// is gone with it. Ids are refused at once; a new grant is due. last_error
// says "<lease_text> no longer exists in <coordinator>": lease_text as the
// coordinator names its lease ("lease 7587...", "session 0x1000..."; null:
// "lease <lease_id>"), coordinator its name ("etcd", "ZooKeeper"; null: "the
// coordinator").
void on_lease_gone(Lease& l, const LeaseConfig& cfg, int64_t now_ns, const char* lease_text = nullptr,
                   const char* coordinator = nullptr) noexcept;
// A call failed (network, timeout, bad answer); `error` is its sentence.
// Held stays Held until the deadline; the step is retried with backoff.
void on_failure(Lease& l, const LeaseConfig& cfg, LeaseAction what, const char* error,
                int64_t now_ns) noexcept;
// The server stops: no more ids, no more steps (see plan_shutdown).
void on_shutdown(Lease& l) noexcept;

// Delay before retrying after n >= 1 consecutive failures: 250 ms doubling,
// at most max(250 ms, TTL/6), so a renewal is retried a few times before
// the deadline but never in a busy loop.
int64_t retry_delay_ns(int32_t consecutive_failures, int64_t ttl_ms) noexcept;

}  // namespace lease

// A mark write whose compare failed: is the mark as it is now a write of
// this node's that was applied though its answer was lost? Only when the
// coordinator says it was written together with this lease's claim of the
// worker key (CoordMarkWrite::current_ours: what only this node could have
// written, never a coincidence of values) and it holds one of the values
// written without a confirmed answer (n of them), a reservation. Then *out
// is that mark.
bool adopt_lost_write(bool current_ours, std::string_view current_value, const int64_t* unconfirmed, size_t n,
                      Mark* out) noexcept;

struct ShutdownPlan {
    bool write_exact_mark = false;  // we still hold the id: hand over the exact mark
    bool revoke = false;            // a lease exists: revoke it
};
// What a clean shutdown still owes the coordinator: the exact mark, the revoke.
ShutdownPlan plan_shutdown(const Lease& l, int64_t now_ns) noexcept;

}  // namespace snowflake::core
