// The coordinator: what the lease driver (src/coord/lease_driver.hpp) asks
// of the service that leases worker ids, whichever it is. Two implement it:
// etcd (src/etcd/coordinator.hpp: a lease, keys attached to it, mod
// revisions) and ZooKeeper (src/zk/coordinator.hpp: a session, ephemeral
// znodes, znode versions). The lease state machine (lease.hpp), fencing and
// the hand-over are the driver's and the core's, once for both; a backend
// only performs calls and reports their outcome in these terms:
//
//   lease        etcd: a lease id;            ZooKeeper: the session id
//   grant        etcd: LeaseGrant;            ZooKeeper: a new session (the
//                ttl granted is the negotiated session timeout)
//   keepalive    a round trip that proves the lease/session alive when it was
//                sent (etcd: LeaseKeepAlive; ZooKeeper: a multi with one
//                check, which goes through the leader). renewals_relayed():
//                the service's expiry clock learns of it only later (see
//                "Relayed renewals" in lease.hpp)
//   claim        create <prefix>/workers/<id> in the lease if it does not
//                exist, else read its holder (value and lease)
//   mark         <prefix>/marks/<id>, persistent; revision 0 = absent. The
//                revision only needs to change with every write (etcd: mod
//                revision; ZooKeeper: version + 1).
//   write_mark   set the mark only if its revision is the expected one and
//                the worker key is still held in our lease (the guard: etcd,
//                the key's lease; ZooKeeper, the znode's ephemeralOwner),
//                stamping the worker key in the same transaction (etcd: its
//                mod revision; ZooKeeper: its mzxid), so that a mark written
//                with our claim is told from one that only holds an equal
//                value; otherwise read the mark and the worker key
//   ensure_fleet <prefix>/fleet, persistent: created with our settings if
//                absent, else read (core/coord_schema.hpp)
//   release      end our own lease (its worker key goes at once)
//   release_other  free a worker key held by another lease of this very
//                instance (an earlier lease of this run: core::HolderKind::
//                ThisRun), only if that lease still holds it
//   unclaim      delete one worker key of our own lease, keeping the lease
//                and its other keys (a backup worker id given back: a lease
//                may hold two, see core/backup.hpp)
//
// Pure interface: no I/O here. Implementations block for at most their
// call timeout, poll the abort hook at least every 50 ms while they wait,
// never throw and never raise an error.
#pragma once

#include "pure.hpp"

#include "lease.hpp"

#include <cstdint>
#include <string>

namespace snowflake::core {

enum class CoordCode {
    Ok,
    Failed,       // network, timeout, an answer the client cannot use: retried
    Aborted,      // the abort hook said so
    SessionGone,  // the lease (etcd) or session (ZooKeeper) no longer exists
};

struct CoordStatus {
    CoordCode code = CoordCode::Ok;
    std::string error;  // a sentence for logs and lease_last_error; empty when ok
    bool ok() const noexcept { return code == CoordCode::Ok; }
};

struct CoordGrant {
    CoordStatus status;
    int64_t lease_id = 0;
    int64_t ttl_ms = 0;  // what the service granted
};

struct CoordWorkers {
    CoordStatus status;
    TakenIds taken;  // worker ids held now
};

struct CoordClaim {
    CoordStatus status;
    bool claimed = false;      // created in our lease
    std::string holder_value;  // !claimed: the holder's identity (or anything)
    int64_t holder_lease = 0;  // !claimed: the holder's lease (0: unknown)
};

struct CoordMarkRead {
    CoordStatus status;
    bool found = false;
    std::string value;
    int64_t revision = 0;  // 0 when absent
};

struct CoordMarkWrite {
    CoordStatus status;
    bool succeeded = false;
    int64_t revision = 0;  // succeeded: the mark's new revision
    // !succeeded: the guard failed (the worker key is not in our lease any
    // more), or the mark as it is now.
    bool guard_failed = false;
    bool found = false;
    std::string current_value;
    int64_t current_revision = 0;
    // !succeeded, the guard held: the mark as it is now was written in the
    // same transaction as the last stamp of our worker key, so by a write of
    // ours in this lease (one whose answer was lost): core::adopt_lost_write.
    bool current_ours = false;
};

struct CoordFleet {
    CoordStatus status;
    std::string key;       // the key's name, for messages
    bool created = false;  // our settings were recorded (the key was absent)
    std::string value;     // the settings recorded (ours when created)
};

class Coordinator {
public:
    virtual ~Coordinator() = default;

    // "etcd", "zookeeper" (snowflake_stats.coordinator).
    virtual const char* name() const noexcept = 0;
    // For messages: "etcd", "ZooKeeper"; and what its lease is called
    // ("lease", "session").
    virtual const char* display_name() const noexcept { return name(); }
    virtual const char* lease_noun() const noexcept { return "lease"; }
    // The lease as text for snowflake_stats (etcd: decimal; ZooKeeper: the
    // session id in hex, as ZooKeeper's own tools print it).
    virtual std::string lease_text(int64_t lease_id) const noexcept = 0;
    // Polled while a call waits; true abandons the call (Aborted).
    virtual void set_abort_hook(bool (*should_abort)(void*), void* arg) noexcept = 0;
    // Called every turn of the driver, between calls: lets a backend whose
    // client must be serviced (ZooKeeper's pings) do so without blocking.
    virtual void poll() noexcept {}
    // True when a confirmed keepalive may not yet have refreshed the lease
    // where it expires (ZooKeeper: a follower relays it to the leader on the
    // leader's next ping). The deadline then counts from an earlier one.
    virtual bool renewals_relayed() const noexcept { return false; }

    virtual CoordGrant grant(int64_t ttl_ms) noexcept = 0;
    virtual CoordStatus keepalive(int64_t lease_id) noexcept = 0;
    // A lease that does not exist any more counts as released (ok).
    virtual CoordStatus release(int64_t lease_id) noexcept = 0;
    virtual CoordStatus release_other(int64_t lease_id, int32_t worker) noexcept = 0;
    // A key that is absent, or held by another lease, counts as ok.
    virtual CoordStatus unclaim(int32_t worker, int64_t lease_id) noexcept = 0;
    virtual CoordWorkers list_workers() noexcept = 0;
    virtual CoordClaim claim(int32_t worker, const std::string& identity, int64_t lease_id) noexcept = 0;
    virtual CoordMarkRead read_mark(int32_t worker) noexcept = 0;
    virtual CoordMarkWrite write_mark(int32_t worker, const std::string& value, int64_t expected_revision,
                                      int64_t lease_id) noexcept = 0;
    virtual CoordFleet ensure_fleet(const std::string& value) noexcept = 0;

protected:
    Coordinator() = default;
    Coordinator(const Coordinator&) = delete;
    Coordinator& operator=(const Coordinator&) = delete;
};

}  // namespace snowflake::core
