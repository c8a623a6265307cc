// The id path: sf_next_id and sf_next_ids over the position protocol
// (core/position.hpp): the lock-free fast path, then the core's slow path
// under the generator's mutex, waiting (the next millisecond, a clock behind
// within the tolerance, a reservation the background thread is writing) at
// most within the clock tolerance, or refusing with a code, a message and a
// hint. With clock failover, a clock refused waits for a backup worker id
// (at most SF_BACKUP_WAIT_MS, or the tolerance if longer). No I/O here: the
// background thread writes marks and leases.

#include "generator.hpp"
#include "error.hpp"
#include "lease_host.hpp"

#include "core/backup.hpp"
#include "core/layout.hpp"
#include "core/time.hpp"

#include <stdio.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace snowflake::sdk {

namespace {
std::atomic<int64_t> g_clock_offset_us{0};  // set_clock_offset_for_tests(); 0 but in tests
}  // namespace

void set_clock_offset_for_tests(int64_t offset_ms) noexcept { g_clock_offset_us.store(offset_ms * 1000); }

int64_t id_ms(const Settings& s) noexcept {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    const int64_t us = static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000 +
                       g_clock_offset_us.load(std::memory_order_relaxed);
    return core::floor_div(us - s.epoch_unix_us, 1000);
}

int64_t boottime_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t monotonic_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

