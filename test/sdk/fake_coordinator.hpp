// An in-memory core::Coordinator (core/coordinator.hpp) for the C library's
// tests without a server: leases, worker keys, marks with revisions and the
// fleet in one registry that every generator of the test shares, and knobs
// to make it misbehave (a lease dropped, mark writes failing). Leases do not
// expire by time here: a test drops them.
#pragma once

#include "core/coord_schema.hpp"
#include "core/coordinator.hpp"
#include "core/mark.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace sdk_test {

namespace core = snowflake::core;

struct FakeRegistry {
    std::mutex mu;
    int64_t next_lease = 100;
    int64_t revision = 0;
    std::set<int64_t> leases;
    struct Key {
        std::string value;
        int64_t lease = 0;
        int64_t stamp = 0;  // revision of the last write (the worker key's "mod revision")
    };
    std::map<int32_t, Key> workers;
    std::map<int32_t, Key> marks;                  // lease unused; stamp: the revision
    std::map<int32_t, int64_t> mark_written_with;  // the worker key's stamp the mark was written with
    std::string fleet;
    std::atomic<bool> fail_mark_writes{false};
    std::atomic<bool> fail_grants{false};  // no new lease (the coordinator unreachable for grants)
    // The highest mark value a write of the worker's mark made (for checks).
    std::map<int32_t, int64_t> highest_mark_ms;

    // The coordinator forgets a lease (and its keys): the holder's next
    // keepalive finds it gone.
    void drop_lease_of(int32_t worker) {
        std::lock_guard<std::mutex> lock(mu);
        auto it = workers.find(worker);
        if (it == workers.end()) return;
        const int64_t lease = it->second.lease;
        leases.erase(lease);
        for (auto w = workers.begin(); w != workers.end();)
            w = w->second.lease == lease ? workers.erase(w) : std::next(w);
    }
    // A worker id held by another process's lease (one the test never drops).
    void hold_elsewhere(int32_t worker) {
        std::lock_guard<std::mutex> lock(mu);
        const int64_t lease = next_lease++;
        leases.insert(lease);
        workers[worker] = {"elsewhere", lease, ++revision};
    }
    // The mark an earlier holder of a worker id left (ms since the epoch).
    void set_mark(int32_t worker, int64_t ms, bool exact) {
        std::lock_guard<std::mutex> lock(mu);
        core::Mark m;
        m.ms = ms;
        m.clean = exact;
        marks[worker] = {core::encode_coord_mark(m), 0, ++revision};
    }
    bool holds(int32_t worker) {
        std::lock_guard<std::mutex> lock(mu);
        return workers.count(worker) != 0;
    }
    int64_t highest_mark(int32_t worker) {
        std::lock_guard<std::mutex> lock(mu);
        auto it = highest_mark_ms.find(worker);
        return it == highest_mark_ms.end() ? -1 : it->second;
    }
};

class FakeCoordinator final : public core::Coordinator {
public:
    explicit FakeCoordinator(FakeRegistry& r) : r_(r) {}
    const char* name() const noexcept override { return "etcd"; }
    std::string lease_text(int64_t lease_id) const noexcept override { return std::to_string(lease_id); }
    void set_abort_hook(bool (*)(void*), void*) noexcept override {}

    core::CoordGrant grant(int64_t ttl_ms) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        core::CoordGrant g;
        if (r_.fail_grants.load()) {
            g.status.code = core::CoordCode::Failed;
            g.status.error = "the fake coordinator grants no lease";
            return g;
        }
        g.lease_id = r_.next_lease++;
        g.ttl_ms = ttl_ms;
        r_.leases.insert(g.lease_id);
        return g;
    }
    core::CoordStatus keepalive(int64_t lease_id) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        return alive(lease_id);
    }
    core::CoordStatus release(int64_t lease_id) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        r_.leases.erase(lease_id);
        for (auto w = r_.workers.begin(); w != r_.workers.end();)
            w = w->second.lease == lease_id ? r_.workers.erase(w) : std::next(w);
        return {};
    }
    core::CoordStatus release_other(int64_t lease_id, int32_t worker) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        auto it = r_.workers.find(worker);
        if (it != r_.workers.end() && it->second.lease == lease_id) r_.workers.erase(it);
        r_.leases.erase(lease_id);
        return {};
    }
    core::CoordStatus unclaim(int32_t worker, int64_t lease_id) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        auto it = r_.workers.find(worker);
        if (it != r_.workers.end() && it->second.lease == lease_id) r_.workers.erase(it);
        return {};
    }
    core::CoordWorkers list_workers() noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        core::CoordWorkers w;
        for (const auto& kv : r_.workers) core::taken_add(w.taken, kv.first);
        return w;
    }
    core::CoordClaim claim(int32_t worker, const std::string& identity, int64_t lease_id) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        core::CoordClaim c;
        c.status = alive(lease_id);
        if (!c.status.ok()) return c;
        auto it = r_.workers.find(worker);
        if (it != r_.workers.end()) {
            c.holder_value = it->second.value;
            c.holder_lease = it->second.lease;
            return c;
        }
        r_.workers[worker] = {identity, lease_id, ++r_.revision};
        c.claimed = true;
        return c;
    }
    core::CoordMarkRead read_mark(int32_t worker) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        core::CoordMarkRead m;
        auto it = r_.marks.find(worker);
        if (it != r_.marks.end()) {
            m.found = true;
            m.value = it->second.value;
            m.revision = it->second.stamp;
        }
        return m;
    }
    core::CoordMarkWrite write_mark(int32_t worker, const std::string& value, int64_t expected_revision,
                                    int64_t lease_id) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        core::CoordMarkWrite w;
        if (r_.fail_mark_writes.load()) {
            w.status.code = core::CoordCode::Failed;
            w.status.error = "the fake coordinator fails mark writes";
            return w;
        }
        auto key = r_.workers.find(worker);
        if (key == r_.workers.end() || key->second.lease != lease_id) {
            w.guard_failed = true;
            return w;
        }
        auto it = r_.marks.find(worker);
        const int64_t current = it == r_.marks.end() ? 0 : it->second.stamp;
        if (current != expected_revision) {
            w.found = it != r_.marks.end();
            if (w.found) {
                w.current_value = it->second.value;
                w.current_revision = current;
                w.current_ours = r_.mark_written_with[worker] == key->second.stamp;
            }
            return w;
        }
        const int64_t rev = ++r_.revision;
        r_.marks[worker] = {value, 0, rev};
        key->second.stamp = rev;
        r_.mark_written_with[worker] = rev;
        core::Mark m;
        if (core::decode_coord_mark(value, &m))
            r_.highest_mark_ms[worker] = std::max(r_.highest_mark_ms.count(worker) ? r_.highest_mark_ms[worker]
                                                                                   : -1,
                                                  m.ms);
        w.succeeded = true;
        w.revision = rev;
        return w;
    }
    core::CoordFleet ensure_fleet(const std::string& value) noexcept override {
        std::lock_guard<std::mutex> lock(r_.mu);
        core::CoordFleet f;
        f.key = "/fake/fleet";
        if (r_.fleet.empty()) {
            r_.fleet = value;
            f.created = true;
        }
        f.value = r_.fleet;
        return f;
    }

private:
    core::CoordStatus alive(int64_t lease_id) {
        core::CoordStatus s;
        if (r_.leases.count(lease_id) == 0) {
            s.code = core::CoordCode::SessionGone;
            s.error = "the fake coordinator does not know the lease";
        }
        return s;
    }
    FakeRegistry& r_;
};

}  // namespace sdk_test
