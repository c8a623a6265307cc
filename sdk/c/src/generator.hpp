// The embedded generator (struct sf_generator): the position word and the
// words the position protocol (core/position.hpp) reads beside it, the
// state the slow path and the transitions change under the mutex, and the
// background thread (the mark writer of a static worker id, or the lease
// driver's host).
//
// Memory order: the word is loaded with acquire (what the fast path reads
// after it, the deadline and the reservation, is read after it) and swapped
// with a full barrier; a new tenure's word is installed before its lease's
// deadline is published (release), as core/position.hpp requires.
#pragma once

#include "core/generator.hpp"
#include "core/lease.hpp"
#include "core/position.hpp"

#include "api.hpp"

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace snowflake::sdk {

class LeaseRunner;  // lease_host.hpp

enum class Mode { Static, Leased };

struct Settings {
    Mode mode = Mode::Static;
    // sf_config.layout: the geometry of every id, word and mark of this
    // generator (core/layout.hpp), and its name for messages and sf_stats.
    core::Geometry geometry = core::kTwitter;
    std::string layout_name = "twitter";
    int32_t worker = -1;  // static, or the leased id asked for (-1: any in the range)
    int32_t worker_min = 512;  // the layout's upper half unless given (layout.hpp)
    int32_t worker_max = 1023;
    std::string etcd_endpoints;
    std::string zookeeper_hosts;
    std::string prefix = "/snowflake";
    int64_t ttl_ms = 30000;
    std::string epoch_text;
    int64_t epoch_unix_us = 0;
    int64_t epoch_unix_ms = 0;  // floor of epoch_unix_us (sf_decode's unit)
    int64_t tolerance_ms = 5;
    bool failover = false;  // clock_backwards = SF_CLOCK_FAILOVER (leased only)
    std::string mark_path;
    std::string runtime = "c";
};

// The id space's clock: milliseconds since the epoch (floor).
int64_t id_ms(const Settings& s) noexcept;
// Tests only (test/sdk/clock_test.cpp, linked with the static library): the
// id space's clock moved by offset_ms (a step back is negative). Not
// exported from the shared library.
void set_clock_offset_for_tests(int64_t offset_ms) noexcept;
int64_t boottime_ns() noexcept;
int64_t monotonic_ns() noexcept;

}  // namespace snowflake::sdk

struct sf_generator {
    snowflake::sdk::Settings settings;

    // The position protocol's words (core/position.hpp).
    std::atomic<uint64_t> word{0};
    // Ids may be issued up to this millisecond: the mark file's durable
    // reservation (static), or the coordinator's confirmed one (leased).
    std::atomic<int64_t> reserved{-1};
    // kNoDeadline (static), 0 (no lease held, closed, a fork child), or the
    // lease's deadline on the boot clock.
    std::atomic<int64_t> deadline_ns{0};
    std::atomic<int64_t> ids_issued{0};
    // The latest millisecond a waiting caller needs reserved (-1: none).
    std::atomic<int64_t> demand_ms{-1};

    // Under mu: the slow path, the transitions, and everything below.
    std::mutex mu;
    std::condition_variable cv;  // a reservation, a lease change, a stop
    int64_t floor_ms = -1;
    int64_t floor_grace_ms = 0;
    snowflake::core::Counters counters;
    bool stopping = false;  // sf_close has begun: the background thread ends
    bool forked = false;    // this is a fork child's copy: the parent's lease and file are not ours
    int32_t waiters = 0;    // threads in sf_wait_ready: sf_close ends their wait and frees after them
    pid_t owner_pid = 0;

    // Static worker id: the mark file (flock held for the generator's life).
    int mark_fd = -1;
    int64_t durable_ms = -1;     // the reservation on disk
    int64_t window_ms = 1000;    // core::reservation_window() of the last write
    uint64_t mark_attempts = 0;  // writes tried, and the last one's error ("" if it succeeded)
    std::string mark_error;

