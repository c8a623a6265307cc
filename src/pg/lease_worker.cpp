// The lease worker: leases this node's worker id from etcd and keeps it.
//
// Registered only when snowflake.etcd_endpoints is set. It is the only
// process that talks to etcd (postmaster and backends never do): it drives
// the lease state machine of the core (core/lease.hpp) with the etcd client
// (src/etcd/client.hpp) and publishes the outcome in shared memory
// (LeaseShared), where backends check it before every id.
//
// - Acquire: grant a lease, choose an id (snowflake.worker_id, or the lowest
//   free one), claim <prefix>/workers/<id> in a transaction that succeeds only
//   if the key does not exist, read <prefix>/marks/<id> and start the
//   generator above both that mark and everything this node issued (the
//   hand-over), then publish state Held.
// - Keep: a keepalive every third of the TTL; ids stop at the core's
//   fencing deadline (send time of the last confirmed keepalive + TTL -
//   margin) if keepalives fail, before etcd can give the id to anyone else.
// - The worker id's reservation in etcd is kept ahead of the clock like the
//   local mark (core::plan_reservation), written with a compare on its mod
//   revision and on our claim of the worker key before ids in it are issued.
// - Shutdown: stop ids, write the exact last millisecond to the etcd mark,
//   revoke the lease (the id is free at once); at most about a second.
//
// Every network call has a timeout and is abandoned within ~50 ms of a
// SIGTERM. The C++ objects (the client, strings) live in run(), where
// nothing raises an error: the loop reacts to flags only.

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <curl/curl.h>
#include <unistd.h>

#include "../etcd/client.hpp"
#include "snowflake.hpp"

extern "C" {
#include "access/xlog.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "utils/timestamp.h"

PGDLLEXPORT void snowflake_lease_worker_main(Datum arg);
}

namespace core = snowflake::core;
namespace etcd = snowflake::etcd;

namespace snowflake::pg {
namespace {

constexpr int64_t kNsPerMs = 1000000;
constexpr long kTickMs = 100;
// At a shutdown, the exact mark and the revoke together get this long.
constexpr int64_t kShutdownBudgetNs = 900 * kNsPerMs;

struct AbortHook {
    int64_t deadline_ns = 0;  // 0: abort when a shutdown is requested
};

bool should_abort(void* arg) {
    const auto* hook = static_cast<const AbortHook*>(arg);
    if (hook->deadline_ns == 0) return ShutdownRequestPending;
    return boottime_ns() >= hook->deadline_ns;
}

void detach(int, Datum) {
    if (shared == nullptr) return;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    shared->lease.worker_latch = nullptr;
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
}

int64_t etcd_reserved() {
    return static_cast<int64_t>(pg_atomic_read_u64(&shared->lease.etcd_reserved_ms_plus1)) - 1;
}

// Publishes the lease for backends: the worker id and the deadline first,
// the state last.
void publish(const core::Lease& l) {
    LeaseShared& s = shared->lease;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    s.lease_id = l.lease_id;
    s.renewals = l.renewals;
    s.failures = l.failures;
    snprintf(s.last_error, sizeof(s.last_error), "%s", l.last_error);
    s.last_error_reason = static_cast<uint32_t>(l.last_error_reason);
    pg_atomic_write_u32(&s.worker_plus1,
                        l.state == core::LeaseState::Held ? static_cast<uint32>(l.worker + 1) : 0);
    pg_atomic_write_u64(&s.deadline_ns,
                        l.state == core::LeaseState::Held ? static_cast<uint64>(l.deadline_ns) : 0);
    pg_write_barrier();
    const bool held = l.state == core::LeaseState::Held && !l.stopping;
    pg_atomic_write_u32(&s.state, static_cast<uint32>(l.stopping ? core::LeaseState::Expired : l.state));
    // A tenure that ends (or pauses: a keepalive may bring the same lease
    // back) fences the ids in flight (shmem.cpp); one that goes on, or is
    // back, lifts the fence.
    if (!held)
        (void)fence_ids_locked();
    else if (pg_atomic_read_u64(&shared->fence_ms_plus1) != 0)
        lift_fence_locked();
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
}

// The hand-over of a newly claimed id: the generator starts above the id's
// etcd mark and above everything this node issued.
void apply_handover(int32_t worker, const core::Mark& etcd_mark, bool etcd_mark_is_ours) {
    const uint64 pos = pg_atomic_read_u64(&shared->position);
    core::Mark local;
    local.ms = core::packed_ms(pos);
    local.clean = true;  // this node's position: exact
    const core::Handover h =
        core::plan_handover(local, 0, etcd_mark, core::kEtcdMarkWindowMs, etcd_mark_is_ours);
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    // The new id starts in a millisecond after both the floor and this
    // node's last one: its etcd mark does not cover the rest of this node's
    // current millisecond, so that millisecond counts as used up. Nothing of
    // the id past the start is reserved by this node yet (the first id asks
    // the worker for a reservation in etcd); that reservation is published
    // before the position word moves to the new worker id, so that a caller
    // that reads the new word reads it too (the invariant in shmem.cpp).
    const int64_t cur_ms = core::packed_ms(pg_atomic_read_u64(&shared->position));
    const int64_t start_ms = h.floor_ms > cur_ms ? h.floor_ms : cur_ms;
    pg_atomic_write_u64(&shared->lease.etcd_reserved_ms_plus1, static_cast<uint64>(start_ms + 1));
    pg_atomic_write_u64(&shared->fence_ms_plus1, 0);
    publish_reservation_locked();
    if (start_tenure_locked(worker, start_ms) == start_ms) {
        shared->floor_ms = start_ms;
        shared->floor_grace_ms = start_ms == h.floor_ms ? h.grace_ms : 0;
        shared->floor_source = start_ms == h.floor_ms && !etcd_mark_is_ours ? kFloorHandover : kFloorMarkFile;
    }
    pg_atomic_write_u32(&shared->lease.worker_plus1, static_cast<uint32>(worker + 1));
    LWLockRelease(shared->lock);
}

void record_mark_attempt(const char* error) {
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    shared->lease.mark_attempts++;
    if (error[0] != '\0') shared->lease.mark_failures++;
    snprintf(shared->lease.mark_error, sizeof(shared->lease.mark_error), "%s", error);
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
}

class LeaseRun {
public:
    LeaseRun(const core::LeaseConfig& cfg, etcd::Options options, std::string prefix,
             std::string identity) noexcept
        : cfg_(cfg), client_(std::move(options)), prefix_(std::move(prefix)),
          identity_(std::move(identity)), lease_(core::lease_start(cfg, boottime_ns())) {}

