// sf_config_init, sf_open, sf_wait_ready, sf_status and sf_close: the
// settings checked (each refusal with its hint), the mark file of a static
// worker id read and locked, the first tenure started, the background
// thread started and, at the end, stopped with the exact mark handed over.

#include "generator.hpp"
#include "error.hpp"
#include "layout.hpp"
#include "lease_host.hpp"

#include "core/coord_schema.hpp"
#include "core/epoch.hpp"
#include "core/id_layout.hpp"
#include "core/mark.hpp"
#include "core/reservation.hpp"
#include "core/time.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <string>

namespace snowflake::sdk {

namespace {

bool blank(const char* s) noexcept { return s == nullptr || s[0] == '\0'; }

// A worker id setting beyond the layout's worker ids: refused, naming both.
sf_code refuse_worker(const Settings& s, const char* setting, int32_t value) noexcept {
    char message[160];
    snprintf(message, sizeof message, "%s %d does not fit layout '%s'", setting, static_cast<int>(value),
             s.layout_name.c_str());
    char hint[160];
    snprintf(hint, sizeof hint, "Choose %s from 0 to %d, or a layout with more worker bits.", setting,
             static_cast<int>(s.geometry.max_worker));
    return fail_detail(SF_ERR_INVALID, message, hint,
                       "The layout's worker field has %d bits: worker ids from 0 to %d.",
                       static_cast<int>(s.geometry.worker_bits), static_cast<int>(s.geometry.max_worker));
}

// A leased worker id above what a lease can hold (layout.hpp's
// max_leased_worker(): 1023 in a layout of more worker bits).
sf_code refuse_leased_worker(const Settings& s, const char* setting, int32_t value) noexcept {
    char message[160];
    snprintf(message, sizeof message, "%s %d cannot be leased", setting, static_cast<int>(value));
    return fail_detail(SF_ERR_INVALID, message,
                       "Lease worker ids from 0 to 1023, or use a higher one as a static worker_id with a "
                       "mark_file and no coordinator.",
                       "Leased worker ids go from 0 to %d in every layout (layout '%s' has worker ids up to %d), "
                       "as the nodes' snowflake.lease_worker_ids.",
                       static_cast<int>(max_leased_worker(s.geometry)), s.layout_name.c_str(),
                       static_cast<int>(s.geometry.max_worker));
}

// The settings of cfg, checked; SF_OK or the error set.
sf_code check_config(const sf_config* cfg, Settings* s) noexcept {
    if (cfg == nullptr)
        return fail(SF_ERR_INVALID, "sf_open needs a configuration", nullptr,
                    "Fill an sf_config with sf_config_init(), then set what you need.");
    if (!blank(cfg->etcd_endpoints) && !blank(cfg->zookeeper_hosts))
        return fail(SF_ERR_INVALID, "both etcd_endpoints and zookeeper_hosts are set", nullptr,
                    "Lease worker ids from one coordinator: set one of the two.");
    const bool leased = !blank(cfg->etcd_endpoints) || !blank(cfg->zookeeper_hosts);
    s->mode = leased ? Mode::Leased : Mode::Static;
    if (!blank(cfg->etcd_endpoints)) s->etcd_endpoints = cfg->etcd_endpoints;
    if (!blank(cfg->zookeeper_hosts)) s->zookeeper_hosts = cfg->zookeeper_hosts;
    const sf_code layout = read_layout(cfg->layout, "layout", &s->geometry);
    if (layout != SF_OK) return layout;
    s->layout_name = core::geometry_text(s->geometry);
    const int32_t max_worker = s->geometry.max_worker;
    if (cfg->worker_id < -1)
        return fail_detail(SF_ERR_INVALID, "worker_id is out of range",
                           "Set worker_id to 0 or more, or to -1 to lease any free id of the range.",
                           "worker_id is %d.", static_cast<int>(cfg->worker_id));
    if (cfg->worker_id > max_worker) return refuse_worker(*s, "worker_id", cfg->worker_id);
    s->worker = cfg->worker_id;
    // -1: the layout's default, its upper half (layout.hpp).
    s->worker_min = cfg->worker_id_min == -1 ? default_worker_min(s->geometry) : cfg->worker_id_min;
    s->worker_max = cfg->worker_id_max == -1 ? default_worker_max(s->geometry) : cfg->worker_id_max;
    if (s->worker_max > max_worker) return refuse_worker(*s, "worker_id_max", s->worker_max);
    if (s->worker_min > max_worker) return refuse_worker(*s, "worker_id_min", s->worker_min);
    if (s->worker_min < 0 || s->worker_min > s->worker_max)
        return fail_detail(SF_ERR_INVALID, "the worker id range is invalid",
                           "Set 0 <= worker_id_min <= worker_id_max, within the layout's worker ids (0..1023 "
                           "for twitter), or leave both at -1 for the layout's upper half.",
                           "worker_id_min is %d, worker_id_max %d.", static_cast<int>(s->worker_min),
                           static_cast<int>(s->worker_max));
    if (leased && s->worker > max_leased_worker(s->geometry))
        return refuse_leased_worker(*s, "worker_id", s->worker);
    if (leased && s->worker_max > max_leased_worker(s->geometry))
        return refuse_leased_worker(*s, "worker_id_max", s->worker_max);
    if (!leased && s->worker < 0)
        return fail(SF_ERR_INVALID, "no worker id and no coordinator",
                    "Without a coordinator nothing tells processes apart.",
                    "Set etcd_endpoints or zookeeper_hosts to lease a worker id, or a static worker_id (0 to the "
                    "layout's largest) that no other process or node uses, with a mark_file.");
    if (!leased && blank(cfg->mark_file))
        return fail(SF_ERR_INVALID, "a static worker id needs a mark file",
                    "The mark file keeps a reservation ahead of every id, so that a restart never issues an id "
                    "twice.",
                    "Set mark_file to a path on a local file system that only this generator uses.");
    if (!blank(cfg->mark_file)) s->mark_path = cfg->mark_file;
    if (cfg->lease_ttl_ms < core::kMinLeaseTtlS * 1000 || cfg->lease_ttl_ms > core::kMaxLeaseTtlS * 1000)
        return fail_detail(SF_ERR_INVALID, "lease_ttl_ms is out of range", "Set lease_ttl_ms to 5000..300000.",
                           "lease_ttl_ms is %d.", static_cast<int>(cfg->lease_ttl_ms));
    s->ttl_ms = cfg->lease_ttl_ms;
    if (cfg->clock_tolerance_ms < 0 || cfg->clock_tolerance_ms > 10000)
        return fail_detail(SF_ERR_INVALID, "clock_tolerance_ms is out of range",
                           "Set clock_tolerance_ms to 0..10000 (the default is 5).", "clock_tolerance_ms is %d.",
                           static_cast<int>(cfg->clock_tolerance_ms));
    s->tolerance_ms = cfg->clock_tolerance_ms;
    if (cfg->clock_backwards != SF_CLOCK_REFUSE && cfg->clock_backwards != SF_CLOCK_FAILOVER)
        return fail_detail(SF_ERR_INVALID, "clock_backwards is invalid",
                           "Set clock_backwards to SF_CLOCK_REFUSE (the default) or SF_CLOCK_FAILOVER.",
                           "clock_backwards is %d.", static_cast<int>(cfg->clock_backwards));
    if (cfg->clock_backwards == SF_CLOCK_FAILOVER && !leased)
        return fail(SF_ERR_INVALID, "clock failover needs leased worker ids",
                    "With a static worker_id no coordinator can hand out a second id that no other process uses.",
                    "Set etcd_endpoints or zookeeper_hosts to lease worker ids, or clock_backwards to "
                    "SF_CLOCK_REFUSE.");
    s->failover = cfg->clock_backwards == SF_CLOCK_FAILOVER;
    s->prefix = blank(cfg->lease_prefix) ? "/snowflake" : cfg->lease_prefix;
    std::string reason;
    if (!core::check_lease_prefix(s->prefix, &reason))
        return fail_detail(SF_ERR_INVALID, "lease_prefix is invalid",
                           "Use the prefix of the database nodes' snowflake.lease_prefix (default /snowflake).",
                           "%s", reason.c_str());
    s->epoch_text = blank(cfg->epoch) ? core::kDefaultEpoch : cfg->epoch;
    const core::EpochParse p = core::parse_epoch(s->epoch_text.c_str(), &s->epoch_unix_us);
    if (p != core::EpochParse::Ok)
        return fail_detail(SF_ERR_INVALID, "epoch is invalid",
                           "Give the epoch of the database nodes (snowflake.epoch), such as "
                           "\"2025-01-01 00:00:00+00\", with an explicit UTC offset.",
                           "\"%s\": %s.", s->epoch_text.c_str(), core::epoch_parse_text(p));
    s->epoch_unix_ms = core::floor_div(s->epoch_unix_us, 1000);
    const int64_t now_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    if (core::check_epoch(s->epoch_unix_ms, now_unix_ms, s->geometry) != core::EpochCheck::Ok)
        return fail_detail(SF_ERR_INVALID, "epoch is in the future or leaves less than a year of ids",
                           "Give a past epoch that leaves the clock at least a year of the layout's time range.",
                           "The epoch is \"%s\"; layout '%s' has %d bits of milliseconds.", s->epoch_text.c_str(),
                           s->layout_name.c_str(), static_cast<int>(s->geometry.time_bits));
    s->runtime = blank(cfg->runtime) ? "c" : cfg->runtime;
    if (s->runtime.size() > 32 || s->runtime.find_first_of(" \t\r\n=") != std::string::npos)
        return fail(SF_ERR_INVALID, "runtime is invalid", nullptr,
                    "Set runtime to a short word without spaces or '=' (\"c\", \"node\", \"python\").");
    return SF_OK;
}

// The mark file opened, locked and read: the generator's floor.
sf_code open_mark_file(sf_generator* g) noexcept {
    const std::string& path = g->settings.mark_path;
    g->mark_fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (g->mark_fd < 0)
        return fail_detail(SF_ERR_MARK_FILE, "could not open the mark file",
                           "Check that the directory exists and that this process may create and write the file.",
                           "%s: %s.", path.c_str(), strerror(errno));
    if (flock(g->mark_fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        if (err == EWOULDBLOCK)
            return fail_detail(SF_ERR_MARK_LOCKED, "the mark file is in use by another generator",
                               "Give each generator a mark file and a worker id of its own, or close the other "
                               "generator first.",
                               "%s is locked (flock) by another open generator.", path.c_str());
        return fail_detail(SF_ERR_MARK_FILE, "could not lock the mark file",
                           "Keep the mark file on a local file system that supports flock().", "%s: %s.",
                           path.c_str(), strerror(err));
    }
    uint8_t buf[core::kMarkSize + 1];
    const ssize_t n = pread(g->mark_fd, buf, sizeof buf, 0);
    if (n < 0)
        return fail_detail(SF_ERR_MARK_FILE, "could not read the mark file", "Check the file and its file system.",
                           "%s: %s.", path.c_str(), strerror(errno));
    core::Mark m;  // an empty file: a first start, nothing issued
    if (n > 0) {
        const core::MarkDecode d = core::decode_mark(buf, static_cast<size_t>(n), &m);
        if (d != core::MarkDecode::Ok)
            return fail_detail(SF_ERR_MARK_FILE, "the mark file is unusable",
                               "Ids are refused so that none is issued twice. Restore the file, or remove it "
                               "only if no id of this worker id issued after the epoch's last minute is in use.",
                               "%s: %s.", path.c_str(), core::mark_decode_text(d));
    }
    // Ids of another layout can be equal bit for bit to this one's: a mark
    // of another layout bounds nothing here.
    if (n > 0 && m.layout != core::mark_layout_code(g->settings.geometry)) {
        core::Geometry theirs{};
        (void)core::geometry_of_mark_code(m.layout, &theirs);  // decode_mark() accepted it
        const std::string theirs_name = core::geometry_text(theirs);
        char message[200];
        snprintf(message, sizeof message, "layout is '%s', but the mark file bounds ids of layout '%s'",
                 g->settings.layout_name.c_str(), theirs_name.c_str());
        char hint[256];
        snprintf(hint, sizeof hint,
                 "Set layout back to '%s', or give the new layout a mark file of its own, for ids that never "
                 "share a column with the old layout's: ids of two layouts can be equal.",
                 theirs_name.c_str());
        return fail_detail(SF_ERR_INVALID, message, hint, "%s was written by a generator of layout '%s'.",
                           path.c_str(), theirs_name.c_str());
    }
    // After a crash the mark is the last reservation, up to its recorded
    // lead ahead of the clock: waiting it out is expected.
    const int64_t grace = m.clean ? 0 : std::max<int64_t>(m.window_ms, core::kMinWindowMs);
    Words words(*g);
    const core::Geometry& geo = g->settings.geometry;
    g->word.store(core::pack_fenced(geo, -1, g->settings.worker));
    const int64_t start = core::start_tenure(geo, words, g->settings.worker, m.ms);
    g->floor_ms = start;
    g->floor_grace_ms = grace > 0 ? grace + (start - m.ms) : 0;
    g->durable_ms = start;
    // The first reservation, before any id: written here, so that the
    // first calls do not wait for the background thread.
    const int64_t now = id_ms(g->settings);
    const core::ReservationPlan plan = core::plan_reservation(now, g->durable_ms, now, g->window_ms);
    if (plan.write) {
        const std::string err = write_mark(g, plan.until_ms, false);
        if (!err.empty())
            return fail_detail(SF_ERR_MARK_FILE, "could not write the mark file",
                               "Check the file system of the mark file.", "%s: %s.", path.c_str(), err.c_str());
        g->durable_ms = plan.until_ms;
        g->reserved.store(plan.until_ms);
    }
    g->deadline_ns.store(core::kNoDeadline, std::memory_order_release);
    return SF_OK;
}

void free_generator(sf_generator* g, bool release_file) noexcept {
    if (g->mark_fd >= 0) {
        if (release_file) (void)flock(g->mark_fd, LOCK_UN);
        close(g->mark_fd);
    }
    delete g;
}

}  // namespace

}  // namespace snowflake::sdk

using namespace snowflake;

void sf_config_init(sf_config* cfg) {
    if (cfg == nullptr) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->worker_id = -1;
    cfg->worker_id_min = -1;  // the layout's upper half
    cfg->worker_id_max = -1;
    cfg->lease_ttl_ms = core::kDefaultLeaseTtlS * 1000;
    cfg->clock_tolerance_ms = 5;
    cfg->clock_backwards = SF_CLOCK_REFUSE;
}

sf_code sf_open(const sf_config* cfg, sf_generator** out, char* err, size_t errlen) {
    if (err != nullptr && errlen > 0) err[0] = '\0';
    if (out == nullptr) {
        const sf_code c = sdk::fail(SF_ERR_INVALID, "sf_open needs a place for the generator", nullptr,
                                    "Pass the address of an sf_generator* as out.");
        sdk::format_error(sdk::last_error(), err, errlen);
        return c;
    }
    *out = nullptr;
    sf_generator* g = new (std::nothrow) sf_generator();
    if (g == nullptr) {
        const sf_code c = sdk::fail(SF_ERR_NO_MEMORY, "out of memory", nullptr, "Free memory, then open again.");
        sdk::format_error(sdk::last_error(), err, errlen);
        return c;
    }
    sf_code c = sdk::check_config(cfg, &g->settings);
    g->owner_pid = getpid();
    if (c == SF_OK && g->settings.mode == sdk::Mode::Static) {
        c = sdk::open_mark_file(g);
        if (c == SF_OK) g->thread = new (std::nothrow) std::thread(sdk::run_mark_writer, g);
        if (c == SF_OK && g->thread == nullptr)
            c = sdk::fail(SF_ERR_NO_MEMORY, "out of memory", nullptr, "Free memory, then open again.");
    } else if (c == SF_OK) {
        c = sdk::open_leased(g);
    }
    if (c != SF_OK) {
        sdk::format_error(sdk::last_error(), err, errlen);
        sdk::free_generator(g, c != SF_ERR_MARK_LOCKED);
        return c;
    }
    sdk::register_generator(g);
    *out = g;
    return sdk::ok();
}

sf_code sf_wait_ready(sf_generator* gen, int32_t timeout_ms) {
    if (gen == nullptr || timeout_ms < 0)
        return sdk::fail(SF_ERR_INVALID, "sf_wait_ready needs a generator and a timeout of 0 or more ms", nullptr,
                         "Pass the generator sf_open() returned and a timeout in milliseconds.");
    const int64_t until_ns = sdk::monotonic_ns() + int64_t{timeout_ms} * 1000000;
    std::unique_lock<std::mutex> lock(gen->mu);
    // Counted, so that sf_close, which ends the wait (SF_ERR_CLOSED), frees
    // the generator only once this thread has left it.
    struct Waiter {
        sf_generator* g;
        std::unique_lock<std::mutex>& lock;
        ~Waiter() {
            if (!lock.owns_lock()) lock.lock();
            g->waiters--;
            g->cv.notify_all();
        }
    } waiter{gen, lock};
    gen->waiters++;
    for (;;) {
        if (gen->stopping)
            return sdk::fail(SF_ERR_CLOSED, "the generator is closed", nullptr, "Open a new generator.");
        if (gen->forked && gen->settings.mode == sdk::Mode::Static) {
            lock.unlock();
            int64_t id;
            return sf_next_id(gen, &id);  // its refusal, which says why
        }
        if (gen->forked && !sdk::start_child_lease(gen))
            return sdk::fail(SF_ERR_NO_MEMORY, "could not start the lease of a fork child", nullptr,
                             "Free memory, then call again.");
        if (gen->lease_error_reason == core::LeaseError::FleetSettings && gen->deadline_ns.load() <= 0)
            return sdk::refuse_fleet(gen);
        const int64_t now = sdk::id_ms(gen->settings);
        const bool held = gen->deadline_ns.load() > 0;
        const bool covered = gen->reserved.load() >= now;
        const bool past_floor = now > gen->floor_ms;
        if (held && covered && past_floor) return sdk::ok();
        if (held && !covered) {
            int64_t d = gen->demand_ms.load();
            while (d < now && !gen->demand_ms.compare_exchange_weak(d, now)) {
            }
            sdk::wake_runner(gen);
            gen->cv.notify_all();
        }
        const int64_t left = until_ns - sdk::monotonic_ns();
        if (left <= 0) {
            const char* state = core::lease::state_name(gen->lease_state);
            return sdk::fail_detail(SF_ERR_NOT_READY, "no worker id was ready within the timeout",
                                    "Check that the coordinator is reachable and that a worker id of the range "
                                    "is free; call sf_wait_ready() again to go on waiting.",
                                    "%s%s%s%s", held ? "A worker id is held; " : "The lease is ",
                                    held ? (covered ? "the clock is behind the mark it started from"
                                                    : "its reservation is being extended")
                                         : state,
                                    gen->lease_error.empty() || held ? "" : ": ",
                                    held ? "" : gen->lease_error.c_str());
        }
        gen->cv.wait_for(lock, std::chrono::nanoseconds(std::min<int64_t>(left, 10000000)));
    }
}

sf_code sf_status(sf_generator* gen, sf_stats* out) {
    if (gen == nullptr || out == nullptr)
        return sdk::fail(SF_ERR_INVALID, "sf_status needs a generator and an sf_stats", nullptr,
                         "Pass the generator sf_open() returned and a pointer to an sf_stats.");
    memset(out, 0, sizeof *out);
    std::lock_guard<std::mutex> lock(gen->mu);
    const sdk::Settings& s = gen->settings;
    const bool is_static = s.mode == sdk::Mode::Static;
    const uint64_t word = gen->word.load();
    const int64_t deadline = gen->deadline_ns.load();
    const core::Geometry& geo = s.geometry;
    const bool held = deadline > 0 && !core::is_fenced(geo, word);
    if (gen->stopping)
        out->state = SF_STATE_CLOSED;
    else if (is_static)
        out->state = SF_STATE_STATIC;
    else if (gen->lease_state == core::LeaseState::Held && held)
        out->state = SF_STATE_HELD;
    else if (gen->lease_state == core::LeaseState::Expired)
        out->state = SF_STATE_EXPIRED;
    else
        out->state = SF_STATE_ACQUIRING;
    const bool on_backup = held && !is_static && gen->backup_worker >= 0;
    out->worker_id = on_backup ? gen->lease_worker : held ? core::packed_worker(geo, word) : -1;
    out->backup_worker_id = on_backup ? core::packed_worker(geo, word) : -1;
    out->coordinator = is_static ? "static" : !s.etcd_endpoints.empty() ? "etcd" : "zookeeper";
    out->ids_issued = gen->ids_issued.load();
    out->lease_ms_left = !is_static && held ? std::max<int64_t>(0, (deadline - sdk::boottime_ns()) / 1000000) : -1;
    const int64_t reserved = gen->reserved.load();
    out->reserved_until_unix_ms = held && reserved >= 0 ? reserved + s.epoch_unix_ms : -1;
    out->clock_backwards_events = static_cast<int64_t>(gen->counters.clock_backwards_events);
    out->clock_backwards_errors = static_cast<int64_t>(gen->counters.clock_backwards_errors);
    out->overflow_waits = static_cast<int64_t>(gen->counters.overflow_waits);
    out->lease_acquisitions = static_cast<int64_t>(gen->lease_acquisitions);
    out->lease_failures = static_cast<int64_t>(gen->lease_failures);
    out->pid = static_cast<int32_t>(gen->forked ? getpid() : gen->owner_pid);
    snprintf(out->last_error, sizeof out->last_error, "%s",
             is_static ? gen->mark_error.c_str() : gen->lease_error.c_str());
    snprintf(out->layout, sizeof out->layout, "%s", s.layout_name.c_str());
    return sdk::ok();
}

namespace snowflake::sdk {
namespace {

// sf_close, once ids are stopped: wakes every sf_wait_ready (it returns
// SF_ERR_CLOSED) and waits until they have left the generator.
void drain_waiters(sf_generator* g) noexcept {
    std::unique_lock<std::mutex> lock(g->mu);
    g->stopping = true;
    g->cv.notify_all();
    g->cv.wait(lock, [g] { return g->waiters == 0; });
}

}  // namespace
}  // namespace snowflake::sdk

sf_code sf_close(sf_generator* gen) {
    if (gen == nullptr) return sdk::ok();
    sdk::unregister_generator(gen);
    if (gen->forked) {  // a fork child that never leased: its parent's lease and file are not its own
        sdk::drain_waiters(gen);
        if (gen->mark_fd >= 0) close(gen->mark_fd);
        gen->mark_fd = -1;
        delete gen;
        return sdk::ok();
    }
    if (gen->settings.mode == sdk::Mode::Leased) {
        const bool clean = sdk::close_leased(gen);
        sdk::drain_waiters(gen);
        delete gen;
        if (!clean)
            return sdk::fail(SF_ERR_NO_LEASE, "the lease could not be ended cleanly",
                             "The coordinator did not confirm the exact mark or the revoke within the shutdown's "
                             "second; the lease expires by itself after its TTL.",
                             "Nothing to do: the worker id is free again once the lease expires.");
        return sdk::ok();
    }
    int64_t last_ms;
    {
        std::lock_guard<std::mutex> lock(gen->mu);
        gen->stopping = true;
        gen->deadline_ns.store(0);
        sdk::Words words(*gen);
        last_ms = core::fence(gen->settings.geometry, words);
        gen->cv.notify_all();
    }
    if (gen->thread != nullptr) {
        gen->thread->join();
        delete gen->thread;
        gen->thread = nullptr;
    }
    sdk::drain_waiters(gen);
    // The exact mark: the last id's millisecond (never below what was
    // reserved at start, the tenure's start).
    const std::string err = sdk::write_mark(gen, last_ms, true);
    const std::string path = gen->settings.mark_path;
    sdk::free_generator(gen, true);
    if (!err.empty())
        return sdk::fail_detail(SF_ERR_MARK_FILE, "could not write the exact mark at close",
                                "Nothing is lost: the reservation on disk still covers every id; the next open "
                                "waits it out (sf_wait_ready()).",
                                "%s: %s.", path.c_str(), err.c_str());
    return sdk::ok();
}
