// Leased worker ids (lease_host.hpp): the one lease driver
// (src/coord/lease_driver.hpp) runs in the generator's background thread
// over LeaseRunner, its host. The host publishes the lease into the
// generator's words as the extension's lease worker publishes it into
// shared memory (src/pg/lease_worker.cpp): the deadline (0 while no lease
// is held: the fast path refuses at once), a fence when the lease is not
// held or stops, a new tenure above the worker id's mark before the lease
// is published Held, and the coordinator's reservation once its write is
// confirmed. Clock failover (core/backup.hpp, clock_backwards =
// SF_CLOCK_FAILOVER): a caller whose clock is refused asks for a backup
// worker id (g->backup_wanted) and the driver decides and takes it; the
// host moves the position word to the backup's tenure and back, as the
// extension's lease worker moves shared memory's.

#include "lease_host.hpp"
#include "error.hpp"

#include "coord/lease_driver.hpp"
#include "core/coord_schema.hpp"
#include "core/endpoints.hpp"
#include "core/handover.hpp"
#include "etcd/coordinator.hpp"
#include "zk/coordinator.hpp"
#include "zk/hosts.hpp"

#include <curl/curl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace snowflake::sdk {

class LeaseRunner final : public coord::LeaseHost {
public:
    LeaseRunner(sf_generator* g, std::unique_ptr<core::Coordinator> c, core::NodeIdentity me) noexcept
        : g_(g), zookeeper_(!g->settings.zookeeper_hosts.empty()),
          driver_(*this, lease_config(g->settings), std::move(c), std::move(me), fleet(g->settings)) {}

    // The background thread: turns until sf_close, then the driver's shutdown.
    void run() noexcept {
        while (!stop_.load()) {
            int64_t ms;
            {
                ForkGateShared gate;  // no fork() while the client is in a call
                ms = driver_.turn();
            }
            // ZooKeeper's client answers pings only when polled (a turn).
            if (zookeeper_ && ms > 10) ms = 10;
            std::unique_lock<std::mutex> lock(g_->mu);
            if (!stop_.load() && !wake_) g_->cv.wait_for(lock, std::chrono::milliseconds(ms));
            wake_ = false;
        }
        ForkGateShared gate;
        clean_ = driver_.shutdown();
    }
    // g->mu held: a caller waits for a reservation.
    void wake() noexcept { wake_ = true; }
    void stop() noexcept { stop_.store(true); }
    bool clean() const noexcept { return clean_; }