    // One turn; returns how long to sleep (ms).
    long turn() noexcept {
        int64_t now = boottime_ns();
        if (core::lease_tick(lease_, cfg_, now)) publish(lease_);
        const core::LeaseStep step = core::lease_next_step(lease_, cfg_, now);
        switch (step.action) {
            case core::LeaseAction::Wait:
                break;
            case core::LeaseAction::Grant: {
                const int64_t sent = boottime_ns();
                const etcd::GrantResult r = client_.grant(cfg_.ttl_ms / 1000);
                if (r.status.ok())
                    core::lease_on_grant_ok(lease_, cfg_, r.lease_id, r.ttl_s * 1000, sent, boottime_ns());
                else
                    fail(core::LeaseAction::Grant, r.status);
                break;
            }
            case core::LeaseAction::ListWorkers: {
                const etcd::RangeResult r = client_.range(core::workers_prefix(prefix_));
                if (!r.status.ok()) {
                    fail(core::LeaseAction::ListWorkers, r.status);
                    break;
                }
                core::TakenIds taken;
                for (const etcd::KeyValue& kv : r.kvs) core::taken_add(taken, core::parse_worker_key(prefix_, kv.key));
                uint32_t rnd = 0;
                if (!pg_strong_random(&rnd, sizeof(rnd))) rnd = static_cast<uint32_t>(now);
                if (core::lease_choose_worker(lease_, cfg_, taken, rnd) < 0)
                    core::lease_on_failure(lease_, cfg_, core::LeaseAction::ListWorkers,
                                           "every worker id from 0 to 1023 is held by another node",
                                           boottime_ns());
                break;
            }
            case core::LeaseAction::Claim: {
                const etcd::ClaimResult r =
                    client_.claim(core::worker_key(prefix_, lease_.candidate), identity_, lease_.lease_id);
                if (!r.status.ok())
                    fail(core::LeaseAction::Claim, r.status);
                else if (r.claimed)
                    core::lease_on_claim_ok(lease_, cfg_, boottime_ns());
                else
                    core::lease_on_claim_taken(lease_, cfg_, r.holder.value, r.holder.lease, boottime_ns(),
                                               identity_);
                break;
            }
            case core::LeaseAction::ReadMark: {
                const etcd::GetResult r = client_.get(core::mark_key(prefix_, lease_.worker));
                if (!r.status.ok()) {
                    fail(core::LeaseAction::ReadMark, r.status);
                    break;
                }
                core::Mark mark;  // ms -1: no mark yet
                if (r.found && !core::decode_etcd_mark(r.kv.value, &mark)) {
                    core::lease_on_failure(lease_, cfg_, core::LeaseAction::ReadMark,
                                           "the worker id's mark in etcd is not a mark this "
                                           "version can read; remove the key only if no node "
                                           "issues ids with this worker id",
                                           boottime_ns());
                    break;
                }
                const int64_t revision = r.found ? r.kv.mod_revision : 0;
                const bool ours = r.found && lease_.worker == mark_worker_ && revision == mark_revision_;
                mark_revision_ = revision;
                mark_worker_ = lease_.worker;
                apply_handover(lease_.worker, mark, ours);
                core::lease_on_mark_read(lease_, cfg_, boottime_ns());
                break;
            }
            case core::LeaseAction::Revoke: {
                // This node's previous run holds the id (core::same_node):
                // the lock on the data directory proves that run dead.
                ereport(LOG, (errmsg("snowflake revoking lease %lld of this node's previous run, which "
                                     "holds worker id %d",
                                     static_cast<long long>(lease_.revoke_lease), lease_.candidate)));
                const etcd::Status st = client_.revoke(lease_.revoke_lease);
                if (st.ok() || st.code == etcd::Code::LeaseNotFound)
                    core::lease_on_revoked(lease_, boottime_ns());
                else
                    core::lease_on_failure(lease_, cfg_, core::LeaseAction::Revoke, st.error.c_str(),
                                           boottime_ns());
                break;
            }
            case core::LeaseAction::KeepAlive: {
                const int64_t sent = boottime_ns();
                const etcd::KeepaliveResult r = client_.keepalive(lease_.lease_id);
                if (r.status.ok() && r.ttl_s > 0)
                    core::lease_on_keepalive_ok(lease_, cfg_, sent, boottime_ns());
                else if (r.status.ok() || r.status.code == etcd::Code::LeaseNotFound)
                    core::lease_on_lease_gone(lease_, cfg_, boottime_ns());
                else
                    fail(core::LeaseAction::KeepAlive, r.status);
                break;
            }
        }
        if (lease_.state == core::LeaseState::Held) renew_mark();
        publish(lease_);

        now = boottime_ns();
        const core::LeaseStep next = core::lease_next_step(lease_, cfg_, now);
        if (next.action != core::LeaseAction::Wait) return 0;
        int64_t wait_ms = (next.at_ns - now + kNsPerMs - 1) / kNsPerMs;
        if (wait_ms > kTickMs) wait_ms = kTickMs;
        if (mark_failures_ > 0 && lease_.state == core::LeaseState::Held) {
            const int64_t retry_ms = (mark_retry_at_ns_ - now + kNsPerMs - 1) / kNsPerMs;
            if (retry_ms < wait_ms) wait_ms = retry_ms;
        }
        return wait_ms < 1 ? 1 : static_cast<long>(wait_ms);
    }

