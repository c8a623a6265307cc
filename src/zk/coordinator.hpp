// ZooKeeper as the coordinator (core/coordinator.hpp), over Apache
// ZooKeeper's single-threaded asynchronous C client (libzookeeper_st): no
// client thread ever runs in the process, and no ZooKeeper protocol is
// written here. Every call is an asynchronous request whose completion this
// object waits for by driving the client itself: zookeeper_interest() gives
// the socket, the events and the client's own timeout (its pings), poll()
// waits at most 50 ms at a time (the abort hook is polled between slices),
// zookeeper_process() runs the completions. Between calls the lease driver
// calls poll() every turn (at most 100 ms apart), so the client's pings and
// reconnections go on while the worker sleeps.
//
// The mapping (core/coordinator.hpp):
// - lease = the session. grant() opens a new session asking for ttl as its
//   timeout and reports the timeout the ensemble negotiated; it also creates
//   <prefix>, <prefix>/workers and <prefix>/marks if they are missing.
// - keepalive() = a multi with one check op (any version) on <prefix>: a
//   request that goes through the leader, which refuses it for an expired
//   session (a read could be answered by a follower that has not yet applied
//   the session's expiry). Its send time bounds the session's expiry from
//   below, as an etcd keepalive's does.
// - claim() = create <prefix>/workers/<id> EPHEMERAL with the node's identity;
//   if it exists, its data and ephemeralOwner (the holder's session) are
//   read. The node goes when the session closes or expires.
// - marks are PERSISTENT <prefix>/marks/<id>; revision = znode version + 1
//   (0: absent). write_mark() reads the worker node first: the guard is its
//   ephemeralOwner, our session (a version alone is 0 for every new node, so
//   a node deleted by hand and re-created by another session would pass).
//   Then a multi: setData(<prefix>/workers/<id>, its data, the version just
//   read) + setData(mark, expected version) (or create when absent). The
//   multi runs in our session, which the leader checks: a node whose session
//   expired cannot write; the first op fails if the worker node changed
//   since it was read, and it stamps the worker node: a mark whose mzxid is
//   our worker node's was written by a multi of ours (CoordMarkWrite::
//   current_ours). (What is left, in docs/zookeeper.md: our node deleted by
//   hand and re-created by another session, at the same version, between
//   that read and the multi.)
// - <prefix>/fleet is PERSISTENT, created with our settings if absent.
// - Every delete of a worker node reads it first and deletes it, at the
//   version read, only if its ephemeralOwner is the session it is deleted
//   for: release(own session) deletes our worker nodes and closes the
//   session; release_other(session, id) deletes <prefix>/workers/<id> only
//   if it is that session's (an earlier session of this very instance).
// - Reads after our own create see everything committed before it: a
//   ZooKeeper server answers a session's requests in order, and a client
//   never reconnects to a server behind the last zxid it saw.
//
// Reconnecting. The client picks the next server itself, with a known bug
// (ZOOKEEPER-2466, in 3.8): once every server of the connect string failed
// once, it advances its cursor twice per failed connection, so with two
// servers it retries one of them only, and, never reaching the end of its
// list, without its pause: ~15,000 refused connects a second on a dead
// server while the live one is never tried, until the session expires.
// Two guards here: after a connection (or an attempt) ends, the client is
// not asked for the next one before kReconnectPauseMs; and after
// 2 x (servers listed) such ends in a row without a connection, the handle
// is made again with the session's id and password (zookeeper_init with a
// clientid: the same session), which tries every server once more.
#pragma once

#include "../core/coordinator.hpp"

#include <cstdint>
#include <string>
#include <vector>

typedef struct _zhandle zhandle_t;  // <zookeeper/zookeeper.h>
struct Stat;
struct timeval;

namespace snowflake::zk {

struct Options {
    std::string hosts;                  // snowflake.zookeeper_hosts: host:port[,host:port...][/chroot]
    std::string prefix;                 // snowflake.lease_prefix
    int64_t timeout_ms = 1000;          // per call
    int64_t connect_timeout_ms = 3000;  // grant: until the session is established
};

class ZkCoordinator final : public core::Coordinator {
public:
    explicit ZkCoordinator(Options options) noexcept;
    ~ZkCoordinator() override;

    const char* name() const noexcept override { return "zookeeper"; }
    const char* display_name() const noexcept override { return "ZooKeeper"; }
    const char* lease_noun() const noexcept override { return "session"; }
    std::string lease_text(int64_t lease_id) const noexcept override;
    void set_abort_hook(bool (*should_abort)(void*), void* arg) noexcept override;
    void poll() noexcept override;
    // The leader refreshes a session from its followers' answers to its pings.
    bool renewals_relayed() const noexcept override { return true; }