    // coord::LeaseHost
    int64_t boot_ns() noexcept override { return boottime_ns(); }
    int64_t id_ms() noexcept override { return sdk::id_ms(g_->settings); }
    bool stop_requested() noexcept override { return stop_.load(); }
    void publish(const core::Lease& l) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        const bool held = l.state == core::LeaseState::Held && !l.stopping;
        if (held && g_->lease_state != core::LeaseState::Held) g_->lease_acquisitions++;
        g_->lease_state = l.stopping ? core::LeaseState::Expired : l.state;
        g_->lease_worker = held ? l.worker : -1;
        g_->lease_failures = l.failures;
        g_->lease_error = l.last_error;
        g_->lease_error_reason = l.last_error_reason;
        Words words(*g_);
        if (held && !g_->stopping) {
            g_->deadline_ns.store(l.deadline_ns, std::memory_order_release);
            core::lift(geo(), words);
        } else {
            g_->deadline_ns.store(0, std::memory_order_release);
            (void)core::fence(geo(), words);
        }
        g_->cv.notify_all();
    }
    core::Mark local_mark() noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        return core::position_mark(core::packed_ms(geo(), g_->word.load()), g_->floor_ms, g_->floor_grace_ms,
                                   g_->own_high_ms);
    }
    void start_tenure(int32_t worker, const core::Handover& h, bool) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        // After both the worker id's mark and this process's last
        // millisecond (under the own id: a backup's position is below it).
        const core::TenureFloor t = core::tenure_floor(h, core::packed_ms(geo(), g_->word.load()),
                                                       g_->own_high_ms);
        begin_tenure_locked(worker, t.floor_ms, t.grace_ms);
        g_->lease_worker = worker;
    }
    int64_t fence_ids() noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        Words words(*g_);
        return core::fence(geo(), words);
    }
    int64_t coord_reserved_ms() noexcept override { return g_->reserved.load(); }
    int64_t demand_ms() noexcept override { return g_->demand_ms.load(); }
    void publish_coord_reservation(int64_t until_ms) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        if (until_ms > g_->reserved.load()) g_->reserved.store(until_ms, std::memory_order_release);
        g_->counters.reservations++;
        g_->cv.notify_all();
    }
    void record_mark_attempt(const char* error) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        g_->coord_mark_attempts++;
        g_->coord_mark_error = error;
        g_->cv.notify_all();
    }
    int64_t backup_wanted() noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        return g_->backup_wanted;
    }
    void read_generator(core::GeneratorState* state, int64_t* now_ms) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        const uint64_t w = g_->word.load();
        *state = core::state_after(-1);
        state->last_ms = core::packed_ms(geo(), w);
        state->sequence = core::packed_sequence(geo(), w);
        state->reserved_until_ms = g_->reserved.load();
        state->floor_ms = g_->floor_ms;
        state->floor_grace_ms = g_->floor_grace_ms;
        *now_ms = sdk::id_ms(g_->settings);
    }
    // The outcome of an attempt for waiting callers; the request is answered.
    void record_backup_attempt(const char* error) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        g_->backup_attempts++;
        g_->backup_error = error;
        g_->backup_wanted = -1;
        g_->cv.notify_all();
    }
    // Ids go on under backup worker id `worker` after floor_ms (its mark):
    // the own id's tenure fenced and its last millisecond kept; nothing of
    // the backup is reserved past its start until its mark is written.
    int64_t start_backup(int32_t worker, int64_t floor_ms) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        Words words(*g_);
        const int64_t own_last = core::fence(geo(), words);
        g_->own_last_ms = own_last;
        if (own_last > g_->own_high_ms) g_->own_high_ms = own_last;
        // The demand only grows, and the own id's is ahead of the clock now:
        // the backup's reservations follow its own callers.
        g_->demand_ms.store(-1);
        begin_tenure_locked(worker, floor_ms, 0);
        g_->backup_worker = worker;
        g_->clock_failovers++;
        return own_last;
    }
    // Back on the own id `worker` after own_last_ms and after the backup's
    // last millisecond: the backup's tenure fenced.
    int64_t end_backup(int32_t worker, int64_t own_last_ms) noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        Words words(*g_);
        const int64_t backup_last = core::fence(geo(), words);
        begin_tenure_locked(worker, std::max(own_last_ms, backup_last), 0);
        g_->backup_worker = -1;
        g_->own_last_ms = -1;
        return backup_last;
    }
    void backup_lost() noexcept override {
        std::lock_guard<std::mutex> lock(g_->mu);
        g_->backup_worker = -1;
        g_->own_last_ms = -1;
        g_->cv.notify_all();
    }
    uint32_t random() noexcept override {
        uint32_t r = 0;
        if (getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r = static_cast<uint32_t>(boottime_ns());
        return r;
    }
    void log(const char*, const char*, const char*) noexcept override {}

private:
    const core::Geometry& geo() const noexcept { return g_->settings.geometry; }
    // A tenure of `worker` after floor (core::start_tenure()), a clock
    // behind the floor by up to grace waited out; g->mu held. Its first
    // reservation is asked for at once (the clock reached), so that the
    // first ids need not wait for its write.
    void begin_tenure_locked(int32_t worker, int64_t floor, int64_t grace) noexcept {
        Words words(*g_);
        const int64_t start = core::start_tenure(geo(), words, worker, floor);
        g_->floor_ms = start;
        g_->floor_grace_ms = grace > 0 ? grace + (start - floor) : 0;
        const int64_t now = sdk::id_ms(g_->settings);
        int64_t d = g_->demand_ms.load();
        while (d < now && !g_->demand_ms.compare_exchange_weak(d, now)) {
        }
        wake_ = true;  // the next turn at once: it writes the reservation
        g_->cv.notify_all();
    }
    static core::LeaseConfig lease_config(const Settings& s) noexcept {
        core::LeaseConfig c;
        c.ttl_ms = s.ttl_ms;
        c.static_worker = s.worker;
        c.leasing = true;
        c.worker_min = s.worker_min;
        c.worker_max = s.worker_max;
        return c;
    }
    static core::FleetSettings fleet(const Settings& s) noexcept {
        core::FleetSettings f;
        f.epoch_unix_us = s.epoch_unix_us;
        f.layout = s.geometry;
        return f;
    }

    sf_generator* g_;
    bool zookeeper_;
    std::atomic<bool> stop_{false};
    bool wake_ = false;  // under g->mu
    bool clean_ = false;
    coord::LeaseDriver driver_;  // last: it starts with the host's clock
};

