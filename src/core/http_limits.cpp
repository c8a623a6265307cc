// The ids ceiling and the client timers of the HTTP endpoint; see
// http_limits.hpp.
#include "http_limits.hpp"

#include "time.hpp"

namespace snowflake::core::http {

// --- the ceiling on HTTP ids ------------------------------------------------

void IdRateLimit::set_rate(int64_t ids_per_s, int64_t now_us) noexcept {
    if (ids_per_s < 0) ids_per_s = 0;
    if (ids_per_s == rate_) return;
    rate_ = ids_per_s;
    level_ = capacity();
    last_us_ = now_us;
}

IdRateLimit::Verdict IdRateLimit::take(int64_t count, int64_t now_us) noexcept {
    Verdict v;
    if (rate_ == 0) return v;
    // Refill: rate_ ids per second is rate_ micro-ids per microsecond. A
    // clock that did not advance adds nothing; a long pause fills it.
    const int64_t elapsed = now_us - last_us_;
    if (elapsed > 0) {
        last_us_ = now_us;
        const int64_t room = capacity() - level_;  // >= 0
        // elapsed * rate_ cannot overflow below room / rate_ + 1.
        level_ = elapsed > room / rate_ ? capacity() : level_ + elapsed * rate_;
    }
    if (level_ < 0) {
        const int64_t wait_us = (-level_ + rate_ - 1) / rate_;
        v.allowed = false;
        v.retry_after_s = (wait_us + kUsPerS - 1) / kUsPerS;
        if (v.retry_after_s < 1) v.retry_after_s = 1;
        v.retry_after_ms = (wait_us + kUsPerMs - 1) / kUsPerMs;
        if (v.retry_after_ms < 1) v.retry_after_ms = 1;
        return v;
    }
    level_ -= count * kUsPerS;  // micro-ids
    return v;
}

// --- time limits on clients -------------------------------------------------

int ClientClocks::open(int64_t now_ms) noexcept {
    int admitted = 0;
    for (const Slot& s : slots_) admitted += s.used && s.admitted ? 1 : 0;
    for (int i = 0; i < kSlots; i++) {
        if (!slots_[i].used) {
            slots_[i] = Slot{true, true, false, admitted < kMaxConnections, now_ms};
            return i;
        }
    }
    return -1;
}

bool ClientClocks::admitted(int slot) const noexcept {
    return slot >= 0 && slot < kSlots && slots_[slot].used && slots_[slot].admitted;
}

void ClientClocks::client_turn(int slot, int64_t now_ms) noexcept {
    if (slot < 0 || slot >= kSlots || !slots_[slot].used) return;
    slots_[slot].timed = true;
    slots_[slot].reported = false;
    slots_[slot].since_ms = now_ms;
}

void ClientClocks::server_turn(int slot) noexcept {
    if (slot < 0 || slot >= kSlots || !slots_[slot].used) return;
    slots_[slot].timed = false;
    slots_[slot].reported = false;
}

void ClientClocks::close(int slot) noexcept {
    if (slot < 0 || slot >= kSlots) return;
    slots_[slot] = Slot{};
}

int ClientClocks::overdue(int64_t now_ms, int* out, int cap) noexcept {
    int n = 0;
    for (int i = 0; i < kSlots && n < cap; i++) {
        Slot& s = slots_[i];
        const int64_t limit = s.admitted ? kClientTurnLimitMs : kSpareTurnLimitMs;
        if (s.used && s.timed && !s.reported && now_ms - s.since_ms > limit) {
            s.reported = true;
            out[n++] = i;
        }
    }
    return n;
}

int ClientClocks::in_use() const noexcept {
    int n = 0;
    for (const Slot& s : slots_) n += s.used ? 1 : 0;
    return n;
}

}  // namespace snowflake::core::http
