#include "coordinator.hpp"

#include "../core/coord_schema.hpp"
#include "pending.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <zookeeper/zookeeper.h>

namespace snowflake::zk {

namespace {

using Pending = ZkCoordinator::Pending;

int64_t mono_ms() noexcept {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The session is over (expired, or the handle unusable). ZSESSIONMOVED is
// not: the session lives on another server; the call is retried.
bool session_rc(int rc) noexcept { return rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE; }

// The handle can never connect again. (zookeeper_process() also says
// ZINVALIDSTATE when it merely has no socket, after a refused connect: that
// is no expiry.)
bool handle_over(zhandle_t* zh) noexcept {
    const int st = zoo_state(zh);
    return st == ZOO_EXPIRED_SESSION_STATE || st == ZOO_AUTH_FAILED_STATE;
}

}  // namespace

ZkCoordinator::ZkCoordinator(Options options) noexcept : options_(std::move(options)) {
    // The client logs to stderr (the server log): errors only.
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    const std::string list = options_.hosts.substr(0, options_.hosts.find('/'));
    servers_ = 1;
    for (char ch : list)
        if (ch == ',') servers_++;
}

ZkCoordinator::~ZkCoordinator() { close_session(); }

std::string ZkCoordinator::lease_text(int64_t lease_id) const noexcept {
    if (lease_id == 0) return std::string();
    char text[32];
    snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(lease_id));
    return text;
}

void ZkCoordinator::set_abort_hook(bool (*should_abort)(void*), void* arg) noexcept {
    should_abort_ = should_abort;
    abort_arg_ = arg;
}

std::string ZkCoordinator::worker_path(int32_t worker) const { return core::worker_key(options_.prefix, worker); }
std::string ZkCoordinator::mark_path(int32_t worker) const { return core::mark_key(options_.prefix, worker); }

void ZkCoordinator::watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
    auto* self = static_cast<ZkCoordinator*>(ctx);
    if (self == nullptr || type != ZOO_SESSION_EVENT) return;
    if (state == ZOO_EXPIRED_SESSION_STATE) self->expired_ = true;
}

int ZkCoordinator::socket(bool* want_write) noexcept {
    *want_write = false;
    if (zh_ == nullptr) return -1;
    int fd = -1, events = 0;
    struct timeval tv {};
    if (interest(&fd, &events, &tv) != ZOK) return -1;
    *want_write = (events & ZOOKEEPER_WRITE) != 0;
    return fd;
}

int ZkCoordinator::interest(int* fd, int* events, struct timeval* tv) noexcept {
    const int64_t left = reconnect_at_ms_ - mono_ms();
    if (left > 0) {  // the client has no socket now: nothing to watch
        *fd = -1;
        *events = 0;
        tv->tv_sec = static_cast<time_t>(left / 1000);
        tv->tv_usec = static_cast<suseconds_t>(left % 1000 * 1000);
        return ZOK;
    }
    const int rc = zookeeper_interest(zh_, fd, events, tv);
    after_client_call(rc);
    return rc;
}

void ZkCoordinator::after_client_call(int rc) noexcept {
    if (zh_ == nullptr) return;
    if (rc == ZSESSIONEXPIRED || handle_over(zh_)) {
        expired_ = true;
        return;
    }
    if (zoo_state(zh_) == ZOO_CONNECTED_STATE) ended_in_row_ = 0;
    if (rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT) return;
    // A connection or an attempt ended (the client closed its socket).
    reconnect_at_ms_ = mono_ms() + kReconnectPauseMs;
    if (++ended_in_row_ >= 2 * static_cast<int>(servers_)) {
        ended_in_row_ = 0;
        remake_handle();
    }
}

