// The lease driver: the one loop that leases this node's worker id from a
// coordinator (etcd or ZooKeeper) and keeps it. It drives the lease state
// machine of the core (core/lease.hpp) and the coordinator mark's
// reservation (core/reservation.hpp) with a core::Coordinator
// (core/coordinator.hpp: src/etcd/coordinator.hpp or src/zk/coordinator.hpp);
// the calls below are named in etcd's terms, ZooKeeper's are in
// core/coordinator.hpp. No PostgreSQL in it: what only the host
// knows (its clocks, the generator's position, the reservations it
// publishes, the demand of waiting callers, logging) comes through
// LeaseHost. The background worker (src/pg/lease_worker.cpp) is one host,
// over shared memory; the client tests (test/coord/lease_loop_test.cpp)
// are another, over in-process state, against a real etcd.
//
// What a turn does:
// - Acquire: grant a lease, compare this node's settings with the fleet's
//   (<prefix>/fleet, created with ours if absent: a node whose epoch differs
//   claims nothing), choose an id (the static one, or the lowest free one; a
//   random one among the lowest free after lost claims), claim
//   <prefix>/workers/<id> in a transaction that succeeds only if the key does
//   not exist (a key held by an earlier lease of this very instance: revoke
//   that lease and claim again; by another run with this node's name, its
//   previous run or a clone: wait for the key to go with its lease), read
//   <prefix>/marks/<id> and hand over
//   (core::plan_handover: above that mark and above everything this node
//   issued), then publish state Held.
// - Keep: a keepalive every third of the TTL (ZooKeeper, whose renewals are
//   relayed: every eighth); ids stop at the core's fencing deadline if
//   keepalives fail. A call that says the lease is not found
//   drops it (a new grant follows).
// - The coordinator mark's reservation is kept ahead of the clock like the local
//   mark (core::plan_reservation, from the host's reservation and demand),
//   written with a compare on its mod revision and on our claim of the worker
//   key before ids in it are issued (the host publishes it only after the
//   write is confirmed). A write whose reply was lost but that the
//   coordinator applied is adopted (the coordinator finds the mark written with our claim of the
//   worker key, holding one of our unconfirmed values: core::adopt_lost_write);
//   any other change means the id is not ours: the lease is dropped, ids
//   fenced (publish), and the lease revoked. Failed writes back
//   off with the lease's retry delay and count in the lease's failures.
// - shutdown(): stop and fence ids (publish), write the fenced millisecond to
//   the coordinator's mark as the exact mark, revoke the lease; both calls together
//   within kShutdownBudgetNs.
// - Clock failover (core/backup.hpp, core::plan_backup): when a caller
//   asks for a backup worker id (its clock stepped back past the tolerance,
//   with snowflake.clock_backwards = failover), the driver reads the
//   generator and the clock itself and fails over only if the id path
//   refuses that reading (core::clock_refused: a request made on an older
//   reading, or a floor waited out within its grace, is no reason); then it
//   claims a free id in the same lease, reads its mark, gives back any whose
//   mark is not below the clock, and has the host issue ids under the first
//   usable one (start_backup); the mark renewed is then the backup's.
//   Back to the own id (end_backup, the backup's exact mark written and its
//   key deleted) once the clock passes the own id's last millisecond and
//   the backup has been held core::kMinBackupHoldMs. On a backup whose own
//   ids the clock is refused against too (a second step back), the backup is
//   given back the same way and another taken at once. A backup goes with
//   the lease that holds it.
//
// Threads: one. Every call of the host comes from turn() or shutdown() (or,
// for stop_requested() and boot_ns(), from the client's abort hook while a
// call waits). Every coordinator call has the client's timeout, and is abandoned
// within ~50 ms once the host's stop_requested() says so (or, during
// shutdown(), once its budget is spent). No exception is thrown (the code
// builds with -fno-exceptions), nothing here raises an error, sleeps or reads
// a clock of its own: the host's callbacks must not raise errors either.
#pragma once

#include "../core/backup.hpp"
#include "../core/coord_schema.hpp"
#include "../core/coordinator.hpp"
#include "../core/handover.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace snowflake::coord {