    // Stops ids, hands the exact mark over and revokes the lease.
    void shutdown(AbortHook* hook) noexcept {
        const bool held = lease_.state == core::LeaseState::Held;
        core::lease_on_shutdown(lease_);
        publish(lease_);
        if (!held && lease_.lease_id == 0) return;
        // publish() fenced the position: no id is issued past its
        // millisecond from here on, whoever was in the middle of a call
        // (shmem.cpp), so that millisecond is the exact mark.
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        const int64_t exact = fence_ids_locked();
        LWLockRelease(shared->lock);

        hook->deadline_ns = boottime_ns() + kShutdownBudgetNs;
        const core::ShutdownPlan plan = core::plan_shutdown(lease_, boottime_ns());
        if (plan.write_exact_mark && mark_worker_ == lease_.worker) {
            const core::Mark m = core::exact_shutdown_mark(exact);
            const etcd::CasResult r =
                client_.compare_and_put(core::mark_key(prefix_, lease_.worker), core::encode_etcd_mark(m),
                                        mark_revision_, core::worker_key(prefix_, lease_.worker),
                                        lease_.lease_id);
            if (!r.status.ok() || !r.succeeded)
                ereport(LOG, (errmsg("snowflake could not hand over the exact mark of worker id %d to etcd",
                                     lease_.worker),
                              errdetail("%s", r.status.ok() ? "The mark or the worker key changed."
                                                            : r.status.error.c_str()),
                              errhint("The next holder of the id waits out the last reservation.")));
        }
        if (plan.revoke) {
            ereport(LOG, (errmsg("snowflake releasing worker id %d: revoking its lease in etcd", lease_.worker)));
            const etcd::Status s = client_.revoke(lease_.lease_id);
            if (!s.ok() && s.code != etcd::Code::LeaseNotFound)
                ereport(LOG, (errmsg("snowflake could not revoke its lease in etcd"),
                              errdetail("%s", s.error.c_str()),
                              errhint("The worker id is free when the lease's TTL runs out.")));
        }
    }

private:
    void fail(core::LeaseAction what, const etcd::Status& s) {
        core::lease_on_failure(lease_, cfg_, what, s.error.c_str(), boottime_ns());
        if (s.code == etcd::Code::LeaseNotFound) core::lease_on_lease_gone(lease_, cfg_, boottime_ns());
    }