void ZkCoordinator::remake_handle() noexcept {
    clientid_t id{};
    const bool resume = session_ != 0;
    if (resume) id = *zoo_client_id(zh_);
    zhandle_t* fresh = zookeeper_init(options_.hosts.c_str(), &ZkCoordinator::watcher, static_cast<int>(ttl_ms_),
                                      resume ? &id : nullptr, this, 0);
    if (fresh == nullptr) return;  // keep the old one
    // Not connected: the close sends no close request and the session lives
    // on; requests still queued complete with ZCLOSING.
    (void)zookeeper_close(zh_);
    zh_ = fresh;
}

void ZkCoordinator::pump(int64_t wait_ms) noexcept {
    if (zh_ == nullptr) return;
    int fd = -1, wanted = 0;
    struct timeval tv {};
    (void)interest(&fd, &wanted, &tv);
    if (zh_ == nullptr) return;
    const int64_t client_ms = static_cast<int64_t>(tv.tv_sec) * 1000 + tv.tv_usec / 1000;
    if (client_ms >= 0 && client_ms < wait_ms) wait_ms = client_ms;
    struct pollfd pfd {};
    int nfds = 0;
    if (fd >= 0) {
        pfd.fd = fd;
        pfd.events = static_cast<short>(((wanted & ZOOKEEPER_READ) != 0 ? POLLIN : 0) |
                                        ((wanted & ZOOKEEPER_WRITE) != 0 ? POLLOUT : 0));
        nfds = 1;
    }
    int events = 0;
    if (::poll(nfds > 0 ? &pfd : nullptr, static_cast<nfds_t>(nfds), static_cast<int>(wait_ms)) > 0) {
        if ((pfd.revents & (POLLIN | POLLHUP | POLLERR)) != 0) events |= ZOOKEEPER_READ;
        if ((pfd.revents & POLLOUT) != 0) events |= ZOOKEEPER_WRITE;
    }
    if (fd < 0) return;  // no socket, nothing to process (zookeeper_process() would say ZINVALIDSTATE)
    after_client_call(zookeeper_process(zh_, events));
}

void ZkCoordinator::poll() noexcept { pump(0); }

core::CoordStatus ZkCoordinator::no_session(const char* what) const noexcept {
    core::CoordStatus s;
    s.code = core::CoordCode::SessionGone;
    char text[200];
    snprintf(text, sizeof(text), "%s: the ZooKeeper session %s", what,
             expired_ ? "expired" : "is not established");
    s.error = text;
    return s;
}

core::CoordStatus ZkCoordinator::status_of(int rc, const char* what) const noexcept {
    core::CoordStatus s;
    if (rc == ZOK) return s;
    s.code = session_rc(rc) ? core::CoordCode::SessionGone : core::CoordCode::Failed;
    char text[300];
    snprintf(text, sizeof(text), "%s: %s (ZooKeeper at %s)", what, zerror(rc), options_.hosts.c_str());
    s.error = text;
    return s;
}

core::CoordStatus ZkCoordinator::wait(Pending* p, int64_t timeout_ms, const char* what) noexcept {
    const int64_t deadline = mono_ms() + timeout_ms;
    core::CoordStatus s;
    for (;;) {
        if (p->done) return s;  // the caller reads p->rc
        const bool abort = should_abort_ != nullptr && should_abort_(abort_arg_);
        const int64_t left = deadline - mono_ms();
        if (abort || left <= 0 || expired_) {
            p->abandoned = true;  // its completion frees it
            if (expired_) return no_session(what);
            s.code = abort ? core::CoordCode::Aborted : core::CoordCode::Failed;
            char text[300];
            snprintf(text, sizeof(text), "%s: %s (ZooKeeper at %s)", what,
                     abort ? "abandoned at shutdown" : "no answer within the timeout", options_.hosts.c_str());
            s.error = text;
            return s;
        }
        pump(left < 50 ? left : 50);
    }
}

void ZkCoordinator::close_session() noexcept {
    if (zh_ != nullptr) {
        // Runs the completions of abandoned requests (ZCLOSING), which free them.
        (void)zookeeper_close(zh_);
        zh_ = nullptr;
    }
    session_ = 0;
    claimed_.clear();
}

