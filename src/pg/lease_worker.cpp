// The lease worker: leases this node's worker id from etcd or ZooKeeper and
// keeps it.
//
// Registered only when snowflake.etcd_endpoints or snowflake.zookeeper_hosts
// is set. It is the only process that talks to the coordinator (postmaster
// and backends never do). The loop
// itself (grant, claim, keepalive, the coordinator mark's renewal, hand-over,
// shutdown) is the lease driver, src/coord/lease_driver.hpp, which has no
// PostgreSQL in it; this file is its host and the process around it:
// - PgLeaseHost answers the driver from shared memory: it publishes the
//   lease (LeaseShared; backends check it before every id, and a state that
//   is not Held fences ids in flight, shared_state.hpp), applies a hand-over
//   (apply_handover(): the position moves to the new worker id above the
//   floor), publishes the coordinator's reservation, records mark writes for waiting
//   callers, reads the clocks (CLOCK_BOOTTIME for the lease, the id space
//   for marks) and the demand of waiting backends, and logs (LOG only).
// - run_lease_driver(): the main loop, WaitLatch on the driver's sleep, woken early by a
//   backend that needs a reservation; SIGTERM ends it with the driver's
//   shutdown (the exact mark, the revoke; at most about a second).
//
// Every network call has a timeout and is abandoned within ~50 ms of a
// SIGTERM. The C++ objects (the driver, its client, strings) live in
// run_lease_driver(),
// where nothing raises an error: the loop reacts to flags only, and no
// callback of the host raises one.

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include <curl/curl.h>
#include <unistd.h>

#include "../core/clock_health.hpp"
#include "../core/coord_schema.hpp"
#include "../core/endpoints.hpp"
#include "../core/generator.hpp"
#include "../core/handover.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/position.hpp"
#include "../core/stats_snapshot.hpp"
#include "../coord/lease_driver.hpp"
#include "../etcd/coordinator.hpp"
#include "../zk/coordinator.hpp"
#include "lease_worker.hpp"
#include "bgworker.hpp"
#include "clock.hpp"
#include "guc.hpp"
#include "id_path.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"

extern "C" {
#include "access/xlog.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"

PGDLLEXPORT void snowflake_lease_worker_main(Datum arg);
}

namespace core = snowflake::core;
namespace etcd = snowflake::etcd;
namespace coord = snowflake::coord;
namespace zk = snowflake::zk;

