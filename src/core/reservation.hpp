// When and how far the high-water mark reservation moves.
//
// Ids may be issued up to the reservation's end, which is on disk before any
// id in it is issued. A background worker keeps it ahead of the clock; these
// decisions are pure, with the clock and the last write's duration passed in.
#pragma once

#include "pure.hpp"

#include <cstdint>

namespace snowflake::core {

// The window a reservation reaches past its base: at least twice the last
// write's duration, so that a reservation still covers the clock when the
// write that makes it durable completes, and at most kMaxWindowMs, which
// bounds how long ids wait after a crash.
constexpr int64_t kMinWindowMs = 1000;
constexpr int64_t kMaxWindowMs = 60000;
int64_t reservation_window(int64_t last_write_ms) noexcept;

struct ReservationPlan {
    bool write = false;     // write a new reservation now
    int64_t until_ms = -1;  // ... reaching to this millisecond (inclusive)
};

// now_ms: the clock in the id space; reserved_ms: the end of the durable
// reservation; demand_ms: the latest millisecond a caller waits to have
// covered (-1 for none); window_ms: reservation_window() of the last write.
//
// - A caller waits beyond the reservation: reserve from the millisecond it
//   asked for (or from the clock, when the clock has moved on from there by
//   less than a window), one window ahead.
// - The clock is inside the reservation and less than half a window is left:
//   the next reservation starts where this one ends. Renewals only follow a
//   clock that advances continuously: a clock that jumps past the
//   reservation with nobody asking for ids there never drags the mark along.
// - Otherwise nothing is written.
ReservationPlan plan_reservation(int64_t now_ms, int64_t reserved_ms, int64_t demand_ms,
                                 int64_t window_ms) noexcept;

// How far a reservation reaching until_ms lies ahead of the clock now_ms,
// at least window_ms: what the mark records as its window, so that a
// restart after a crash with a correct clock waits the reservation out
// (renewals extend from the old end, so the lead reaches 1.5 windows; a
// caller's demand ahead of the clock, further), capped at kMaxWindowMs.
int64_t reservation_lead(int64_t until_ms, int64_t now_ms, int64_t window_ms) noexcept;

}  // namespace snowflake::core