const ZkCoordinator::Claimed* ZkCoordinator::find_claimed(int32_t worker) const noexcept {
    for (const Claimed& c : claimed_)
        if (c.worker == worker) return &c;
    return nullptr;
}

void ZkCoordinator::add_claimed(int32_t worker, const std::string& value) noexcept {
    drop_claimed(worker);
    claimed_.push_back(Claimed{worker, value});
}

void ZkCoordinator::drop_claimed(int32_t worker) noexcept {
    for (size_t i = 0; i < claimed_.size(); i++)
        if (claimed_[i].worker == worker) {
            claimed_.erase(claimed_.begin() + static_cast<std::ptrdiff_t>(i));
            return;
        }
}

bool ZkCoordinator::send(Pending* p, int sent, const char* what, core::CoordStatus* s) noexcept {
    if (sent != ZOK) {
        delete p;
        *s = status_of(sent, what);
        return false;
    }
    *s = wait(p, options_.timeout_ms, what);
    return p->done;
}

bool ZkCoordinator::create_node(const std::string& path, const std::string& value, int flags, const char* what,
                                int* rc, core::CoordStatus* s) noexcept {
    auto* p = new Pending;
    if (!send(p,
              zoo_acreate(zh_, path.c_str(), value.data(), static_cast<int>(value.size()), &ZOO_OPEN_ACL_UNSAFE,
                          flags, on_string, p),
              what, s))
        return false;
    *rc = p->rc;
    delete p;
    return true;
}

core::CoordStatus ZkCoordinator::read_node(const std::string& path, const char* what, int* rc, std::string* value,
                                           struct Stat* stat) noexcept {
    auto* p = new Pending;
    core::CoordStatus s;
    if (!send(p,
              value != nullptr ? zoo_aget(zh_, path.c_str(), 0, on_data, p)
                               : zoo_aexists(zh_, path.c_str(), 0, on_stat, p),
              what, &s))
        return s;
    *rc = p->rc;
    if (p->rc == ZOK) {
        if (value != nullptr) *value = p->value;
        *stat = p->stat;
    } else if (p->rc != ZNONODE) {
        s = status_of(p->rc, what);
    }
    delete p;
    return s;
}

core::CoordStatus ZkCoordinator::delete_owned(int32_t worker, int64_t owner, const char* what) noexcept {
    const std::string path = worker_path(worker);
    int rc = ZOK;
    struct Stat st {};
    core::CoordStatus s = read_node(path, what, &rc, nullptr, &st);
    if (!s.ok() || rc == ZNONODE || st.ephemeralOwner != owner) return s;
    auto* p = new Pending;
    if (!send(p, zoo_adelete(zh_, path.c_str(), st.version, on_void, p), what, &s)) return s;
    const int done_rc = p->rc;
    delete p;
    return done_rc == ZNONODE || done_rc == ZBADVERSION ? core::CoordStatus{} : status_of(done_rc, what);
}

core::CoordStatus ZkCoordinator::ensure_path(const std::string& path) noexcept {
    // Each component in turn; one that exists is fine.
    for (size_t at = 1; at <= path.size(); at++) {
        if (at != path.size() && path[at] != '/') continue;
        const std::string part = path.substr(0, at);
        core::CoordStatus s;
        int done_rc = ZOK;
        if (!create_node(part, "", ZOO_PERSISTENT, "creating the lease prefix", &done_rc, &s)) return s;
        if (done_rc != ZOK && done_rc != ZNODEEXISTS) return status_of(done_rc, "creating the lease prefix");
    }
    return core::CoordStatus{};
}