namespace {

std::once_flag g_curl_once;
std::atomic<CoordinatorFactory> g_factory{nullptr};
std::atomic<void*> g_factory_arg{nullptr};

// The worker key's identity of this process: an application process
// (core::NodeIdentity::runtime), this run's random instance.
core::NodeIdentity identity(const Settings& s) noexcept {
    core::NodeIdentity me;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");
    me.host = host;
    me.port = 0;
    me.system_identifier = 0;
    unsigned char rnd[16] = {};
    if (getrandom(rnd, sizeof rnd, 0) != static_cast<ssize_t>(sizeof rnd)) {
        const int64_t t = boottime_ns() ^ (static_cast<int64_t>(getpid()) << 32);
        for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = static_cast<unsigned char>(t >> ((i % 8) * 8)) ^ i;
    }
    me.instance = core::random_instance(rnd);
    me.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    me.runtime = s.runtime;
    me.pid = getpid();
    return me;
}

std::unique_ptr<core::Coordinator> coordinator(const Settings& s) noexcept {
    if (CoordinatorFactory f = g_factory.load()) return f(g_factory_arg.load());
    if (!s.zookeeper_hosts.empty()) {
        zk::Options o;
        o.hosts = s.zookeeper_hosts;
        o.prefix = s.prefix;
        return std::unique_ptr<core::Coordinator>(new (std::nothrow) zk::ZkCoordinator(std::move(o)));
    }
    etcd::Options o;
    std::string reason;
    (void)core::parse_endpoints(s.etcd_endpoints, &o.endpoints, &reason);  // checked by open_leased
    return std::unique_ptr<core::Coordinator>(new (std::nothrow) etcd::EtcdCoordinator(std::move(o), s.prefix));
}

// A runner and its thread for g; g->mu held or g not yet shared.
bool start_runner(sf_generator* g) noexcept {
    std::unique_ptr<core::Coordinator> c = coordinator(g->settings);
    if (c == nullptr) return false;
    LeaseRunner* r = new (std::nothrow) LeaseRunner(g, std::move(c), identity(g->settings));
    if (r == nullptr) return false;
    std::thread* t = new (std::nothrow) std::thread([r] { r->run(); });
    if (t == nullptr) {
        delete r;
        return false;
    }
    g->runner = r;
    g->thread = t;
    return true;
}

}  // namespace

void set_coordinator_factory(CoordinatorFactory f, void* arg) noexcept {
    g_factory_arg.store(arg);
    g_factory.store(f);
}

void wake_runner(sf_generator* g) noexcept {
    if (g->runner != nullptr) g->runner->wake();
}

sf_code refuse_fleet(const sf_generator* g) noexcept {
    return fail_detail(SF_ERR_FLEET, "the fleet under the prefix has another epoch or layout",
                       "Give this generator the epoch and layout of the database nodes and processes that lease "
                       "under the prefix (their snowflake.epoch and snowflake.layout), or use another "
                       "lease_prefix.",
                       "%s.", g->lease_error.c_str());
}

sf_code open_leased(sf_generator* g) noexcept {
    const Settings& s = g->settings;
    std::string reason;
    if (!s.etcd_endpoints.empty()) {
        std::vector<std::string> endpoints;
        if (!core::parse_endpoints(s.etcd_endpoints, &endpoints, &reason) || endpoints.empty())
            return fail_detail(SF_ERR_INVALID, "etcd_endpoints is invalid",
                               "Give etcd's client URLs as \"http://host:port[,http://host:port...]\", as "
                               "snowflake.etcd_endpoints.",
                               "%s", reason.empty() ? "No endpoint is given." : reason.c_str());
    } else if (!zk::check_hosts(s.zookeeper_hosts, &reason)) {
        return fail_detail(
            SF_ERR_INVALID, "zookeeper_hosts is invalid",
            "Give ZooKeeper's servers as \"host:port[,host:port...]\", as snowflake.zookeeper_hosts.", "%s",
            reason.c_str());
    }
    std::call_once(g_curl_once, [] { (void)curl_global_init(CURL_GLOBAL_DEFAULT); });
    g->deadline_ns.store(0);
    g->word.store(core::pack_fenced(s.geometry, -1, 0));  // no tenure until a worker id is held
    g->lease_state = core::LeaseState::Acquiring;
    if (!start_runner(g)) return fail(SF_ERR_NO_MEMORY, "out of memory", nullptr, "Free memory, then open again.");
    return SF_OK;
}

bool close_leased(sf_generator* g) noexcept {
    {
        std::lock_guard<std::mutex> lock(g->mu);
        g->stopping = true;
        g->deadline_ns.store(0);
        Words words(*g);
        // The driver's shutdown hands this fence over as the exact mark.
        (void)core::fence(g->settings.geometry, words);
        if (g->runner != nullptr) g->runner->stop();
        g->cv.notify_all();
    }
    bool clean = true;
    if (g->thread != nullptr) {
        g->thread->join();
        delete g->thread;
        g->thread = nullptr;
    }
    if (g->runner != nullptr) {
        clean = g->runner->clean();
        ForkGateShared gate;  // the client's teardown (zookeeper_close, curl's cleanup)
        delete g->runner;
        g->runner = nullptr;
    }
    return clean;
}

bool start_child_lease(sf_generator* g) noexcept {
    if (!g->forked) return true;
    g->forked = false;  // from here on the child's own generator
    g->owner_pid = getpid();
    g->lease_state = core::LeaseState::Acquiring;
    g->lease_worker = -1;
    g->lease_error = "";
    g->lease_error_reason = core::LeaseError::None;
    g->reserved.store(-1);
    g->demand_ms.store(-1);
    g->ids_issued.store(0);
    // The parent's backup worker id is its own (own_high_ms is kept: a
    // tenure of the child starts above the ids the parent issued).
    g->backup_wanted = -1;
    g->backup_attempts = 0;
    g->backup_error = "";
    g->backup_worker = -1;
    g->own_last_ms = -1;
    if (!start_runner(g)) {
        g->forked = true;
        return false;
    }
    return true;
}

}  // namespace snowflake::sdk
