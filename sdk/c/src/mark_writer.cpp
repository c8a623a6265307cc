// The mark file of a static worker id: its writes (a reservation ahead of
// the clock, or the exact mark at sf_close), each synced before ids use it,
// and the background thread that keeps the reservation ahead of the clock
// (core::plan_reservation() decides when and how far). The id path never
// writes: it raises the demand and waits, within its limit, for this thread.

#include "generator.hpp"

#include "core/mark.hpp"
#include "core/reservation.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

namespace snowflake::sdk {

namespace {

// After a failed write, the next attempt waits this long (a caller that
// waits sees the error at once: mark_error).
constexpr int64_t kRetryMs = 100;
// The longest sleep between two decisions (a caller's demand wakes it).
constexpr int64_t kTickMs = 50;

}  // namespace

std::string write_mark(sf_generator* g, int64_t ms, bool exact) noexcept {
    core::Mark m;
    m.ms = ms;
    m.clean = exact;
    m.window_ms = exact ? 0 : core::reservation_lead(ms, id_ms(g->settings), g->window_ms);
    m.layout = core::mark_layout_code(g->settings.geometry);  // a mark bounds ids of its layout only
    uint8_t buf[core::kMarkSize];
    core::encode_mark(m, buf);
    const ssize_t n = pwrite(g->mark_fd, buf, sizeof buf, 0);
    if (n != static_cast<ssize_t>(sizeof buf))
        return std::string("write: ") + (n < 0 ? strerror(errno) : "short write");
    if (fdatasync(g->mark_fd) != 0) return std::string("fdatasync: ") + strerror(errno);
    return "";
}

void run_mark_writer(sf_generator* g) noexcept {
    std::unique_lock<std::mutex> lock(g->mu);
    int64_t retry_at_ns = 0;
    while (!g->stopping) {
        const int64_t now = id_ms(g->settings);
        const core::ReservationPlan plan = core::plan_reservation(now, g->durable_ms,
                                                                  g->demand_ms.load(std::memory_order_acquire),
                                                                  g->window_ms);
        if (!plan.write || monotonic_ns() < retry_at_ns) {
            g->cv.wait_for(lock, std::chrono::milliseconds(kTickMs));
            continue;
        }
        // The write and its sync happen without the lock: callers go on
        // issuing inside the reservation on disk.
        lock.unlock();
        const int64_t t0 = monotonic_ns();
        const std::string err = write_mark(g, plan.until_ms, false);
        const int64_t took_ms = (monotonic_ns() - t0) / 1000000;
        lock.lock();
        g->mark_attempts++;
        g->mark_error = err;
        if (err.empty()) {
            if (plan.until_ms > g->durable_ms) g->durable_ms = plan.until_ms;
            g->window_ms = core::reservation_window(took_ms);
            // Only ever raised, and never once sf_close fenced the ids.
            if (!g->stopping && g->reserved.load() < g->durable_ms)
                g->reserved.store(g->durable_ms, std::memory_order_release);
            g->counters.reservations++;
        } else {
            retry_at_ns = monotonic_ns() + kRetryMs * 1000000;
        }
        g->cv.notify_all();
    }
}

}  // namespace snowflake::sdk