namespace {

// A wait for a reservation or a transition lasts at most the clock
// tolerance, and never less than this.
constexpr int64_t kMinWaitMs = 5;

int64_t wait_limit_ms(const sf_generator* g) noexcept { return std::max(g->settings.tolerance_ms, kMinWaitMs); }

// Waits until the id space's clock reaches target_ms (the caller decides
// again after it: a clock that steps back meanwhile is judged anew).
void wait_until_ms(const sf_generator* g, int64_t target_ms) noexcept {
    const int64_t start = id_ms(g->settings);
    for (;;) {
        const int64_t now = id_ms(g->settings);
        if (now >= target_ms || now < start) return;
        // Sleeps while more than two milliseconds are left; spins through
        // the rest (a yield could give the processor away for a whole time
        // slice, and with it the next millisecond's ids).
        if (target_ms - now > 2) std::this_thread::sleep_for(std::chrono::milliseconds(target_ms - now - 1));
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
}

// The refusal of a call that found no tenure in force.
sf_code refuse_no_lease(sf_generator* g, bool lease_ended) noexcept {
    std::unique_lock<std::mutex> lock(g->mu);
    if (g->stopping)
        return fail(SF_ERR_CLOSED, "the generator is closed", nullptr,
                    "Open a new generator with sf_open(); no id is issued after sf_close() has begun.");
    if (g->forked && g->settings.mode == Mode::Static)
        return fail_detail(
            SF_ERR_NO_LEASE, "a static worker id cannot follow a fork",
            "Open a generator of its own in the child process, with another worker_id and mark_file, "
            "or lease worker ids from etcd or ZooKeeper, which a child leases for itself.",
            "This process is a child of process %d, which holds worker id %d and its mark file.",
            static_cast<int>(g->owner_pid), g->settings.worker);
    if (g->forked) {
        const bool started = start_child_lease(g);
        lock.unlock();
        if (!started)
            return fail(SF_ERR_NO_MEMORY, "could not start the lease of a fork child", nullptr,
                        "Free memory, then call again.");
        return fail(SF_ERR_NO_LEASE, "no worker id lease is held yet",
                    "This process is a child of fork(): it never issues under its parent's worker id, and has "
                    "just started to lease one of its own.",
                    "Call sf_wait_ready() to wait until the child holds a worker id.");
    }
    if (lease_ended)
        return fail(SF_ERR_NO_LEASE, "the worker id's lease ended while ids were issued",
                    "The ids of this call were given up: another process may hold the worker id by now.",
                    "Call again once a lease is held (sf_wait_ready()); check that the coordinator is reachable.");
    if (g->lease_error_reason == core::LeaseError::FleetSettings) return refuse_fleet(g);
    const char* state = core::lease::state_name(g->lease_state);
    const std::string last = g->lease_error;
    const char* hint = core::lease::error_hint(g->lease_error_reason);
    lock.unlock();
    return fail_detail(SF_ERR_NO_LEASE, "no worker id lease is held",
                       hint != nullptr ? hint
                                       : "Call sf_wait_ready() to wait for a lease; check that the coordinator is "
                                         "reachable and that a worker id of the range is free.",
                       "The lease is %s%s%s.", state, last.empty() ? "" : ": ", last.c_str());
}

// backup_note: why no backup worker id took over (clock failover), or null.
sf_code refuse_clock(sf_generator* g, const core::Next& r, int64_t now,
                     const char* backup_note = nullptr) noexcept {
    if (backup_note != nullptr) {
        char hint[sizeof(sf_error::detail) + 160];  // sf_error.hint keeps what fits
        snprintf(hint, sizeof hint,
                 "No backup worker id took over: %s. Check the time synchronisation of this machine; ids resume "
                 "when the clock passes the last id.",
                 backup_note);
        return fail_detail(
            SF_ERR_CLOCK_BEHIND, "system clock moved backwards", hint,
            "The clock is %lld ms behind the last id issued; clock_tolerance_ms is %lld; ids resume "
            "at %lld ms since the epoch. No backup worker id took over: %s.",
            static_cast<long long>(r.behind_ms), static_cast<long long>(g->settings.tolerance_ms),
            static_cast<long long>(r.wait_until_ms), backup_note);
    }
    if (r.status == core::Status::ClockBehind || r.status == core::Status::WaitFloor)
        return fail_detail(SF_ERR_CLOCK_BEHIND, "system clock moved backwards",
                           r.at_floor ? "Wait for the clock to pass the mark (sf_wait_ready() waits for it), and "
                                        "check the time synchronisation of this machine."
                                      : "Check the time synchronisation of this machine; ids resume when the "
                                        "clock passes the last id.",
                           "The clock is %lld ms behind %s; clock_tolerance_ms is %lld; ids resume at %lld ms "
                           "since the epoch.",
                           static_cast<long long>(r.behind_ms),
                           r.at_floor ? "the mark the generator started from" : "the last id issued",
                           static_cast<long long>(g->settings.tolerance_ms),
                           static_cast<long long>(r.wait_until_ms));
    return fail_detail(SF_ERR_CLOCK_RANGE,
                       r.status == core::Status::BeforeEpoch ? "system clock is before the epoch"
                                                             : "system clock is past the end of the epoch's range",
                       "Check the system clock, or choose an epoch that covers it.",
                       "The clock reads %lld ms from the epoch %s; ids cover 0 to %lld ms.",
                       static_cast<long long>(now), g->settings.epoch_text.c_str(),
                       static_cast<long long>(g->settings.geometry.max_ms));
}

// Waits, within the limit, for the background thread to reserve now_ms
// (the mark file, or the coordinator's mark). SF_OK when it did.
sf_code await_reservation(sf_generator* g, int64_t now_ms, int64_t until_ns) noexcept {
    int64_t d = g->demand_ms.load();
    while (d < now_ms && !g->demand_ms.compare_exchange_weak(d, now_ms)) {
    }
    std::unique_lock<std::mutex> lock(g->mu);
    const uint64_t attempts = g->settings.mode == Mode::Static ? g->mark_attempts : g->coord_mark_attempts;
    wake_runner(g);
    g->cv.notify_all();
    for (;;) {
        if (g->reserved.load() >= now_ms) return SF_OK;
        if (g->deadline_ns.load() <= 0) return SF_ERR_NO_LEASE;  // decided by the caller again
        const bool is_static = g->settings.mode == Mode::Static;
        const std::string& err = is_static ? g->mark_error : g->coord_mark_error;
        const uint64_t now_attempts = is_static ? g->mark_attempts : g->coord_mark_attempts;
        if (now_attempts > attempts && !err.empty()) {
            if (is_static)
                return fail_detail(SF_ERR_MARK_FILE, "could not write the mark file",
                                   "Check the file system of the mark file; ids resume as soon as it can be "
                                   "written.",
                                   "%s: %s. No id is issued beyond the mark on disk.",
                                   g->settings.mark_path.c_str(), err.c_str());
            return fail_detail(SF_ERR_NO_LEASE, "could not extend the worker id's reservation in the coordinator",
                               "Check that the coordinator is reachable; no id is issued beyond its reservation, "
                               "so that a later holder of the worker id never issues it again.",
                               "%s.", err.c_str());
        }
        if (monotonic_ns() >= until_ns)
            return fail_detail(SF_ERR_NO_LEASE, "the reservation was not extended in time",
                               "Call again; sf_wait_ready() waits until ids can be issued. A reservation that "
                               "is often late means a slow disk or coordinator.",
                               "Ids up to %lld ms since the epoch are reserved; the clock reads %lld ms, and "
                               "the call waits at most %lld ms.",
                               static_cast<long long>(g->reserved.load()), static_cast<long long>(now_ms),
                               static_cast<long long>(wait_limit_ms(g)));
        g->cv.wait_for(lock, std::chrono::nanoseconds(until_ns - monotonic_ns()));
    }
}

// Clock failover: a call's wait for a backup worker id.
struct BackupWait {
    bool asked = false;
    int64_t until_ns = 0;   // monotonic: the call refuses after this
    uint64_t attempts = 0;  // the driver's attempts already seen
};

int64_t backup_wait_ms(const sf_generator* g) noexcept {
    return std::max<int64_t>(g->settings.tolerance_ms, SF_BACKUP_WAIT_MS);
}

// The clock is refused (core::Status::ClockBehind) with clock_backwards =
// SF_CLOCK_FAILOVER: asks the background thread for a backup worker id
// (the driver judges the clock again itself: core::plan_backup) and waits
// until an attempt answers, within backup_wait_ms() of the call's first
// request. SF_OK: decide again (a backup started, or none is needed on the
// driver's reading); else the refusal, which says why no backup took over.
sf_code await_backup(sf_generator* g, BackupWait* w, const core::Next& r, int64_t now) noexcept {
    std::unique_lock<std::mutex> lock(g->mu);
    if (!w->asked) {
        w->asked = true;
        w->until_ns = monotonic_ns() + backup_wait_ms(g) * 1000000;
        w->attempts = g->backup_attempts;
    }
    g->backup_wanted = g->settings.tolerance_ms;
    wake_runner(g);
    g->cv.notify_all();
    char why[sizeof(sf_error::detail)];
    for (;;) {
        if (g->stopping) return SF_OK;  // the next decision finds the fence
        if (g->backup_attempts > w->attempts) {
            w->attempts = g->backup_attempts;
            if (g->backup_error.empty()) return SF_OK;
            snprintf(why, sizeof why, "%s", g->backup_error.c_str());
            break;
        }
        const int64_t left = w->until_ns - monotonic_ns();
        if (left <= 0) {
            if (g->backup_worker >= 0)
                snprintf(why, sizeof why,
                         "the generator is on backup worker id %d, the clock is behind its ids too, and no other "
                         "was taken within %lld ms (a backup is held %lld ms before another replaces it)",
                         static_cast<int>(g->backup_worker), static_cast<long long>(backup_wait_ms(g)),
                         static_cast<long long>(core::kMinBackupHoldMs));
            else
                snprintf(why, sizeof why, "none was taken within %lld ms%s%s",
                         static_cast<long long>(backup_wait_ms(g)),
                         g->backup_error.empty() ? "" : "; the last attempt: ", g->backup_error.c_str());
            break;
        }
        g->cv.wait_for(lock, std::chrono::nanoseconds(left));
    }
    g->counters.clock_backwards_errors++;  // core::Config::failover left it to the call
    lock.unlock();
    return refuse_clock(g, r, now, why);
}

// Issues up to max_count ids of one millisecond into *r.
sf_code issue(sf_generator* g, int32_t max_count, core::Next* out) noexcept {
    Words words(*g);
    if (max_count == 1) {
        for (int attempt = 0; attempt < 3; attempt++) {
            int64_t id = 0;
            const core::Fast f = core::fast_issue(g->settings.geometry, words, &id);
            if (f == core::Fast::Issued) {
                g->ids_issued.fetch_add(1, std::memory_order_relaxed);
                out->status = core::Status::Issued;
                out->first_id = id;
                out->count = 1;
                return SF_OK;
            }
            if (f == core::Fast::NoLease) return refuse_no_lease(g, false);
            if (f == core::Fast::LeaseEnded) return refuse_no_lease(g, true);
        }
    }
    core::Config config{0, g->settings.tolerance_ms};  // the worker id is the word's
    config.failover = g->settings.failover;
    int64_t wait_until_ns = monotonic_ns() + wait_limit_ms(g) * 1000000;
    BackupWait backup;
    for (;;) {
        int64_t now = 0;
        core::Next r;
        {
            std::lock_guard<std::mutex> lock(g->mu);
            core::GeneratorState st;
            st.floor_ms = g->floor_ms;
            st.floor_grace_ms = g->floor_grace_ms;
            st.counters = g->counters;
            r = core::slow_issue(g->settings.geometry, words, st, config, max_count, &now);
            g->counters = st.counters;
        }
        switch (r.status) {
            case core::Status::Issued:
                g->ids_issued.fetch_add(r.count, std::memory_order_relaxed);
                *out = r;
                return SF_OK;
            case core::Status::WaitNextMs:
            case core::Status::WaitClock: wait_until_ms(g, r.wait_until_ms); break;
            case core::Status::WaitFloor:
                // A floor ahead of the clock (the previous run's reservation)
                // is waited out here only within the tolerance: sf_wait_ready
                // waits for it.
                if (r.wait_until_ms - now > wait_limit_ms(g)) return refuse_clock(g, r, now);
                wait_until_ms(g, r.wait_until_ms);
                break;
            case core::Status::ClockBehind:
                if (g->settings.failover) {
                    const sf_code c = await_backup(g, &backup, r, now);
                    if (c != SF_OK) return c;
                    // The backup's first reservation is awaited within the same bound.
                    wait_until_ns = std::max(wait_until_ns, backup.until_ns);
                    break;
                }
                return refuse_clock(g, r, now);
            case core::Status::BeforeEpoch:
            case core::Status::EndOfTime: return refuse_clock(g, r, now);
            case core::Status::NeedReservation: {
                const sf_code c = await_reservation(g, now, wait_until_ns);
                if (c != SF_OK && c != SF_ERR_NO_LEASE) return c;
                if (c == SF_ERR_NO_LEASE && g->deadline_ns.load() > 0) return c;
                break;
            }
            case core::Status::Fenced: {
                if (g->deadline_ns.load() <= 0) return refuse_no_lease(g, false);
                // A transition in progress (a tenure starting): decided again.
                std::unique_lock<std::mutex> lock(g->mu);
                g->cv.wait_for(lock, std::chrono::milliseconds(1));
                if (monotonic_ns() >= wait_until_ns) {
                    lock.unlock();
                    return refuse_no_lease(g, false);
                }
                break;
            }
            case core::Status::LeaseEnded: return refuse_no_lease(g, true);
        }
        config.repeat = true;
    }
}

}  // namespace

}  // namespace snowflake::sdk