namespace snowflake::pg {
namespace {

// Publishes the lease for backends: the worker id and the deadline first,
// the state last.
void publish(const core::Lease& l) {
    LeaseShared& s = shared->lease;
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    s.lease_id = l.lease_id;
    s.granted_ttl_ms = l.lease_id != 0 ? l.granted_ttl_ms : 0;
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
    // back) fences the ids in flight (shmem.hpp); one that goes on, or is
    // back, lifts the fence. A new tenure was started (unfenced) before
    // its lease is published Held (apply_handover()).
    if (!held)
        (void)fence_ids_locked();
    else
        lift_fence_locked();
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
}

// The hand-over of a newly claimed id (the driver's plan): the generator
// starts above the id's mark and above everything this node issued.
void apply_handover(int32_t worker, const core::Handover& h) {
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    // The new id starts in a millisecond after both the floor and this
    // node's last one (the id's mark does not cover the rest of this node's
    // current millisecond). After a clock failover the position may be a
    // backup's, below the own id's ids (own_high_ms): the new tenure starts
    // above those too. The protocol (core::start_tenure()) fences the tenure
    // in force, brings the reservation down to the start (nothing of the id
    // past it is reserved by this node yet: the first id asks for a
    // reservation in the coordinator) and moves the word.
    const core::TenureFloor t = core::tenure_floor(h, issued_ms(), shared->lease.own_high_ms);
    (void)start_tenure_locked(worker, t.floor_ms, t.grace_ms,
                              t.at_handover && h.from_coordinator ? kFloorHandover : kFloorMarkFile);
    pg_atomic_write_u32(&shared->lease.worker_plus1, static_cast<uint32>(worker + 1));
    LWLockRelease(shared->lock);
}

// Clock failover: ids go on under backup worker id `worker` after floor_ms
// (its mark). The own id's tenure is fenced and its last millisecond kept;
// the backup's tenure starts after its mark (core::start_tenure(): its
// reservation starts there too, so nothing is issued until the backup's
// mark is written past the clock).
int64_t start_backup(int32_t worker, int64_t floor_ms) {
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    const int64_t own_last = fence_ids_locked();
    LeaseShared& l = shared->lease;
    l.own_last_ms = own_last;
    if (own_last > l.own_high_ms) l.own_high_ms = own_last;
    // The demand only ever grows; it is the own id's (ahead of the clock
    // now): the backup's reservations follow its own callers.
    pg_atomic_write_u64(&shared->demand_ms_plus1, 0);
    (void)start_tenure_locked(worker, floor_ms, 0, kFloorHandover);
    l.clock_failovers++;
    pg_atomic_write_u32(&l.backup_worker_plus1, static_cast<uint32>(worker + 1));
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
    return own_last;
}

// Back on the own id `worker` after own_last_ms: the backup's tenure
// fenced, the own id's started after both (nothing of it reserved past
// that start yet: the next id asks for a write of its mark).
int64_t end_backup(int32_t worker, int64_t own_last_ms) {
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    const int64_t backup_last = fence_ids_locked();
    (void)start_tenure_locked(worker, own_last_ms > backup_last ? own_last_ms : backup_last, 0, kFloorMarkFile);
    pg_atomic_write_u32(&shared->lease.backup_worker_plus1, 0);
    shared->lease.own_last_ms = -1;
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
    return backup_last;
}

// The outcome of a failover attempt for waiting callers ("": a backup started).
void record_backup_attempt(const char* error) {
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    shared->lease.backup_attempts++;
    snprintf(shared->lease.backup_error, sizeof(shared->lease.backup_error), "%s", error);
    pg_atomic_write_u32(&shared->lease.backup_wanted, 0);
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
}

// Records a write of the coordinator's mark for waiting callers ("" : it succeeded).
void record_mark_attempt(const char* error) {
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    shared->lease.mark_attempts++;
    if (error[0] != '\0') shared->lease.mark_failures++;
    snprintf(shared->lease.mark_error, sizeof(shared->lease.mark_error), "%s", error);
    LWLockRelease(shared->lock);
    ConditionVariableBroadcast(&shared->reservation_cv);
}

// The host of the lease driver (src/coord/lease_driver.hpp): shared memory,
// the clocks, the log. None of these raises an error (LOG only).
class PgLeaseHost final : public coord::LeaseHost {
public:
    int64_t boot_ns() noexcept override { return boottime_ns(); }
    int64_t id_ms() noexcept override { return now_ms(epoch_unix_us()); }
    bool stop_requested() noexcept override { return ShutdownRequestPending; }
    void publish(const core::Lease& l) noexcept override { pg::publish(l); }
    core::Mark local_mark() noexcept override {
        LWLockAcquire(shared->lock, LW_SHARED);
        // Still at the floor it started from (nothing issued above it), with
        // a grace: the floor is a reservation of the previous run (a crash).
        const core::Mark m = core::position_mark(issued_ms(), shared->floor_ms, shared->floor_grace_ms,
                                                 shared->lease.own_high_ms);
        LWLockRelease(shared->lock);
        return m;
    }
    // coord_mark_is_ours is in the plan already (h.from_coordinator).
    void start_tenure(int32_t worker, const core::Handover& h, bool /*coord_mark_is_ours*/) noexcept override {
        apply_handover(worker, h);
    }
    int64_t fence_ids() noexcept override {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        const int64_t exact = fence_ids_locked();
        LWLockRelease(shared->lock);
        return exact;
    }
    int64_t coord_reserved_ms() noexcept override { return pg::coord_reserved_ms(); }
    int64_t demand_ms() noexcept override { return pg::demand_ms(); }
    void publish_coord_reservation(int64_t until) noexcept override {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        raise_coord_reservation_locked(until);
        LWLockRelease(shared->lock);
    }
    void record_mark_attempt(const char* error) noexcept override { pg::record_mark_attempt(error); }
    int64_t backup_wanted() noexcept override {
        // 0: nobody asks; else the asking caller's clock tolerance + 1.
        return static_cast<int64_t>(pg_atomic_read_u32(&shared->lease.backup_wanted)) - 1;
    }
    void read_generator(core::GeneratorState* state, int64_t* now) noexcept override {
        uint64 cur = 0;
        LWLockAcquire(shared->lock, LW_SHARED);
        *state = load_state(Generator::Sql, epoch_unix_us(), &cur, now);
        LWLockRelease(shared->lock);
    }
    void record_backup_attempt(const char* error) noexcept override { pg::record_backup_attempt(error); }
    int64_t start_backup(int32_t worker, int64_t floor_ms) noexcept override {
        return pg::start_backup(worker, floor_ms);
    }
    int64_t end_backup(int32_t worker, int64_t own_last_ms) noexcept override {
        return pg::end_backup(worker, own_last_ms);
    }
    void backup_lost() noexcept override {
        LWLockAcquire(shared->lock, LW_EXCLUSIVE);
        pg_atomic_write_u32(&shared->lease.backup_worker_plus1, 0);
        shared->lease.own_last_ms = -1;
        LWLockRelease(shared->lock);
    }
    uint32_t random() noexcept override {
        uint32_t rnd = 0;
        if (!pg_strong_random(&rnd, sizeof(rnd))) rnd = static_cast<uint32_t>(boottime_ns());
        return rnd;
    }
    void log(const char* message, const char* detail, const char* hint) noexcept override {
        ereport(LOG, (errmsg("%s", message), detail != nullptr ? errdetail("%s", detail) : 0,
                      hint != nullptr ? errhint("%s", hint) : 0));
    }
};

// The coordinator the settings name (the GUCs checked both values, and
// that only one is set). *zookeeper: the ZooKeeper one, whose socket the
// worker sleeps on; null for etcd.
std::unique_ptr<core::Coordinator> make_coordinator(zk::ZkCoordinator** zookeeper) {
    if (zookeeper_configured()) {
        zk::Options o;
        o.hosts = zookeeper_hosts;
        o.prefix = lease_prefix;
        auto c = std::make_unique<zk::ZkCoordinator>(std::move(o));
        *zookeeper = c.get();
        return c;
    }
    etcd::Options options;
    std::string reason;
    (void)core::parse_endpoints(etcd_endpoints, &options.endpoints, &reason);  // checked by the GUC
    return std::make_unique<etcd::EtcdCoordinator>(std::move(options), lease_prefix);
}

// Sleeps until the next turn, a backend's wake-up, or (ZooKeeper) the
// client's socket is ready: its answers and pings are handled at once by
// the next turn (zookeeper_process() in the driver's poll()).
void wait_between_turns(zk::ZkCoordinator* zookeeper, int64_t sleep_ms) {
    bool want_write = false;
    const int fd = zookeeper != nullptr ? zookeeper->socket(&want_write) : -1;
    int events = WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH;
    if (fd >= 0) events |= WL_SOCKET_READABLE | (want_write ? WL_SOCKET_WRITEABLE : 0);
    (void)WaitLatchOrSocket(MyLatch, events, fd, static_cast<long>(sleep_ms), PG_WAIT_EXTENSION);
}

// This run's instance (core::NodeIdentity::instance), told from a clone's
// (the same host, port, system identifier and data directory) by nothing
// else: 16 bytes of the strong random source, drawn by the postmaster when
// it registers the lease worker. A lease worker that starts again in the
// same postmaster (after an error, or the crash-restart cycle of its
// children) is the same instance: the postmaster saw the one before it exit,
// so that one's lease is revoked at once; a new postmaster is a new
// instance, whose previous run's lease is left to expire.
unsigned char instance_random[16];

// The lease driver's loop. Everything with a destructor lives here, where
// nothing raises an error.
void run_lease_driver() {
    core::LeaseConfig cfg;
    cfg.ttl_ms = static_cast<int64_t>(lease_ttl_s) * 1000;
    cfg.static_worker = worker_id;
    cfg.worker_min = lease_worker_min;
    cfg.worker_max = lease_worker_max;
    cfg.leasing = true;

    core::NodeIdentity me;
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0) snprintf(host, sizeof(host), "unknown");
    me.host = host;
    me.port = PostPortNumber;
    me.system_identifier = GetSystemIdentifier();
    me.instance = core::random_instance(instance_random);
    me.started_unix_ms = (PgStartTime + kPgEpochUnixUs) / 1000;
    me.data_directory = DataDir;
    core::FleetSettings fleet;
    fleet.epoch_unix_us = epoch_unix_us();
    fleet.layout = node_geometry();

