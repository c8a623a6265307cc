// The position protocol: the one word every caller of a generator swaps to
// issue ids, and every transition of its tenure (a fence, a new tenure, a
// lifted fence, a raised floor) moves. One copy, used by the extension's
// shared memory (src/pg/shmem.cpp, src/pg/id_path.cpp; once per generator:
// SQL's word, and the HTTP endpoint's with snowflake.http_worker_id, each
// word run by this protocol on its own) and checked exhaustively by
// test/unit/position_check_test.cpp.
//
// The word packs the last issued millisecond and sequence and the worker id
// those ids are composed with:
//
//   bits 63-54  worker id (10 bits)
//   bits 53-0   the ordered part: (last_ms + 1) << 12 | sequence, last_ms
//               from -1 (nothing issued) to kMaxMs; or, from kFencedBase
//               on, a fenced word: kFencedBase + (fenced_ms + 1)
//
// (for the twitter layout; every layout's word has the same form with its
// own widths: Geometry in layout.hpp)
//
// A fenced word lies above every millisecond of the id space, so no fast
// path can ever issue from it (fast_next() refuses it, and next_ids() is not
// asked: the slow path answers Status::Fenced). Every bit of the word is in
// use: normal words take (2^41 + 1) * 4096 values of the ordered part's
// 2^54, fenced words the next 2^41 + 1.
//
// THE INVARIANT. An id is issued only by the compare-and-swap that replaced
// a word that was not fenced, composed from that word's worker id; the swap
// is the id's linearization point. Every transition changes the word:
// - fence(): the word becomes fenced (a normal word is never equal to a
//   fenced one), so every swap prepared from an earlier word fails, whatever
//   that word held (a full millisecond included), and none can be prepared
//   until the fence is lifted or a tenure starts;
// - start_tenure() and lift(): only from a fenced word, to a word whose
//   millisecond is at least one past both the fence (for the same worker
//   id) and the floor, counted as used up. A word of this process never
//   comes back to a value an earlier caller read: within a tenure the
//   ordered part only grows, and a tenure starts past every millisecond an
//   earlier tenure of its worker id reached (the fence, or a floor at or
//   above that tenure's mark); so no swap prepared before a transition can
//   succeed after it (no ABA at sequence 4095). The one exception is the end
//   of the id space: a tenure cannot start past kMaxMs, and from
//   (kMaxMs, 4095) no swap can be prepared at all.
// The reservation: a tenure's start lowers it to the start (limit_reserved)
// before its word is installed, so a caller that reads the new word reads no
// reservation of an earlier tenure (the word is read before the
// reservation).
// The lease: a caller reads the deadline after the word and the boot clock
// after its swap; an id whose swap may have come at or after the deadline is
// given up (a gap, Fast::LeaseEnded / Status::LeaseEnded). An id returned was
// therefore issued while the lease was valid, whatever happened to the
// process between its reads (SIGSTOP, a paused VM): one holder at a time,
// as far as this node's lease bounds the worker id (a node whose key was
// taken over from outside its lease, a clone of it, is the registry's
// business: issue 28's identity of instances). This needs the host to
// install a new tenure's word before it publishes the new lease's deadline
// (checked: FindsANewLeasePublishedBeforeItsTenure). No sleep or margin is
// part of this argument; the boot clock read after the swap is ordered by
// the clock's own instruction barrier, not by the memory model.
#pragma once

#include "pure.hpp"

#include "generator.hpp"
#include "layout.hpp"

#include <cstdint>
#include <limits>