    // Keeps the worker id's reservation in etcd ahead of the clock. A failed
    // write is retried after the lease's retry delay (doubling), counted in
    // the lease's failures; until one succeeds the id path reports it
    // (await_reservation(), generator_ready()).
    void renew_mark() {
        const int64_t now_ns = boottime_ns();
        if (mark_failures_ > 0 && now_ns < mark_retry_at_ns_) return;
        const int64_t now_ms_id = now_ms(epoch_unix_us());
        const int64_t reserved = etcd_reserved();
        const core::ReservationPlan plan =
            core::plan_reservation(now_ms_id, reserved, demand_ms(), core::kEtcdMarkWindowMs);
        if (!plan.write) return;
        core::Mark m;
        m.ms = plan.until_ms;
        const std::string key = core::mark_key(prefix_, lease_.worker);
        const etcd::CasResult r = client_.compare_and_put(key, core::encode_etcd_mark(m), mark_revision_,
                                                          core::worker_key(prefix_, lease_.worker),
                                                          lease_.lease_id);
        if (!r.status.ok()) {
            char text[kErrorTextSize];
            snprintf(text, sizeof(text), "writing %s: %s", key.c_str(), r.status.error.c_str());
            // The write may still be applied after its reply timed out: its
            // value is then what the next compare finds.
            if (unconfirmed_.size() < kMaxUnconfirmed) unconfirmed_.push_back(m.ms);
            mark_write_failed(text);
            return;
        }
        int64_t until = plan.until_ms;
        int64_t revision = r.revision;
        if (!r.succeeded) {
            // A write of ours whose reply was lost may have moved the
            // revision: with our claim of the key still in place (the guard
            // held) and one of our own values there, it is ours; adopt it.
            core::Mark found;
            const bool own_write = !r.guard_failed && r.found &&
                                   core::decode_etcd_mark(r.current.value, &found) && !found.clean &&
                                   std::find(unconfirmed_.begin(), unconfirmed_.end(), found.ms) !=
                                       unconfirmed_.end();
            if (!own_write) {
                // Someone else wrote the mark, or our claim of the worker key
                // is gone: the id is not ours any more. The lease is dropped
                // on purpose, so revoke it: otherwise its key would keep the
                // id (from this very node) for a whole TTL.
                record_mark_attempt(
                    "the worker id's mark or key in etcd changed: the id is held by another lease");
                const int64_t dropped = lease_.lease_id;
                core::lease_on_lease_gone(lease_, cfg_, boottime_ns());
                publish(lease_);  // fences ids before the revoke frees the id
                revoke_dropped(dropped);
                unconfirmed_.clear();
                return;
            }
            until = found.ms;
            revision = r.current.mod_revision;
        }
        unconfirmed_.clear();
        mark_failures_ = 0;
        mark_revision_ = revision;
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        if (until + 1 > static_cast<int64_t>(pg_atomic_read_u64(&shared->lease.etcd_reserved_ms_plus1)))
            pg_atomic_write_u64(&shared->lease.etcd_reserved_ms_plus1, static_cast<uint64>(until + 1));
        publish_reservation_locked();
        LWLockRelease(shared->lock);
        record_mark_attempt("");
    }

    void mark_write_failed(const char* text) {
        record_mark_attempt(text);
        lease_.failures++;
        mark_failures_++;
        mark_retry_at_ns_ = boottime_ns() + core::lease_retry_delay_ns(mark_failures_, cfg_.ttl_ms);
    }