    PgLeaseHost pg_host;
    zk::ZkCoordinator* zookeeper = nullptr;
    coord::LeaseDriver driver(pg_host, cfg, make_coordinator(&zookeeper), std::move(me), fleet);
    while (!ShutdownRequestPending) {
        const int64_t sleep_ms = driver.turn();
        if (ShutdownRequestPending) break;
        wait_between_turns(zookeeper, sleep_ms);
        ResetLatch(MyLatch);
        // Every setting this worker reads needs a restart, so a reload has
        // nothing for it; and ProcessConfigFile() could raise an error here,
        // over live C++ objects.
        ConfigReloadPending = false;
    }
    (void)driver.shutdown();
}

}  // namespace

// Registers the lease worker (lease_worker.hpp), and draws this run's
// instance for it.
void register_lease_worker() {
    if (!pg_strong_random(instance_random, sizeof(instance_random)))
        ereport(ERROR, (errmsg("could not generate a random instance id for the snowflake lease worker")));
    register_background_worker("snowflake_lease_worker_main", "snowflake worker id lease");
}

}  // namespace snowflake::pg

// The lease worker's main function: libcurl set up around the driver's loop.
extern "C" void snowflake_lease_worker_main(Datum) {
    namespace sp = snowflake::pg;
    sp::start_background_worker(&sp::shared->lease.lease_worker_latch);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        ereport(ERROR, (errmsg("could not initialise libcurl for the snowflake lease worker")));
    sp::run_lease_driver();
    curl_global_cleanup();
    sp::exit_background_worker();
}
