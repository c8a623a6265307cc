// The position protocol's view of shared memory (core/position.hpp's
// `Shared`): one generator's word, the reservation, the clocks and the
// lease deadline of this server, one access a call. The id path and the
// transitions of shmem.cpp run the core's protocol over it, for the SQL
// generator's word or the HTTP one's (shared_state.hpp); nothing else
// touches a word except through them.
#pragma once

#include "../core/lease.hpp"
#include "../core/position.hpp"

#include "clock.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"

namespace snowflake::pg {

class PositionWords {
public:
    PositionWords(Generator g, int64_t epoch_us) : word_(position_word(g)), epoch_us_(epoch_us) {}

    uint64_t load_word() {
        const uint64_t w = pg_atomic_read_u64(word_);
        pg_read_barrier();  // the word is read before the clock, the reservation, the lease
        return w;
    }
    bool cas_word(uint64_t& expected, uint64_t desired) {
        uint64 e = expected;
        const bool ok = pg_atomic_compare_exchange_u64(word_, &e, desired);
        expected = e;
        return ok;
    }
    int64_t load_reserved() { return static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms)); }
    // Lock held (a transition): the coordinator's reservation of the new
    // tenure ends at ms; the published limit follows before the word moves
    // (the compare-and-swap after it is a full barrier).
    void limit_reserved(int64_t ms) {
        pg_atomic_write_u64(&shared->lease.coord_reserved_ms_plus1, static_cast<uint64>(ms + 1));
        publish_reservation_locked();
    }
    int64_t now_ms() { return pg::now_ms(epoch_us_); }
    int64_t lease_deadline_ns() {
        LeaseShared& l = shared->lease;
        if (!l.leasing) return snowflake::core::kNoDeadline;
        const auto state = static_cast<snowflake::core::LeaseState>(pg_atomic_read_u32(&l.state));
        if (state != snowflake::core::LeaseState::Held) return 0;
        pg_read_barrier();  // the lease worker publishes the state last
        return static_cast<int64_t>(pg_atomic_read_u64(&l.deadline_ns));
    }
    int64_t boot_ns() { return boottime_ns(); }

private:
    pg_atomic_uint64* word_;
    int64_t epoch_us_;
};

}  // namespace snowflake::pg