    // Leased: the lease as last published by the driver's host.
    snowflake::core::LeaseState lease_state = snowflake::core::LeaseState::Acquiring;
    int32_t lease_worker = -1;
    uint64_t lease_acquisitions = 0;
    uint64_t lease_failures = 0;
    std::string lease_error;
    snowflake::core::LeaseError lease_error_reason = snowflake::core::LeaseError::None;
    std::string coord_mark_error;  // the last write of the coordinator's mark ("" if it succeeded)
    uint64_t coord_mark_attempts = 0;
    // Clock failover (core/backup.hpp): a caller's request to the driver's
    // host (-1, or the caller's clock tolerance), the attempts made and the
    // last one's error ("" when a backup started or none was needed), the
    // backup worker id ids are issued under (-1: none), the own id's last
    // millisecond before it (-1: none), and the highest millisecond ever
    // issued under the own id before a failover (a new tenure starts above it).
    int64_t backup_wanted = -1;
    uint64_t backup_attempts = 0;
    std::string backup_error;
    int32_t backup_worker = -1;
    int64_t own_last_ms = -1;
    int64_t own_high_ms = -1;
    uint64_t clock_failovers = 0;
    snowflake::sdk::LeaseRunner* runner = nullptr;  // the driver and its host (leaked in a fork child)

    std::thread* thread = nullptr;  // the background thread (leaked in a fork child)
};

namespace snowflake::sdk {

// The protocol's view of a generator (core/position.hpp's Shared).
class Words {
public:
    explicit Words(sf_generator& g) noexcept : g_(g) {}
    uint64_t load_word() noexcept { return g_.word.load(std::memory_order_acquire); }
    bool cas_word(uint64_t& expected, uint64_t desired) noexcept {
        return g_.word.compare_exchange_strong(expected, desired, std::memory_order_seq_cst);
    }
    int64_t load_reserved() noexcept { return g_.reserved.load(std::memory_order_acquire); }
    void limit_reserved(int64_t ms) noexcept { g_.reserved.store(ms, std::memory_order_seq_cst); }
    int64_t now_ms() noexcept { return id_ms(g_.settings); }
    int64_t lease_deadline_ns() noexcept { return g_.deadline_ns.load(std::memory_order_acquire); }
    int64_t boot_ns() noexcept { return boottime_ns(); }

private:
    sf_generator& g_;
};

// The generator registry for fork(): pthread_atfork handlers lock every
// live generator around a fork and mark the child's copies (fork.cpp).
void register_generator(sf_generator* g) noexcept;
void unregister_generator(sf_generator* g) noexcept;

// The fork gate (fork.cpp): a lease thread holds it shared around every
// stretch of coordinator I/O (a driver's turn or shutdown, a client's
// teardown), and the prepare handler takes it exclusively before any
// generator's mutex, so that fork() never copies a process while one of its
// lease threads is inside name resolution or a network library (whose locks
// would stay locked in the child: its own lease would hang). A fork waits
// for the calls under way, each bounded by its coordinator timeout. Never
// taken on the id path, and never while holding a generator's mutex (the
// prepare handler takes the gate first, then the mutexes).
void fork_gate_enter() noexcept;
void fork_gate_leave() noexcept;
class ForkGateShared {
public:
    ForkGateShared() noexcept { fork_gate_enter(); }
    ~ForkGateShared() { fork_gate_leave(); }
    ForkGateShared(const ForkGateShared&) = delete;
    ForkGateShared& operator=(const ForkGateShared&) = delete;
};

// Static worker id: the thread that keeps the mark file's reservation ahead
// of the clock (mark_writer.cpp), and its first write, made by sf_open.
void run_mark_writer(sf_generator* g) noexcept;
// Writes a reservation reaching until_ms (or, exact, the mark ms) and syncs
// it; "" on success, else the failing step and errno's text.
std::string write_mark(sf_generator* g, int64_t ms, bool exact) noexcept;

}  // namespace snowflake::sdk