    core::CoordGrant grant(int64_t ttl_ms) noexcept override;
    core::CoordStatus keepalive(int64_t lease_id) noexcept override;
    core::CoordStatus release(int64_t lease_id) noexcept override;
    core::CoordStatus release_other(int64_t lease_id, int32_t worker) noexcept override;
    core::CoordStatus unclaim(int32_t worker, int64_t lease_id) noexcept override;
    core::CoordWorkers list_workers() noexcept override;
    core::CoordClaim claim(int32_t worker, const std::string& identity, int64_t lease_id) noexcept override;
    core::CoordMarkRead read_mark(int32_t worker) noexcept override;
    core::CoordMarkWrite write_mark(int32_t worker, const std::string& value, int64_t expected_revision,
                                    int64_t lease_id) noexcept override;
    core::CoordFleet ensure_fleet(const std::string& value) noexcept override;

    // The socket the client wants watched now and whether for writing
    // (-1: none), for a host that sleeps on it between turns.
    int socket(bool* want_write) noexcept;

    struct Pending;  // one request in flight (pending.hpp)

private:
    static void watcher(zhandle_t* zh, int type, int state, const char* path, void* ctx);
    // Drives the client until p is done, the timeout passes or the hook
    // aborts; an unfinished p is left to its completion to free.
    core::CoordStatus wait(Pending* p, int64_t timeout_ms, const char* what) noexcept;
    // One round of the client: wait at most wait_ms for its socket.
    void pump(int64_t wait_ms) noexcept;
    // zookeeper_interest(), or fd -1 and the time left while a reconnection
    // is held back.
    int interest(int* fd, int* events, struct timeval* tv) noexcept;
    // After a call of the client that returned rc: the guards above.
    void after_client_call(int rc) noexcept;
    // A new handle for the same session (or none yet), the old one closed.
    void remake_handle() noexcept;
    core::CoordStatus no_session(const char* what) const noexcept;
    core::CoordStatus status_of(int rc, const char* what) const noexcept;
    core::CoordStatus ensure_path(const std::string& path) noexcept;
    void close_session() noexcept;
    // Shuts the client's socket down, so that a close request fails at once.
    void cut_connection() noexcept;
    std::string worker_path(int32_t worker) const;
    std::string mark_path(int32_t worker) const;

    // The least time between the end of a connection (or an attempt) and
    // the next attempt.
    static constexpr int64_t kReconnectPauseMs = 10;

    Options options_;
    int64_t ttl_ms_ = 0;           // the session timeout asked for
    size_t servers_ = 1;           // servers in the connect string
    int ended_in_row_ = 0;         // connections ended since the last one established
    int64_t reconnect_at_ms_ = 0;  // no new attempt before (mono ms)
    bool (*should_abort_)(void*) = nullptr;
    void* abort_arg_ = nullptr;
    zhandle_t* zh_ = nullptr;
    int64_t session_ = 0;   // the session id once established (0: none)
    bool expired_ = false;  // the ensemble said the session expired
    // The worker nodes we created in this session (its own id, and a backup
    // id while one is held: core/backup.hpp), each with its data (a mark
    // write sets it again, to stamp the node).
    struct Claimed {
        int32_t worker;
        std::string value;
    };
    std::vector<Claimed> claimed_;
    const Claimed* find_claimed(int32_t worker) const noexcept;
    void add_claimed(int32_t worker, const std::string& value) noexcept;
    void drop_claimed(int32_t worker) noexcept;
    // The request sent with p (sent: what its zoo_a* call returned), waited
    // for: true when it was answered (p->rc; the caller reads p and deletes
    // it), else *s says why and p is no longer the caller's (freed here, or
    // by its completion once it comes).
    bool send(Pending* p, int sent, const char* what, core::CoordStatus* s) noexcept;
    // Creates path holding value (flags: ZOO_PERSISTENT or ZOO_EPHEMERAL):
    // true when answered, with its code in *rc (ZOK, ZNODEEXISTS, ...); else
    // *s says why.
    bool create_node(const std::string& path, const std::string& value, int flags, const char* what, int* rc,
                     core::CoordStatus* s) noexcept;
    // Reads path: *rc ZOK (*value and *stat filled in; value may be null)
    // or ZNONODE; any other outcome is the status returned. what: the step,
    // for messages.
    core::CoordStatus read_node(const std::string& path, const char* what, int* rc, std::string* value,
                                struct Stat* stat) noexcept;
    // Deletes the worker node of worker if its ephemeralOwner is owner, at
    // the version read; absent, another session's or changed since counts
    // as done (it is not owner's to delete).
    core::CoordStatus delete_owned(int32_t worker, int64_t owner, const char* what) noexcept;
};

}  // namespace snowflake::zk
