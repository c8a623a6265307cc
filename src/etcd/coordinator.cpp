#include "coordinator.hpp"

#include "../core/coord_schema.hpp"

#include <utility>

namespace snowflake::etcd {

namespace {

core::CoordStatus status_of(const Status& s) noexcept {
    core::CoordStatus c;
    switch (s.code) {
        case Code::Ok: c.code = core::CoordCode::Ok; break;
        case Code::Aborted: c.code = core::CoordCode::Aborted; break;
        case Code::LeaseNotFound: c.code = core::CoordCode::SessionGone; break;
        default: c.code = core::CoordCode::Failed; break;
    }
    c.error = s.error;
    return c;
}

Options with_hook(Options o, bool (*hook)(void*), void* arg) noexcept {
    o.should_abort = hook;
    o.abort_arg = arg;
    return o;
}

}  // namespace

EtcdCoordinator::EtcdCoordinator(Options options, std::string prefix) noexcept
    : prefix_(std::move(prefix)), client_(with_hook(std::move(options), &EtcdCoordinator::abort_trampoline, this)) {}

bool EtcdCoordinator::abort_trampoline(void* self) noexcept {
    auto* c = static_cast<EtcdCoordinator*>(self);
    return c->should_abort_ != nullptr && c->should_abort_(c->abort_arg_);
}

void EtcdCoordinator::set_abort_hook(bool (*should_abort)(void*), void* arg) noexcept {
    should_abort_ = should_abort;
    abort_arg_ = arg;
}

std::string EtcdCoordinator::lease_text(int64_t lease_id) const noexcept {
    return lease_id == 0 ? std::string() : std::to_string(lease_id);
}

core::CoordGrant EtcdCoordinator::grant(int64_t ttl_ms) noexcept {
    const GrantResult r = client_.grant(ttl_ms / 1000);
    core::CoordGrant g;
    g.status = status_of(r.status);
    g.lease_id = r.lease_id;
    g.ttl_ms = r.ttl_s * 1000;
    return g;
}

core::CoordStatus EtcdCoordinator::keepalive(int64_t lease_id) noexcept {
    const KeepaliveResult r = client_.keepalive(lease_id);
    core::CoordStatus s = status_of(r.status);
    if (s.ok() && r.ttl_s <= 0) s.code = core::CoordCode::SessionGone;  // TTL 0: the lease is gone
    return s;
}

core::CoordStatus EtcdCoordinator::release(int64_t lease_id) noexcept {
    core::CoordStatus s = status_of(client_.revoke(lease_id));
    if (s.code == core::CoordCode::SessionGone) s = core::CoordStatus{};
    return s;
}

core::CoordStatus EtcdCoordinator::release_other(int64_t lease_id, int32_t) noexcept {
    return release(lease_id);  // the key goes with its lease
}

core::CoordStatus EtcdCoordinator::unclaim(int32_t worker, int64_t lease_id) noexcept {
    core::CoordStatus s = status_of(client_.delete_if_lease(core::worker_key(prefix_, worker), lease_id));
    if (s.code == core::CoordCode::SessionGone) s = core::CoordStatus{};
    return s;
}

core::CoordWorkers EtcdCoordinator::list_workers() noexcept {
    const RangeResult r = client_.range(core::workers_prefix(prefix_));
    core::CoordWorkers w;
    w.status = status_of(r.status);
    if (w.status.ok())
        for (const KeyValue& kv : r.kvs) core::taken_add(w.taken, core::parse_worker_key(prefix_, kv.key));
    return w;
}

core::CoordClaim EtcdCoordinator::claim(int32_t worker, const std::string& identity, int64_t lease_id) noexcept {
    const ClaimResult r = client_.claim(core::worker_key(prefix_, worker), identity, lease_id);
    core::CoordClaim c;
    c.status = status_of(r.status);
    c.claimed = r.claimed;
    c.holder_value = r.holder.value;
    c.holder_lease = r.holder.lease;
    return c;
}

core::CoordMarkRead EtcdCoordinator::read_mark(int32_t worker) noexcept {
    const GetResult r = client_.get(core::mark_key(prefix_, worker));
    core::CoordMarkRead m;
    m.status = status_of(r.status);
    m.found = r.found;
    m.value = r.kv.value;
    m.revision = r.found ? r.kv.mod_revision : 0;
    return m;
}

core::CoordMarkWrite EtcdCoordinator::write_mark(int32_t worker, const std::string& value,
                                                 int64_t expected_revision, int64_t lease_id) noexcept {
    const CasResult r = client_.compare_and_put(core::mark_key(prefix_, worker), value, expected_revision,
                                                core::worker_key(prefix_, worker), lease_id);
    core::CoordMarkWrite w;
    w.status = status_of(r.status);
    w.succeeded = r.succeeded;
    w.revision = r.revision;
    w.guard_failed = r.guard_failed;
    w.found = r.found;
    w.current_value = r.current.value;
    w.current_revision = r.current.mod_revision;
    w.current_ours = r.written_with_guard;
    return w;
}

core::CoordFleet EtcdCoordinator::ensure_fleet(const std::string& value) noexcept {
    // The claim's txn (create if absent, else read) with no lease: persistent.
    const ClaimResult r = client_.claim(core::fleet_key(prefix_), value, 0);
    core::CoordFleet f;
    f.status = status_of(r.status);
    f.key = core::fleet_key(prefix_);
    f.created = r.claimed;
    f.value = r.claimed ? value : r.holder.value;
    return f;
}

}  // namespace snowflake::etcd