namespace snowflake::core {

// Every function takes the node's geometry (layout.hpp); the words of one
// process all have the one geometry. The word's fields under geometry g:
//   worker id:     bits from g.word_worker_shift up
//   ordered part:  (last_ms + 1) << g.sequence_bits | sequence, or from
//                  g.fenced_base on: g.fenced_base + (fenced_ms + 1)
static_assert(kTwitter.word_worker_shift == kSequenceBits + kTimestampBits + 1, "the comment above");

// A lease deadline that never passes (no leasing: a static worker id).
constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();

// (last_ms, sequence) as one number that grows with the position.
constexpr uint64_t position_order(const Geometry& g, uint64_t packed) noexcept {
    return packed & ((uint64_t{1} << g.word_worker_shift) - 1);
}
constexpr bool is_fenced(const Geometry& g, uint64_t packed) noexcept {
    return position_order(g, packed) >= g.fenced_base;
}

constexpr uint64_t pack_position(const Geometry& g, int64_t last_ms, int32_t sequence, int32_t worker) noexcept {
    return (static_cast<uint64_t>(static_cast<uint32_t>(worker) & static_cast<uint32_t>(g.max_worker))
            << g.word_worker_shift) |
           (static_cast<uint64_t>(last_ms + 1) << g.sequence_bits) |
           (static_cast<uint32_t>(sequence) & static_cast<uint32_t>(g.max_sequence));
}
// The word of worker `worker` fenced after millisecond ms (-1 to g.max_ms).
constexpr uint64_t pack_fenced(const Geometry& g, int64_t ms, int32_t worker) noexcept {
    return (static_cast<uint64_t>(static_cast<uint32_t>(worker) & static_cast<uint32_t>(g.max_worker))
            << g.word_worker_shift) |
           (g.fenced_base + static_cast<uint64_t>(ms + 1));
}
// The last millisecond the word's tenure may have issued ids in: its last
// id's, or for a fenced word the millisecond it was fenced at.
constexpr int64_t packed_ms(const Geometry& g, uint64_t packed) noexcept {
    return is_fenced(g, packed) ? static_cast<int64_t>(position_order(g, packed) - g.fenced_base) - 1
                                : static_cast<int64_t>(position_order(g, packed) >> g.sequence_bits) - 1;
}
// The last sequence used in packed_ms (a fenced word's millisecond is used up).
constexpr int32_t packed_sequence(const Geometry& g, uint64_t packed) noexcept {
    return is_fenced(g, packed) ? g.max_sequence
                                : static_cast<int32_t>(packed & static_cast<uint64_t>(g.max_sequence));
}
constexpr int32_t packed_worker(const Geometry& g, uint64_t packed) noexcept {
    return static_cast<int32_t>(packed >> g.word_worker_shift);
}

// The position raised to "floor_ms used up" if it is below that; the worker
// id and a fence kept. Returns `packed` itself when it is at or above the floor.
uint64_t raise_position(const Geometry& g, uint64_t packed, int64_t floor_ms) noexcept;
// The fenced form of a word (itself if it is fenced already).
uint64_t fence_position(const Geometry& g, uint64_t packed) noexcept;
// The millisecond a tenure of `worker` starts at after the fenced word
// `fenced`, counted as used up: one past the floor, and past the fence when
// the worker id is the fence's (at most g.max_ms: there the id space is over).
// The caller's floor is at or above every millisecond an earlier tenure of
// `worker` reached in this process (its mark, or this node's own last id).
int64_t tenure_start_ms(const Geometry& g, uint64_t fenced, int64_t floor_ms, int32_t worker) noexcept;

// The lock-free fast path's decision: the two common cases of next_id()
// (same millisecond with sequence left, or a later millisecond inside the
// reservation) computed from a snapshot of a word that is not fenced, with
// the worker id of that snapshot. On true, the caller installs *next with a
// compare-and-swap from `packed` and, if that succeeds, owns *id. On false
// the caller takes the slow path. A later millisecond's first id takes
// sequence new_ms_sequence (0, or the spread's offset: snowflake.sequence_spread,
// id_layout.hpp's first_sequence(); at most g.max_sequence).
struct FastNext {
    uint64_t next;
    int64_t id;
};
bool fast_next(const Geometry& g, uint64_t packed, int64_t now_ms, int64_t reserved_until_ms, FastNext* out,
               int32_t new_ms_sequence = 0) noexcept;

// kTwitter's forms, for the tests written before layouts. The extension's
// id path and the SDK's pass their geometry.
constexpr uint64_t kFencedBase = kTwitter.fenced_base;
constexpr uint64_t position_order(uint64_t packed) noexcept { return position_order(kTwitter, packed); }
constexpr bool is_fenced(uint64_t packed) noexcept { return is_fenced(kTwitter, packed); }
constexpr uint64_t pack_position(int64_t last_ms, int32_t sequence, int32_t worker) noexcept {
    return pack_position(kTwitter, last_ms, sequence, worker);
}
constexpr uint64_t pack_fenced(int64_t ms, int32_t worker) noexcept { return pack_fenced(kTwitter, ms, worker); }
constexpr int64_t packed_ms(uint64_t packed) noexcept { return packed_ms(kTwitter, packed); }
constexpr int32_t packed_sequence(uint64_t packed) noexcept { return packed_sequence(kTwitter, packed); }
constexpr int32_t packed_worker(uint64_t packed) noexcept { return packed_worker(kTwitter, packed); }
inline uint64_t raise_position(uint64_t packed, int64_t floor_ms) noexcept {
    return raise_position(kTwitter, packed, floor_ms);
}
inline uint64_t fence_position(uint64_t packed) noexcept { return fence_position(kTwitter, packed); }
inline int64_t tenure_start_ms(uint64_t fenced, int64_t floor_ms, int32_t worker) noexcept {
    return tenure_start_ms(kTwitter, fenced, floor_ms, worker);
}
inline bool fast_next(uint64_t packed, int64_t now_ms, int64_t reserved_until_ms, FastNext* out) noexcept {
    return fast_next(kTwitter, packed, now_ms, reserved_until_ms, out);
}

// ---------------------------------------------------------------------------
// The protocol over the shared words. `Shared` is the host's view of them,
// each call one access (the checker interleaves callers at every one):
//
//   uint64_t load_word();            the position; what is read after it
//                                    (clock, reservation, deadline) is read
//                                    after it (the host's read barrier)
//   bool cas_word(uint64_t& expected, uint64_t desired);
//                                    a full barrier; on failure `expected`
//                                    holds the word found
//   int64_t load_reserved();         ids may be issued up to this millisecond
//   void limit_reserved(int64_t ms); a new tenure: nothing is reserved past ms
//   int64_t now_ms();                the id space's clock
//   int64_t lease_deadline_ns();     ids may be issued while boot_ns() is below
//                                    it; 0 (or less) while no lease is held,
//                                    kNoDeadline without leasing
//   int64_t boot_ns();               the clock of the deadline
//
// The slow path and every transition run with the host's lock held; the
// fast path takes none. Only the lock holder changes a fenced word.

enum class Fast {
    Issued,      // *id is this caller's
    Slow,        // nothing issued: take the slow path
    NoLease,     // nothing issued: no lease is held
    LeaseEnded,  // *id was swapped but the lease may have ended first: a gap
};

// One attempt of the fast path.
template <class Shared>
Fast fast_issue(const Geometry& g, Shared& s, int64_t* id, int32_t new_ms_sequence = 0) noexcept {
    uint64_t cur = s.load_word();
    const int64_t deadline = s.lease_deadline_ns();
    if (deadline <= 0) return Fast::NoLease;
    const int64_t now = s.now_ms();
    const int64_t reserved = s.load_reserved();
    FastNext f;
    if (!fast_next(g, cur, now, reserved, &f, new_ms_sequence)) return Fast::Slow;
    if (!s.cas_word(cur, f.next)) return Fast::Slow;  // LINEARIZATION POINT
    *id = f.id;
    if (deadline != kNoDeadline && s.boot_ns() >= deadline) return Fast::LeaseEnded;
    return Fast::Issued;
}

// The slow path, lock held: the state machine (generator.hpp) decides on the
// word, the clock and the reservation, and a swap installs its decision;
// a fast-path swap in between makes it decide again. `g` brings the floor
// and the counters (kept across calls by the host) and comes back with the
// counters updated; last_ms, sequence and reserved_until_ms are the word's
// and the reservation's. *now_out: the clock the decision was made on.
template <class Shared>
Next slow_issue(const Geometry& geo, Shared& s, GeneratorState& g, Config config, int32_t max_count,
                int64_t* now_out) noexcept {
    config.geometry = &geo;
    for (;;) {
        uint64_t cur = s.load_word();
        const int64_t deadline = s.lease_deadline_ns();
        const int64_t now = s.now_ms();
        *now_out = now;
        Next r;
        if (deadline <= 0 || is_fenced(geo, cur)) {
            r.status = Status::Fenced;
            return r;
        }
        g.last_ms = packed_ms(geo, cur);
        g.sequence = packed_sequence(geo, cur);
        g.reserved_until_ms = s.load_reserved();
        config.worker = packed_worker(geo, cur);  // the id's worker id is the word's
        r = next_ids(g, now, config, max_count);
        if (r.status != Status::Issued) return r;
        if (!s.cas_word(cur, pack_position(geo, g.last_ms, g.sequence, config.worker)))  // LINEARIZATION POINT
            continue;
        if (deadline != kNoDeadline && s.boot_ns() >= deadline) r.status = Status::LeaseEnded;
        return r;
    }
}

// The tenure in force ends (a lease lost or paused, a shutdown, a change of
// worker id): the word is fenced. Lock held. Returns the fenced millisecond:
// no id of the tenure lies past it, and none is issued until lift() or
// start_tenure() (the exact mark of a clean stop).
template <class Shared>
int64_t fence(const Geometry& g, Shared& s) noexcept {
    uint64_t cur = s.load_word();
    while (!is_fenced(g, cur) && !s.cas_word(cur, fence_position(g, cur))) {
    }
    return packed_ms(g, cur);
}

// A tenure of `worker` starts after floor_ms (tenure_start_ms()): the tenure
// in force is fenced first, the reservation brought down to the start, then
// the new word installed. Lock held. Returns the start millisecond, which
// counts as used up.
template <class Shared>
int64_t start_tenure(const Geometry& g, Shared& s, int32_t worker, int64_t floor_ms) noexcept {
    (void)fence(g, s);
    uint64_t cur = s.load_word();
    const int64_t start = tenure_start_ms(g, cur, floor_ms, worker);
    s.limit_reserved(start);
    while (!s.cas_word(cur, pack_position(g, start, g.max_sequence, worker))) {
    }
    return start;
}

// The tenure in force goes on after a fence (a lease that came back): its
// ids resume one millisecond past the fence, its reservation unchanged.
// Lock held; nothing happens unless the word is fenced.
template <class Shared>
void lift(const Geometry& g, Shared& s) noexcept {
    uint64_t cur = s.load_word();
    while (is_fenced(g, cur)) {
        const int32_t worker = packed_worker(g, cur);
        if (s.cas_word(cur, pack_position(g, tenure_start_ms(g, cur, -1, worker), g.max_sequence, worker))) return;
    }
}

// Raises the position (or the fence) to "floor_ms used up"; lock held.
// Returns whether the word moved. Ids above the floor stay valid, so a word
// already there is not a transition.
template <class Shared>
bool raise_floor(const Geometry& g, Shared& s, int64_t floor_ms) noexcept {
    uint64_t cur = s.load_word();
    for (;;) {
        const uint64_t next = raise_position(g, cur, floor_ms);
        if (next == cur) return false;
        if (s.cas_word(cur, next)) return true;
    }
}

}  // namespace snowflake::core
