// Limits the HTTP endpoint enforces over time, with the time passed in so
// that they are unit-tested without a clock: the ceiling on ids handed out
// per second, and the time each client gets for its turn on a connection.
#pragma once

#include "pure.hpp"

#include <cstdint>

namespace snowflake::core::http {

// --- the ceiling on HTTP ids ------------------------------------------------

// snowflake.http_max_ids_per_second: a token bucket refilled at the rate and
// holding at most kBurstMs of it. A request is let through while the bucket
// is not in debt, and takes its whole count (a batch larger than the bucket
// still passes once; the debt then makes the next ones wait). Refused:
// retry_after_ms, the milliseconds until the debt is paid (at least 1: the
// Retry-After-Ms header), and retry_after_s, the same in whole seconds
// (at least 1: Retry-After, which has no finer unit).
// Time is passed in (monotonic microseconds).
class IdRateLimit {
public:
    static constexpr int64_t kBurstMs = 100;
    // ids_per_s 0: no limit. A changed rate starts with a full bucket.
    void set_rate(int64_t ids_per_s, int64_t now_us) noexcept;
    struct Verdict {
        bool allowed = true;
        int64_t retry_after_s = 0;
        int64_t retry_after_ms = 0;
    };
    // Lets a request of count ids through, or says how long to wait.
    Verdict take(int64_t count, int64_t now_us) noexcept;

private:
    int64_t rate_ = 0;      // ids per second
    int64_t level_ = 0;     // micro-ids (ids * 1e6); negative: debt
    int64_t last_us_ = 0;
    int64_t capacity() const noexcept { return rate_ * kBurstMs * 1000; }
};

// --- time limits on clients -------------------------------------------------

// libmicrohttpd closes a connection that sends nothing for its idle timeout,
// but a client that trickles a byte every few seconds (slowloris) is never
// idle, and a handful of them could hold every connection slot for as long
// as they liked. So each client has kClientTurnLimitMs to send a request
// (from its connection, or from the end of its previous answer) and as long
// to read an answer; the time the server spends deciding is not counted.
// ClientClocks keeps that per connection slot; the worker closes the
// connections overdue() names.
//
// Beyond kMaxConnections, kSpareConnections more are accepted only to be
// answered 503 with Retry-After (their request is read, then the connection
// closed), so that a client learns at once that the server is busy instead
// of waiting in the listen queue; such a client has kSpareTurnLimitMs.
constexpr int kMaxConnections = 64;
constexpr int kSpareConnections = 16;
constexpr int kSlots = kMaxConnections + kSpareConnections;
constexpr int64_t kClientTurnLimitMs = 10000;
constexpr int64_t kSpareTurnLimitMs = 2000;

class ClientClocks {
public:
    // A slot for a new connection, its client's turn starting now; -1 when
    // every slot is taken. The slot is admitted while fewer than
    // kMaxConnections admitted ones are open.
    int open(int64_t now_ms) noexcept;
    bool admitted(int slot) const noexcept;
    // The client is to send (or read) from now: its time starts again.
    void client_turn(int slot, int64_t now_ms) noexcept;
    // The server decides: no limit until the next client_turn.
    void server_turn(int slot) noexcept;
    void close(int slot) noexcept;
    // Writes up to cap slots whose client has had its turn for longer than
    // kClientTurnLimitMs (kSpareTurnLimitMs when not admitted) into out, each
    // once per turn; returns how many.
    int overdue(int64_t now_ms, int* out, int cap) noexcept;
    int in_use() const noexcept;

private:
    struct Slot {
        bool used = false;
        bool timed = false;     // the client's turn: since_ms counts
        bool reported = false;  // overdue() named it in this turn
        bool admitted = false;
        int64_t since_ms = 0;
    };
    Slot slots_[kSlots];
};

}  // namespace snowflake::core::http