core::CoordGrant ZkCoordinator::grant(int64_t ttl_ms) noexcept {
    core::CoordGrant g;
    close_session();
    expired_ = false;
    ttl_ms_ = ttl_ms;
    ended_in_row_ = 0;
    reconnect_at_ms_ = 0;
    errno = 0;
    zh_ = zookeeper_init(options_.hosts.c_str(), &ZkCoordinator::watcher, static_cast<int>(ttl_ms), nullptr, this,
                         0);
    if (zh_ == nullptr) {
        const int e = errno;
        g.status.code = core::CoordCode::Failed;
        g.status.error = "could not start a ZooKeeper client for \"" + options_.hosts + "\": " +
                         (e == EINVAL
                              ? std::string("not a valid connect string (host:port[,host:port...][/chroot])")
                              : std::string(std::strerror(e)));
        return g;
    }
    const int64_t deadline = mono_ms() + options_.connect_timeout_ms;
    while (zoo_state(zh_) != ZOO_CONNECTED_STATE) {
        const bool abort = should_abort_ != nullptr && should_abort_(abort_arg_);
        const int64_t left = deadline - mono_ms();
        if (abort || left <= 0 || expired_) {
            g.status.code = abort ? core::CoordCode::Aborted : core::CoordCode::Failed;
            g.status.error = "no ZooKeeper session established with " + options_.hosts + " within " +
                             std::to_string(options_.connect_timeout_ms) + " ms";
            close_session();
            return g;
        }
        pump(left < 50 ? left : 50);
    }
    const clientid_t* id = zoo_client_id(zh_);
    session_ = id != nullptr ? id->client_id : 0;
    g.lease_id = session_;
    g.ttl_ms = zoo_recv_timeout(zh_);
    for (const std::string& path : {core::workers_prefix(options_.prefix), options_.prefix + "/marks/"}) {
        core::CoordStatus s = ensure_path(path.substr(0, path.size() - 1));
        if (!s.ok()) {
            g.status = s;
            close_session();
            g.lease_id = 0;
            return g;
        }
    }
    return g;
}

core::CoordStatus ZkCoordinator::keepalive(int64_t lease_id) noexcept {
    if (zh_ == nullptr || expired_ || lease_id != session_) return no_session("renewing the session");
    auto* p = new Pending;
    p->paths[0] = options_.prefix;
    zoo_check_op_init(&p->ops[0], p->paths[0].c_str(), -1);
    core::CoordStatus s;
    if (!send(p, zoo_amulti(zh_, 1, p->ops, p->results, on_void, p), "renewing the session", &s)) return s;
    const int done_rc = p->rc;
    delete p;
    return status_of(done_rc, "renewing the session");
}

core::CoordStatus ZkCoordinator::release(int64_t lease_id) noexcept {
    if (zh_ == nullptr || lease_id != session_) return core::CoordStatus{};  // gone already
    core::CoordStatus s;
    // The ephemeral nodes go with the session; deleting them first frees
    // the ids even if the close request is lost.
    for (const Claimed& c : claimed_) {
        if (expired_ || !s.ok()) break;
        s = delete_owned(c.worker, session_, "deleting the worker node");
        if (s.code == core::CoordCode::SessionGone) s = core::CoordStatus{};
    }
    // The close request waits for the ensemble's answer; when the delete got
    // none (unreachable, or the shutdown budget spent) the connection is cut
    // first, so that the close fails at once: the session then ends when it
    // times out on the servers, as after a crash.
    if (!s.ok() || expired_) cut_connection();
    close_session();
    return s;
}

void ZkCoordinator::cut_connection() noexcept {
    if (zh_ == nullptr) return;
    int fd = -1, interest = 0;
    struct timeval tv {};
    (void)zookeeper_interest(zh_, &fd, &interest, &tv);
    if (fd >= 0) (void)::shutdown(fd, SHUT_RDWR);
}

core::CoordStatus ZkCoordinator::release_other(int64_t lease_id, int32_t worker) noexcept {
    if (zh_ == nullptr || expired_) return no_session("freeing an earlier session's worker node");
    // Only if it is still that session's: gone or re-taken, claim again.
    return delete_owned(worker, lease_id, "deleting an earlier session's worker node");
}

