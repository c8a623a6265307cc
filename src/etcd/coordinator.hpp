// etcd as the coordinator (core/coordinator.hpp), over the gateway client
// (client.hpp): a lease, <prefix>/workers/<id> attached to it, the mark's
// mod revision as its revision, the guard a compare on the worker key's
// lease, the worker key stamped by each mark write (a put that keeps its
// value and lease), <prefix>/fleet a key without a lease.
#pragma once

#include "../core/coordinator.hpp"
#include "client.hpp"

#include <string>

namespace snowflake::etcd {

class EtcdCoordinator final : public core::Coordinator {
public:
    // options' abort hook is replaced by set_abort_hook()'s.
    EtcdCoordinator(Options options, std::string prefix) noexcept;

    const char* name() const noexcept override { return "etcd"; }
    std::string lease_text(int64_t lease_id) const noexcept override;
    void set_abort_hook(bool (*should_abort)(void*), void* arg) noexcept override;

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

private:
    static bool abort_trampoline(void* self) noexcept;

    std::string prefix_;
    bool (*should_abort_)(void*) = nullptr;
    void* abort_arg_ = nullptr;
    Client client_;
};

}  // namespace snowflake::etcd