// What only the host knows. ("The coordinator's mark", "coord": the mark in
// etcd or in ZooKeeper, whichever leases the id.) Every callback is noexcept
// and must not raise an error (in PostgreSQL: at most a LOG-level ereport).
class LeaseHost {
public:
    // Clocks. boot_ns: a monotonic clock that counts a suspend (the lease's
    // deadlines; CLOCK_BOOTTIME). id_ms: the current millisecond in the id
    // space (marks and reservations).
    virtual int64_t boot_ns() noexcept = 0;
    virtual int64_t id_ms() noexcept = 0;
    // True once the host stops (SIGTERM): a pending coordinator call is abandoned.
    virtual bool stop_requested() noexcept = 0;

    // Publishes the lease for whoever issues ids: state (Expired while
    // stopping), worker id, deadline, counters, last error. A state that is
    // not Held, or stopping, fences ids in flight: no id is issued from the
    // return on until a later publish of Held or a new tenure.
    virtual void publish(const core::Lease& lease) noexcept = 0;

    // The generator's position as a local mark for the hand-over: its
    // millisecond (-1: none); exact (clean) when it is an id issued or an
    // exact mark, else (the position still at a floor that is a reservation
    // of the previous run, after a crash) not clean, with the floor's grace
    // as window_ms, so that the new tenure waits it out as the floor would.
    virtual core::Mark local_mark() noexcept = 0;
    // A newly claimed worker id: the generator starts after max(h.floor_ms,
    // its own last millisecond) with `worker`, a clock behind the floor by up
    // to h.grace_ms waited out; its reservation in the coordinator is that
    // start (nothing past it reserved yet). coord_mark_is_ours: the floor is
    // this node's own (for messages that name the floor's source).
    virtual void start_tenure(int32_t worker, const core::Handover& h, bool coord_mark_is_ours) noexcept = 0;
    // Fences ids (as publish does for a state that is not Held) and returns
    // the millisecond of the last id issued: no id is issued past it.
    virtual int64_t fence_ids() noexcept = 0;

    // The end of the coordinator's reservation the host publishes (-1: none), and the
    // latest millisecond a waiting caller needs covered (-1: none).
    virtual int64_t coord_reserved_ms() noexcept = 0;
    virtual int64_t demand_ms() noexcept = 0;
    // A write of the coordinator's mark reaching until_ms is confirmed: ids may be
    // issued up to it (never lowers what is published).
    virtual void publish_coord_reservation(int64_t until_ms) noexcept = 0;
    // Each write attempt of the coordinator's mark: "" when it succeeded, else a
    // sentence (callers waiting for a reservation report it).
    virtual void record_mark_attempt(const char* error) noexcept = 0;

    // Clock failover (core/backup.hpp). backup_wanted: -1, or a caller
    // waits for a backup worker id and this is its clock tolerance (ms).
    // read_generator: the word ids are issued from now, with its floor,
    // then the clock, in the id path's order (core::ClockReading).
    // record_backup_attempt: the outcome of an attempt, "" when a backup
    // started or none was needed (the clock is not refused on the driver's
    // reading: callers decide again), else why none could be taken (callers
    // waiting report it). start_backup: ids go on under `worker` after floor_ms (its
    // mark), the own id's tenure fenced; returns the last millisecond issued
    // under the own id. end_backup: ids go on under the own id `worker`
    // after own_last_ms (and after the backup's last millisecond), the
    // backup's tenure fenced; returns the backup's last millisecond.
    // backup_lost: the lease that held the backup is gone.
    virtual int64_t backup_wanted() noexcept = 0;
    virtual void read_generator(core::GeneratorState* state, int64_t* now_ms) noexcept = 0;
    virtual void record_backup_attempt(const char* error) noexcept = 0;
    virtual int64_t start_backup(int32_t worker, int64_t floor_ms) noexcept = 0;
    virtual int64_t end_backup(int32_t worker, int64_t own_last_ms) noexcept = 0;
    virtual void backup_lost() noexcept = 0;

    virtual uint32_t random() noexcept = 0;
    // An event worth a line in the server log; detail and hint may be null.
    virtual void log(const char* message, const char* detail, const char* hint) noexcept = 0;

protected:
    ~LeaseHost() = default;
};

class LeaseDriver {
public:
    // The longest sleep between turns (a turn runs earlier when woken).
    static constexpr int64_t kTickMs = 100;
    // At a shutdown, the exact mark and the revoke together get this long.
    static constexpr int64_t kShutdownBudgetNs = int64_t{900} * 1000000;