core::CoordStatus ZkCoordinator::unclaim(int32_t worker, int64_t lease_id) noexcept {
    if (zh_ == nullptr || expired_ || lease_id != session_) return core::CoordStatus{};  // gone with the session
    if (find_claimed(worker) == nullptr) return core::CoordStatus{};                     // not ours
    const core::CoordStatus s = delete_owned(worker, session_, "deleting the worker node");
    if (s.ok()) drop_claimed(worker);
    return s;
}

core::CoordWorkers ZkCoordinator::list_workers() noexcept {
    core::CoordWorkers w;
    if (zh_ == nullptr || expired_) {
        w.status = no_session("listing worker ids");
        return w;
    }
    const std::string dir = core::workers_prefix(options_.prefix);
    const std::string parent = dir.substr(0, dir.size() - 1);
    auto* p = new Pending;
    if (!send(p, zoo_aget_children(zh_, parent.c_str(), 0, on_children, p), "listing worker ids", &w.status))
        return w;
    if (p->rc != ZOK) {
        w.status = status_of(p->rc, "listing worker ids");
        delete p;
        return w;
    }
    for (const std::string& name : p->children)
        core::taken_add(w.taken, core::parse_worker_key(options_.prefix, dir + name));
    delete p;
    return w;
}

core::CoordClaim ZkCoordinator::claim(int32_t worker, const std::string& identity, int64_t lease_id) noexcept {
    core::CoordClaim c;
    if (zh_ == nullptr || expired_ || lease_id != session_) {
        c.status = no_session("claiming a worker id");
        return c;
    }
    const std::string path = worker_path(worker);
    int create_rc = ZOK;
    if (!create_node(path, identity, ZOO_EPHEMERAL, "claiming a worker id", &create_rc, &c.status)) return c;
    if (create_rc == ZOK) {
        c.claimed = true;
        add_claimed(worker, identity);
        return c;
    }
    if (create_rc != ZNODEEXISTS) {
        c.status = status_of(create_rc, "claiming a worker id");
        return c;
    }
    // Taken: by whom.
    auto* p = new Pending;
    if (!send(p, zoo_aget(zh_, path.c_str(), 0, on_data, p), "reading the holder of a worker id", &c.status))
        return c;
    if (p->rc == ZNONODE) {
        c.status.code = core::CoordCode::Failed;
        c.status.error = "the worker node " + path + " went away while its holder was read";
    } else if (p->rc == ZOK) {
        c.holder_value = p->value;
        c.holder_lease = p->stat.ephemeralOwner;
        if (c.holder_lease == session_) {
            // Created by an earlier claim of ours whose answer was lost.
            add_claimed(worker, p->value);
        }
    } else {
        c.status = status_of(p->rc, "reading the holder of a worker id");
    }
    delete p;
    return c;
}

core::CoordMarkRead ZkCoordinator::read_mark(int32_t worker) noexcept {
    core::CoordMarkRead m;
    if (zh_ == nullptr || expired_) {
        m.status = no_session("reading the mark");
        return m;
    }
    int rc = ZOK;
    struct Stat st {};
    m.status = read_node(mark_path(worker), "reading the mark", &rc, &m.value, &st);
    if (m.status.ok() && rc == ZOK) {
        m.found = true;
        m.revision = int64_t{st.version} + 1;
    }
    return m;
}