using namespace snowflake;

sf_code sf_next_id(sf_generator* gen, int64_t* out) {
    if (gen == nullptr || out == nullptr)
        return sdk::fail(SF_ERR_INVALID, "sf_next_id needs a generator and a place for the id", nullptr,
                         "Pass the generator sf_open() returned and a pointer to an int64_t.");
    core::Next r;
    const sf_code c = sdk::issue(gen, 1, &r);
    if (c == SF_OK) *out = r.first_id;
    return c;
}

sf_code sf_next_ids(sf_generator* gen, int64_t* out, int32_t n, int32_t* got) {
    if (got != nullptr) *got = 0;
    if (gen == nullptr || out == nullptr || got == nullptr)
        return sdk::fail(SF_ERR_INVALID, "sf_next_ids needs a generator, an array and a count", nullptr,
                         "Pass the generator sf_open() returned, an array of n int64_t and a pointer to an "
                         "int32_t.");
    if (n < 1 || n > 1000000)
        return sdk::fail_detail(SF_ERR_INVALID, "the number of ids is out of range", "Ask for 1 to 1000000 ids.",
                                "n is %d.", static_cast<int>(n));
    while (*got < n) {
        core::Next r;
        const sf_code c = sdk::issue(gen, n - *got, &r);
        if (c != SF_OK) return c;
        for (int32_t i = 0; i < r.count; i++) out[*got + i] = r.first_id + i;
        *got += r.count;
    }
    return sdk::ok();
}