    void revoke_dropped(int64_t lease_id) {
        if (lease_id == 0) return;
        const etcd::Status s = client_.revoke(lease_id);
        if (!s.ok() && s.code != etcd::Code::LeaseNotFound)
            ereport(LOG, (errmsg("snowflake could not revoke dropped lease %lld in etcd",
                                 static_cast<long long>(lease_id)),
                          errdetail("%s", s.error.c_str()),
                          errhint("The worker id it holds is free when the lease's TTL runs out.")));
    }

    // Values of the etcd mark written without a confirmed answer since the
    // last confirmed write (at most one of them can have been applied: they
    // all compare on the same revision).
    static constexpr size_t kMaxUnconfirmed = 64;
    std::vector<int64_t> unconfirmed_;
    int32_t mark_failures_ = 0;      // failed writes of the etcd mark in a row
    int64_t mark_retry_at_ns_ = 0;   // boot clock: no write before this after a failure
    core::LeaseConfig cfg_;
    etcd::Client client_;
    std::string prefix_;
    std::string identity_;
    core::Lease lease_;
    int64_t mark_revision_ = 0;  // of <prefix>/marks/<mark_worker_> as last read or written
    int32_t mark_worker_ = -1;
};

// Everything with a destructor lives here, where nothing raises an error.
void run() {
    core::LeaseConfig cfg;
    cfg.ttl_ms = static_cast<int64_t>(lease_ttl_s) * 1000;
    cfg.static_worker = worker_id;
    cfg.leasing = true;

    etcd::Options options;
    std::string reason;
    (void)core::parse_endpoints(etcd_endpoints, &options.endpoints, &reason);  // checked by the GUC
    AbortHook hook;
    options.should_abort = should_abort;
    options.abort_arg = &hook;

    core::NodeIdentity me;
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0) snprintf(host, sizeof(host), "unknown");
    me.host = host;
    me.port = PostPortNumber;
    me.system_identifier = GetSystemIdentifier();
    me.started_unix_ms = (PgStartTime + kPgEpochUnixUs) / 1000;
    me.data_directory = DataDir;

    LeaseRun lease(cfg, std::move(options), lease_prefix, core::encode_node_identity(me));
    while (!ShutdownRequestPending) {
        const long sleep_ms = lease.turn();
        if (ShutdownRequestPending) break;
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, sleep_ms,
                        PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        // Every setting this worker reads needs a restart, so a reload has
        // nothing for it; and ProcessConfigFile() could raise an error here,
        // over live C++ objects.
        ConfigReloadPending = false;
    }
    lease.shutdown(&hook);
}

}  // namespace

void init_lease(SharedState* s) {
    LeaseShared& l = s->lease;
    l.leasing = leasing_configured();
    pg_atomic_init_u32(&l.state, static_cast<uint32>(l.leasing ? core::LeaseState::Acquiring
                                                             : core::LeaseState::Static));
    pg_atomic_init_u32(&l.worker_plus1, 0);
    pg_atomic_init_u64(&l.deadline_ns, 0);
    pg_atomic_init_u64(&l.etcd_reserved_ms_plus1, 0);
    l.lease_id = 0;
    l.renewals = 0;
    l.failures = 0;
    l.last_error[0] = '\0';
    l.last_error_reason = static_cast<uint32_t>(core::LeaseError::None);
    l.mark_attempts = 0;
    l.mark_failures = 0;
    l.mark_error[0] = '\0';
    l.worker_latch = nullptr;
}

int32_t current_worker_id() {
    if (shared == nullptr || !shared->lease.leasing) return worker_id;
    return static_cast<int32_t>(pg_atomic_read_u32(&shared->lease.worker_plus1)) - 1;
}

void register_lease_worker() {
    register_worker("snowflake_lease_worker_main", "snowflake worker id lease");
}

}  // namespace snowflake::pg

extern "C" void snowflake_lease_worker_main(Datum) {
    namespace sp = snowflake::pg;
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        ereport(ERROR, (errmsg("could not initialise libcurl for the snowflake lease worker")));

    before_shmem_exit(sp::detach, 0);
    LWLockAcquire(sp::shared->lock, LW_EXCLUSIVE);
    sp::shared->lease.worker_latch = MyLatch;
    LWLockRelease(sp::shared->lock);

    sp::run();
    curl_global_cleanup();
    proc_exit(sp::postmaster_stopping() ? 0 : 1);
}