    // coordinator: etcd's or ZooKeeper's, with its endpoints, prefix and
    // timeouts; its abort hook is set to the driver's (host.stop_requested(),
    // or the shutdown budget). me: this node's identity, with its instance
    // (core::random_instance() of the host's strong random source, made at
    // start), stored in the worker key with the lease's TTL. fleet: this
    // node's settings, compared with <prefix>/fleet's.
    LeaseDriver(LeaseHost& host, const core::LeaseConfig& cfg, std::unique_ptr<core::Coordinator> coordinator,
                core::NodeIdentity me, core::FleetSettings fleet) noexcept;
    LeaseDriver(const LeaseDriver&) = delete;
    LeaseDriver& operator=(const LeaseDriver&) = delete;

    // One turn: at most one step of the lease, then the coordinator mark's
    // renewal while the id is held. Returns how long to wait (ms, 0 to
    // kTickMs) before the next turn; the host may run it earlier (a
    // caller's demand).
    int64_t turn() noexcept;

    // Stops ids, hands the exact mark over and revokes the lease, within
    // kShutdownBudgetNs whatever the coordinator does (the host's stop_requested() no
    // longer aborts these calls). Returns whether every call the plan needed
    // succeeded. Call it once, last.
    bool shutdown() noexcept;

    const core::Lease& lease() const noexcept { return lease_; }
    core::Coordinator& coordinator() noexcept { return *coordinator_; }

private:
    static bool should_abort(void* self) noexcept;
    void fail(core::LeaseAction what, const core::CoordStatus& s) noexcept;
    void check_fleet() noexcept;
    // The worker key's value: the identity with the lease's granted TTL.
    std::string claim_value() const noexcept;
    // Logs last_error once when it is a refusal the operator must act on
    // (a clone, the fleet's settings) or another run's lease waited out.
    void log_refusal() noexcept;
    void lease_gone() noexcept;
    void read_mark() noexcept;
    void renew_mark() noexcept;
    void mark_write_failed(const char* text) noexcept;
    void revoke_dropped(int64_t lease_id) noexcept;
    void clock_failover() noexcept;
    void take_backup(const core::ClockReading& r, int32_t avoid) noexcept;
    void end_backup(bool switching) noexcept;
    void drop_backup() noexcept;
    void leave_stray(int32_t worker) noexcept;
    bool write_exact_mark(int32_t worker, int64_t exact_ms, int64_t revision) noexcept;

    LeaseHost& host_;
    core::LeaseConfig cfg_;
    core::NodeIdentity me_;
    std::string identity_;  // me_ as text (without a TTL)
    core::FleetSettings fleet_;
    std::string logged_error_;  // last_error as last logged by log_refusal()
    // Non-zero during shutdown(): calls are abandoned at this boot time
    // instead of at host_.stop_requested().
    int64_t budget_deadline_ns_ = 0;
    std::unique_ptr<core::Coordinator> coordinator_;
    core::Lease lease_;
    int64_t mark_revision_ = 0;  // of the mark of mark_worker_ as last read or written
    int32_t mark_worker_ = -1;
    // Values of the coordinator's mark written without a confirmed answer since the
    // last confirmed write (at most one of them can have been applied: they
    // all compare on the same revision).
    static constexpr size_t kMaxUnconfirmed = 64;
    std::vector<int64_t> unconfirmed_;
    int32_t mark_failures_ = 0;  // failed writes of the coordinator's mark in a row
    // Clock failover: the backup worker id ids are issued under (-1: none),
    // the lease that holds it, the own id's last millisecond, and the own
    // id's mark state while the backup's is the one renewed (mark_worker_,
    // mark_revision_ and unconfirmed_ are the backup's then).
    int32_t backup_worker_ = -1;
    int64_t backup_lease_ = 0;
    int64_t own_last_ms_ = -1;
    int64_t own_mark_revision_ = 0;
    std::vector<int64_t> own_unconfirmed_;
    int64_t backup_since_ns_ = 0;     // boot clock: when the backup started (its hold)
    int64_t backup_retry_at_ns_ = 0;  // boot clock: no new attempt before this after one failed
    // A backup given back whose key could not be deleted yet (-1: none), and
    // the lease that claimed it: the key is that lease's, deleted with it
    // when the lease goes; no other lease of this node may delete it (a
    // later lease may have claimed the id anew, as its own).
    int32_t stray_backup_ = -1;
    int64_t stray_lease_ = 0;
    int64_t mark_retry_at_ns_ = 0;  // boot clock: no write before this after a failure
};

}  // namespace snowflake::coord