core::CoordMarkWrite ZkCoordinator::write_mark(int32_t worker, const std::string& value, int64_t expected_revision,
                                               int64_t lease_id) noexcept {
    core::CoordMarkWrite w;
    if (zh_ == nullptr || expired_ || lease_id != session_) {
        w.status = no_session("writing the mark");
        return w;
    }
    const Claimed* mine = find_claimed(worker);
    if (mine == nullptr) {
        w.guard_failed = true;  // not ours in this session
        return w;
    }
    // The guard: our worker node, by its owner.
    int rc = ZOK;
    struct Stat node {};
    w.status = read_node(worker_path(worker), "reading the worker node", &rc, nullptr, &node);
    if (!w.status.ok()) return w;
    if (rc == ZNONODE || node.ephemeralOwner != session_) {
        w.guard_failed = true;
        return w;
    }
    auto* p = new Pending;
    p->paths[0] = worker_path(worker);
    p->paths[1] = mark_path(worker);
    p->data = value;
    p->stamp = mine->value;
    zoo_set_op_init(&p->ops[0], p->paths[0].c_str(), p->stamp.data(), static_cast<int>(p->stamp.size()),
                    node.version, &p->stamp_stat);
    if (expected_revision == 0)
        zoo_create_op_init(&p->ops[1], p->paths[1].c_str(), p->data.data(), static_cast<int>(p->data.size()),
                           &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, p->created_path, sizeof(p->created_path));
    else
        zoo_set_op_init(&p->ops[1], p->paths[1].c_str(), p->data.data(), static_cast<int>(p->data.size()),
                        static_cast<int>(expected_revision - 1), &p->set_stat);
    if (!send(p, zoo_amulti(zh_, 2, p->ops, p->results, on_void, p), "writing the mark", &w.status)) return w;
    const int multi_rc = p->rc;
    const int guard_rc = p->results[0].err;
    const int64_t new_revision = expected_revision == 0 ? 1 : int64_t{p->set_stat.version} + 1;
    delete p;
    if (multi_rc == ZOK) {
        w.succeeded = true;
        w.revision = new_revision;
        return w;
    }
    // Only an answer of the ensemble says anything of the guard: a multi
    // that failed in the client (connection loss, operation timeout) or was
    // refused as a whole (session moved) reports that same code for each of
    // its ops, so the first op's result is read only when the multi failed
    // on one of its ops (a version, a missing or existing node).
    if (multi_rc != ZBADVERSION && multi_rc != ZNODEEXISTS && multi_rc != ZNONODE) {
        w.status = status_of(multi_rc, "writing the mark");
        return w;
    }
    if (guard_rc != ZOK && guard_rc != ZRUNTIMEINCONSISTENCY) {
        w.guard_failed = true;  // our worker node changed since it was read: not by us
        return w;
    }
    // The mark moved: read it as it is now, and whether our worker node was
    // stamped in the same transaction (a multi of ours whose answer was lost).
    struct Stat mark {};
    w.status = read_node(mark_path(worker), "reading the mark", &rc, &w.current_value, &mark);
    if (!w.status.ok()) return w;
    w.found = rc == ZOK;
    w.current_revision = w.found ? int64_t{mark.version} + 1 : 0;
    w.status = read_node(worker_path(worker), "reading the worker node", &rc, nullptr, &node);
    if (!w.status.ok()) return w;
    if (rc == ZNONODE || node.ephemeralOwner != session_) {
        w.guard_failed = true;
        return w;
    }
    w.current_ours = w.found && node.mzxid == mark.mzxid;
    return w;
}

core::CoordFleet ZkCoordinator::ensure_fleet(const std::string& value) noexcept {
    core::CoordFleet f;
    f.key = core::fleet_key(options_.prefix);
    if (zh_ == nullptr || expired_) {
        f.status = no_session("recording the fleet's settings");
        return f;
    }
    int create_rc = ZOK;
    if (!create_node(f.key, value, ZOO_PERSISTENT, "recording the fleet's settings", &create_rc, &f.status))
        return f;
    if (create_rc == ZOK) {
        f.created = true;
        f.value = value;
        return f;
    }
    if (create_rc != ZNODEEXISTS) {
        f.status = status_of(create_rc, "recording the fleet's settings");
        return f;
    }
    int rc = ZOK;
    struct Stat st {};
    f.status = read_node(f.key, "reading the fleet's settings", &rc, &f.value, &st);
    if (f.status.ok() && rc == ZNONODE) {
        f.status.code = core::CoordCode::Failed;
        f.status.error = "the fleet's settings " + f.key + " went away while they were read";
    }
    return f;
}

}  // namespace snowflake::zk
