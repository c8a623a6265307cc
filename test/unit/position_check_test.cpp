// An exhaustive check of the position protocol (core/position.hpp), run on
// the protocol's own code: every caller and the lease worker run the core's
// functions on green threads (ucontext) over a model of the shared words, and
// the checker switches between them at every access the protocol makes.
// It tries every interleaving (depth-first, each state visited once: two runs
// whose shared words, truths and per-process reads agree go on alike) of two
// or three callers (fast path, slow path, a batch) with one script of
// transitions (a fence, a tenure start, a lifted fence, a backup and the
// return from it, the shutdown barrier, a reservation published, a raised
// floor) and a clock that ticks, from every class of starting word
// (sequence 0, in the middle, the last; the reservation below, at and above
// the clock). Beside the words the model keeps the truth: which tenure is
// in force, its worker id, its floor (the previous holder's mark), what the
// coordinator has durably reserved for it, and when its lease really ends.
// At every successful swap it derives the ids the swap claimed (those between
// the word it replaced and the word it installed) and checks:
//   1. no id is claimed twice;
//   2. no swap succeeds while no tenure is in force (after a fence);
//   3. an id's worker id is the tenure's, its millisecond above the
//      tenure's floor and at or below the tenure's durable reservation;
//   4. a fence's millisecond (the exact mark of a clean stop) is at or above
//      every id of its tenure;
//   5. an id a caller returns was claimed by that caller's swap, at a boot
//      time before the lease really ended (one holder at a time).
// The same checker, given 1.2's fence and fast path, finds the holes that
// this protocol closes (the last tests): it can fail.

#include <ucontext.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/generator.hpp"
#include "core/layout.hpp"
#include "core/position.hpp"

namespace sc = snowflake::core;

namespace {

// The geometry every check runs in: twitter's, or a small one whose
// sequence fills after a few ids (PositionCheck.*InASmallLayout).
sc::Geometry geo = sc::kTwitter;
// The sequence a later millisecond's first id takes (snowflake.sequence_spread's
// offset): 0, or a few in PositionCheck.*WithASpreadSequence.
int32_t new_ms_sequence = 0;

// ---------------------------------------------------------------------------
// Green threads: one switch per shared access.

enum class Pending { Access, Lock };

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
// A switch of stacks that saves only what the calling convention asks a
// callee to keep (swapcontext() also saves the signal mask, a system call
// each way, which would be most of the checker's time).
extern "C" void position_check_switch(void** save_sp, void* load_sp);
asm(R"(
.text
.globl position_check_switch
.type position_check_switch,@function
position_check_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size position_check_switch, .-position_check_switch
)");
struct Context {
    void* sp = nullptr;
};
void switch_to(Context& from, Context& to) { position_check_switch(&from.sp, to.sp); }
void start_context(Context& c, char* stack, size_t size, void (*entry)()) {
    auto top = reinterpret_cast<uintptr_t>(stack + size) & ~uintptr_t{15};
    auto* slot = reinterpret_cast<void**>(top);
    *--slot = nullptr;                            // the entry's return address: it never returns
    *--slot = reinterpret_cast<void*>(entry);     // where the first switch's `ret` goes
    for (int i = 0; i < 6; i++) *--slot = nullptr;  // rbp rbx r12 r13 r14 r15
    c.sp = slot;
}
#else
struct Context {
    ucontext_t uc{};
};
void switch_to(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
// Out of line: getcontext() returns twice in principle, which the caller's
// locals need not survive.
__attribute__((noinline)) void start_context(Context& c, char* stack, size_t size, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = size;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, entry, 0);
}
#endif

// Stacks, kept across runs (a run is replayed for every state it reaches).
constexpr size_t kStackSize = 256 * 1024;
std::vector<std::unique_ptr<char[]>> free_stacks;
std::unique_ptr<char[]> take_stack() {
    if (free_stacks.empty()) return std::unique_ptr<char[]>(new char[kStackSize]);
    std::unique_ptr<char[]> s = std::move(free_stacks.back());
    free_stacks.pop_back();
    return s;
}

struct Proc {
    Context ctx;
    std::unique_ptr<char[]> stack = take_stack();
    std::function<void()> body;
    bool done = false;
    Pending pending = Pending::Access;
    uint64_t hist = 0;  // what the process read: its local state is a function of it
    int steps = 0;
    Proc() = default;
    Proc(Proc&&) = default;
    ~Proc() {
        if (stack) free_stacks.push_back(std::move(stack));
    }
};

struct Sched {
    Context main;
    std::vector<Proc>* procs = nullptr;
    int current = -1;
    void yield(Pending p) {
        Proc& me = (*procs)[static_cast<size_t>(current)];
        me.pending = p;
        switch_to(me.ctx, main);
    }
    void resume(int i) {
        current = i;
        switch_to(main, (*procs)[static_cast<size_t>(i)].ctx);
        current = -1;
    }
};

Sched* g_sched = nullptr;

// Where every process starts: its body, then back to the checker for good.
void entry() {
    Proc& p = (*g_sched->procs)[static_cast<size_t>(g_sched->current)];
    p.body();
    p.done = true;
    switch_to(p.ctx, g_sched->main);
}

uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

// ---------------------------------------------------------------------------
// The world: the shared words and, beside them, the truth.

struct Range {
    int64_t first, last;  // ids first..last, claimed by one swap
    int tenure;
    int proc;
    int64_t boot;        // the boot clock at the swap
    int64_t lease_until;  // when the tenure's lease really ended, at the swap
};

struct World {
    // The shared words.
    uint64_t word = 0;
    int64_t reserved = 0;
    int64_t clock = 0;
    int64_t boot = 0;
    int64_t deadline = sc::kNoDeadline;  // published; 0: no lease
    int lock_owner = -1;
    // The truth.
    int tenure = 0;
    bool fenced = false;
    int32_t worker = 0;
    int64_t floor = -1;
    int64_t durable = 0;
    int64_t lease_until = sc::kNoDeadline;
    // The lease of the next tenure, when a script changes leases: its real
    // end, which the truth takes at the tenure's start (-1: the same lease).
    int64_t next_lease_until = -1;
    std::vector<Range> ranges;
    std::string violation;
    // Which words some process of the scenario writes besides the word: a
    // read of one that nobody writes commutes with every other step, so the
    // checker does not switch before it (a sound reduction).
    bool clock_moves = false, boot_moves = false, deadline_moves = false, reserved_moves = false;

    void fail(const std::string& what) {
        if (violation.empty()) violation = what;
    }
    uint64_t hash() const {
        uint64_t h = 0;
        for (uint64_t v : {word, static_cast<uint64_t>(reserved), static_cast<uint64_t>(clock),
                           static_cast<uint64_t>(boot), static_cast<uint64_t>(deadline),
                           static_cast<uint64_t>(lock_owner), static_cast<uint64_t>(tenure),
                           static_cast<uint64_t>(fenced), static_cast<uint64_t>(worker),
                           static_cast<uint64_t>(floor), static_cast<uint64_t>(durable),
                           static_cast<uint64_t>(lease_until), static_cast<uint64_t>(next_lease_until)})
            h = mix(h, v);
        // The ids claimed, as a set: the order they were claimed in is in
        // the processes' reads already.
        uint64_t set = 0;
        for (const Range& r : ranges) {
            uint64_t e = 0;
            for (uint64_t v : {static_cast<uint64_t>(r.first), static_cast<uint64_t>(r.last),
                               static_cast<uint64_t>(r.tenure), static_cast<uint64_t>(r.proc),
                               static_cast<uint64_t>(r.boot)})
                e = mix(e, v);
            set += e * 0x2545f4914f6cdd1dull;
        }
        return mix(h, set);
    }
};

std::string id_text(int64_t id) {
    const sc::Fields f = sc::decompose(geo, id);
    char buf[96];
    snprintf(buf, sizeof buf, "(ms %lld, worker %d, seq %d)", static_cast<long long>(f.ms), f.worker, f.sequence);
    return buf;
}

// What the lease worker is doing, so that the model knows which truth a swap
// of its makes true.
enum class Op { None, Start, Lift, Raise, Fence1_2 };

// The core's `Shared` over the world, for one process: every access yields
// to the checker first.
struct ModelWords {
    World* w;
    Sched* s;
    int me;
    // The lease worker's transition in progress.
    Op op = Op::None;
    int32_t op_worker = 0;
    int64_t op_floor = -1;
    // The caller's last successful swap (ranges index), -1: none.
    int last_range = -1;

    Proc& proc() { return (*s->procs)[static_cast<size_t>(me)]; }
    // Between two calls of the protocol: what the process does next depends
    // on nothing it read before (the core keeps no state across calls) but
    // on where it is (`label`) and its last swap; the checker forgets the
    // rest, so that runs which differ only in stale reads meet.
    void checkpoint(uint64_t label) {
        proc().hist = mix(label, static_cast<uint64_t>(last_range + 1));
        proc().steps = 0;
    }
    void note(uint64_t v) {
        proc().hist = mix(proc().hist, v);
        proc().steps++;
    }
    void access() { s->yield(Pending::Access); }

    uint64_t load_word() {
        access();
        note(w->word);
        return w->word;
    }
    bool cas_word(uint64_t& expected, uint64_t desired) {
        access();
        const bool ok = w->word == expected;
        if (ok) {
            w->word = desired;
            on_swap(expected, desired);
        } else {
            expected = w->word;
        }
        note(ok ? 1 : 2);
        note(expected);
        return ok;
    }
    int64_t load_reserved() {
        if (w->reserved_moves) access();
        note(static_cast<uint64_t>(w->reserved));
        return w->reserved;
    }
    void limit_reserved(int64_t ms) {
        access();
        w->reserved = ms;
    }
    int64_t now_ms() {
        if (w->clock_moves) access();
        note(static_cast<uint64_t>(w->clock));
        return w->clock;
    }
    int64_t lease_deadline_ns() {
        if (w->deadline_moves) access();
        note(static_cast<uint64_t>(w->deadline));
        return w->deadline;
    }
    int64_t boot_ns() {
        if (w->boot_moves) access();
        note(static_cast<uint64_t>(w->boot));
        return w->boot;
    }
    void lock() {
        s->yield(Pending::Lock);
        w->lock_owner = me;
    }
    // No switch of its own: releasing a lock at once after the last access
    // under it covers every later release (the others merely wait).
    void unlock() { w->lock_owner = -1; }

    // The truth of a fence with no swap of its own (1.2's fence at a full
    // millisecond left the word as it was): from here on no tenure is in force.
    void fence_without_swap(int64_t exact) {
        access();
        mark_fenced(exact);
    }

    void mark_fenced(int64_t exact) {
        w->fenced = true;
        for (const Range& r : w->ranges)
            if (r.tenure == w->tenure && sc::decompose(geo, r.last).ms > exact)
                w->fail("id " + id_text(r.last) + " lies past the fence's millisecond " + std::to_string(exact));
    }

    void on_swap(uint64_t before, uint64_t after) {
        if (op != Op::None || (sc::is_fenced(geo, after) && !sc::is_fenced(geo, before))) {
            lease_worker_swap(before, after);
            return;
        }
        caller_swap(before, after);
    }

    void lease_worker_swap(uint64_t before, uint64_t after) {
        const bool was = sc::is_fenced(geo, before), now = sc::is_fenced(geo, after);
        if ((!was && now) || op == Op::Fence1_2) {
            mark_fenced(sc::packed_ms(geo, after));
        } else if (was && !now && op == Op::Start) {
            w->tenure++;
            w->fenced = false;
            w->worker = op_worker;
            w->floor = op_floor;
            w->durable = op_floor;  // nothing of the new tenure is reserved yet
            if (w->next_lease_until >= 0) w->lease_until = w->next_lease_until;
            if (sc::packed_worker(geo, after) != op_worker) w->fail("a tenure started with another worker id");
        } else if (was && !now && op == Op::Lift) {
            w->fenced = false;
        } else if (op == Op::Raise) {
            if (op_floor > w->floor) w->floor = op_floor;
        } else {
            w->fail("a transition swap the model cannot name");
        }
    }

    void caller_swap(uint64_t before, uint64_t after) {
        if (sc::is_fenced(geo, before) || w->fenced) {
            w->fail("a caller's swap succeeded after the fence, while no tenure was in force");
            return;
        }
        const int32_t worker = sc::packed_worker(geo, before);
        const int64_t ms = sc::packed_ms(geo, after);
        if (sc::packed_worker(geo, after) != worker) w->fail("a caller's swap changed the worker id");
        if (sc::position_order(geo, after) <= sc::position_order(geo, before))
            w->fail("a caller's swap did not move forward");
        // A later millisecond's ids start at its first sequence (the spread's offset).
        const int32_t first = sc::packed_ms(geo, before) == ms ? sc::packed_sequence(geo, before) + 1
                                                               : new_ms_sequence;
        if (first > sc::packed_sequence(geo, after)) w->fail("a caller's swap claimed no id");
        const int64_t lo = sc::compose(geo, ms, worker, first),
                      hi = sc::compose(geo, ms, worker, sc::packed_sequence(geo, after));
        if (worker != w->worker)
            w->fail("id " + id_text(lo) + " composes worker id " + std::to_string(worker) + " during a tenure of " +
                    std::to_string(w->worker));
        if (ms <= w->floor)
            w->fail("id " + id_text(lo) + " is at or below the tenure's floor " + std::to_string(w->floor));
        if (ms > w->durable)
            w->fail("id " + id_text(lo) + " lies past the durable reservation " + std::to_string(w->durable));
        for (const Range& r : w->ranges)
            if (lo <= r.last && r.first <= hi) w->fail("id " + id_text(lo > r.first ? lo : r.first) + " issued twice");
        w->ranges.push_back(Range{lo, hi, w->tenure, me, w->boot, w->lease_until});
        last_range = static_cast<int>(w->ranges.size()) - 1;
    }

    // The caller hands `count` ids from first_id back to its own caller.
    void returned(int64_t first_id, int32_t count) {
        if (last_range < 0) {
            w->fail("a caller returned an id no swap of its claimed");
            return;
        }
        const Range& r = w->ranges[static_cast<size_t>(last_range)];
        if (first_id < r.first || first_id + count - 1 > r.last)
            w->fail("a caller returned ids its swap did not claim");
        if (r.boot >= r.lease_until)
            w->fail("id " + id_text(first_id) + " was returned, but its swap came after the lease had ended");
    }
};

// ---------------------------------------------------------------------------
// Scenarios.

struct Start {
    const char* name;
    uint64_t word;
    int64_t reserved;
    int64_t clock;
};

using Body = std::function<void(ModelWords&)>;

struct Scenario {
    std::string name;
    Start start;
    int32_t worker = 3;
    int64_t floor = -1;
    bool leased = false;
    std::vector<Body> bodies;  // the processes
    bool clock_moves = false, boot_moves = false, deadline_moves = false, reserved_moves = true;
};

// One run of a scenario under a schedule prefix.
class Run {
public:
    explicit Run(const Scenario& sc) {
        world_.word = sc.start.word;
        world_.reserved = sc.start.reserved;
        world_.clock = sc.start.clock;
        world_.worker = sc.worker;
        world_.floor = sc.floor;
        world_.fenced = sc::is_fenced(geo, sc.start.word);
        world_.durable = sc.start.reserved;
        world_.deadline = sc.leased ? 2 : sc::kNoDeadline;
        world_.lease_until = world_.deadline;
        // The ids the starting word says were issued already.
        if (!sc::is_fenced(geo, sc.start.word) && sc::packed_ms(geo, sc.start.word) >= 0) {
            const int64_t ms = sc::packed_ms(geo, sc.start.word);
            const int32_t w = sc::packed_worker(geo, sc.start.word);
            world_.ranges.push_back(Range{sc::compose(geo, ms, w, 0),
                                          sc::compose(geo, ms, w, sc::packed_sequence(geo, sc.start.word)), 0, -1,
                                          0, world_.lease_until});
        }
        world_.clock_moves = sc.clock_moves;
        world_.boot_moves = sc.boot_moves;
        world_.deadline_moves = sc.deadline_moves;
        world_.reserved_moves = sc.reserved_moves;
        procs_.resize(sc.bodies.size());
        sched_.procs = &procs_;
        words_.reserve(sc.bodies.size());
        for (size_t i = 0; i < sc.bodies.size(); i++) words_.push_back(ModelWords{&world_, &sched_, static_cast<int>(i)});
        g_sched = &sched_;
        for (size_t i = 0; i < sc.bodies.size(); i++) {
            Proc& p = procs_[i];
            ModelWords* m = &words_[i];
            const Body body = sc.bodies[i];
            p.body = [m, body] { body(*m); };
            start_context(p.ctx, p.stack.get(), kStackSize, entry);
            sched_.resume(static_cast<int>(i));  // up to its first access
        }
    }
    bool enabled(size_t i) const {
        const Proc& p = procs_[i];
        return !p.done && (p.pending != Pending::Lock || world_.lock_owner < 0);
    }
    std::vector<int> choices() const {
        std::vector<int> c;
        for (size_t i = 0; i < procs_.size(); i++)
            if (enabled(i)) c.push_back(static_cast<int>(i));
        return c;
    }
    void step(int i) {
        g_sched = &sched_;
        sched_.resume(i);
    }
    uint64_t hash() const {
        uint64_t h = world_.hash();
        for (const Proc& p : procs_)
            h = mix(mix(mix(h, p.hist), static_cast<uint64_t>(p.steps)), p.done ? 1 : 2);
        return h;
    }
    const World& world() const { return world_; }
    bool stuck() const {
        for (const Proc& p : procs_)
            if (!p.done) return true;
        return false;
    }

private:
    World world_;
    std::vector<Proc> procs_;
    Sched sched_;
    std::vector<ModelWords> words_;
};

struct Outcome {
    size_t states = 0;
    size_t runs = 0;
    std::string violation;  // the first found, with its schedule
};

// Depth first from the state `run` is in (prefix); run null: replay the
// prefix on a fresh run. The last choice goes on in the same run, the others
// replay.
void explore(const Scenario& sc, std::vector<int>& prefix, std::unique_ptr<Run> run,
             std::unordered_set<uint64_t>& seen, Outcome& out) {
    if (!out.violation.empty()) return;
    if (!run) {
        run = std::make_unique<Run>(sc);
        for (int i : prefix) run->step(i);
    }
    const World& w = run->world();
    if (!w.violation.empty()) {
        std::string schedule;
        for (int i : prefix) schedule += std::to_string(i);
        out.violation = w.violation + " [schedule " + schedule + "]";
        return;
    }
    const std::vector<int> next = run->choices();
    if (next.empty()) {
        out.runs++;
        if (run->stuck()) out.violation = "a process waits for a lock nobody releases";
        return;
    }
    if (!seen.insert(run->hash()).second) return;
    out.states++;
    for (size_t k = 0; k < next.size() && out.violation.empty(); k++) {
        prefix.push_back(next[k]);
        if (k + 1 == next.size()) {
            run->step(next[k]);
            explore(sc, prefix, std::move(run), seen, out);
        } else {
            explore(sc, prefix, nullptr, seen, out);
        }
        prefix.pop_back();
    }
}

Outcome check(const Scenario& sc) {
    Outcome out;
    std::vector<int> prefix;
    std::unordered_set<uint64_t> seen;
    explore(sc, prefix, nullptr, seen, out);
    return out;
}

// ---------------------------------------------------------------------------
// The processes: callers as the extension's id path makes its calls, and the
// lease worker's transitions as it makes them (each under the lock).

// One call of the fast path, and the slow path if it says so.
void fast_caller(ModelWords& m) {
    int64_t id = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        const sc::Fast f = sc::fast_issue(geo, m, &id, new_ms_sequence);
        if (f == sc::Fast::Issued) {
            m.returned(id, 1);
            return;
        }
        if (f != sc::Fast::Slow) return;
        m.checkpoint(100 + static_cast<uint64_t>(attempt));
    }
    m.lock();
    sc::GeneratorState g;
    int64_t now = 0;
    sc::Config c;
    c.new_ms_sequence = new_ms_sequence;
    const sc::Next r = sc::slow_issue(geo, m, g, c, 1, &now);
    m.unlock();
    if (r.status == sc::Status::Issued) m.returned(r.first_id, r.count);
}

// One call of the slow path for up to n ids (a batch: n = 4096).
Body slow_caller(int32_t n) {
    return [n](ModelWords& m) {
        m.lock();
        sc::GeneratorState g;
        int64_t now = 0;
        sc::Config c;
        c.new_ms_sequence = new_ms_sequence;
        const sc::Next r = sc::slow_issue(geo, m, g, c, n, &now);
        m.unlock();
        if (r.status == sc::Status::Issued) m.returned(r.first_id, r.count);
    };
}

// The lease worker's transitions.
struct Lw {
    static void fence(ModelWords& m) {
        m.lock();
        (void)sc::fence(geo, m);
        m.unlock();
        m.checkpoint(201);
    }
    // A lease that came back after a pause.
    static void lift(ModelWords& m) {
        m.lock();
        m.op = Op::Lift;
        sc::lift(geo, m);
        m.op = Op::None;
        m.unlock();
        m.checkpoint(202);
    }
    static void start(ModelWords& m, int32_t worker, int64_t floor) {
        m.lock();
        m.op = Op::Start;
        m.op_worker = worker;
        m.op_floor = floor;
        (void)sc::start_tenure(geo, m, worker, floor);
        m.op = Op::None;
        m.unlock();
        m.checkpoint(203 + static_cast<uint64_t>(worker));
    }
    static void raise(ModelWords& m, int64_t floor) {
        m.lock();
        m.op = Op::Raise;
        m.op_floor = floor;
        (void)sc::raise_floor(geo, m, floor);
        m.op = Op::None;
        m.unlock();
    }
    // A reservation the coordinator confirmed for the tenure in force,
    // published (the durable truth first, then the word callers read).
    static void publish(ModelWords& m, int64_t until) {
        m.lock();
        m.access();
        if (until > m.w->durable) m.w->durable = until;
        if (until > m.w->reserved) m.w->reserved = until;
        m.unlock();
        m.checkpoint(301);
    }
    // The lease is lost: its deadline unpublished, then the fence.
    static void lose(ModelWords& m) {
        m.lock();
        m.access();
        m.w->deadline = 0;
        (void)sc::fence(geo, m);
        m.unlock();
    }
};

// The clock: ticks of the id clock and of the boot clock (the lease's).
Body ticks(int id_ticks, int boot_ticks) {
    return [id_ticks, boot_ticks](ModelWords& m) {
        for (int i = 0; i < id_ticks; i++) {
            m.access();
            m.w->clock++;
        }
        for (int i = 0; i < boot_ticks; i++) {
            m.access();
            m.w->boot++;
        }
    };
}

// Under AddressSanitizer the switches go through swapcontext() and every
// access is checked: the large tests then run from the first starting class
// only (the full check runs in the plain build).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kQuick = true;
#else
constexpr bool kQuick = false;
#endif

constexpr int64_t kM = 1000;  // the starting word's millisecond
constexpr int32_t kW = 3;     // the worker id in force

// quick: the first class only, under AddressSanitizer (kQuick).
std::vector<Start> starts(bool quick = kQuick) {
    std::vector<Start> s;
    for (int32_t seq : {0, std::min<int32_t>(5, geo.max_sequence - 1), geo.max_sequence})
        for (int64_t dr : {-1, 0, 1}) {
            // The clock one past the word's millisecond; the reservation
            // below, at and above it.
            Start st{"", sc::pack_position(geo, kM, seq, kW), kM + 1 + dr, kM + 1};
            s.push_back(st);
        }
    // The clock still in the word's millisecond: nothing of it used, its
    // last sequence left (callers race for it), or all of it used.
    for (int32_t seq : {0, geo.max_sequence - 1, geo.max_sequence})
        s.push_back(Start{"", sc::pack_position(geo, kM, seq, kW), kM + 3, kM});
    if (quick) s.resize(1);
    return s;
}

std::string start_name(const Start& st) {
    char buf[96];
    snprintf(buf, sizeof buf, "seq %d, reserved %+lld, clock %+lld", sc::packed_sequence(geo, st.word),
             static_cast<long long>(st.reserved - st.clock), static_cast<long long>(st.clock - kM));
    return buf;
}

struct Script {
    const char* name;
    Body body;
    bool writes_reserved = true;   // publishes or limits the reservation
    bool writes_deadline = false;  // unpublishes the lease
};

std::vector<Script> scripts() {
    return {
        {"shutdown barrier", [](ModelWords& m) { Lw::fence(m); }, false},
        {"lease paused and back", [](ModelWords& m) { Lw::fence(m); Lw::lift(m); }, false},
        {"hand-over to another worker id",
         [](ModelWords& m) {
             Lw::start(m, 7, kM + 2);
             Lw::publish(m, kM + 9);
         }},
        {"a new tenure of the same worker id",
         [](ModelWords& m) {
             Lw::start(m, kW, kM);
             Lw::publish(m, kM + 9);
         }},
        {"backup worker id and back",
         [](ModelWords& m) {
             // As the lease worker does it: the own id fenced, the backup's
             // tenure after its mark (behind the own id's ids), and back
             // after both tenures' last milliseconds.
             m.lock();
             const int64_t own_last = sc::fence(geo, m);
             m.op = Op::Start;
             m.op_worker = 9;
             m.op_floor = kM - 5;
             (void)sc::start_tenure(geo, m, 9, kM - 5);
             m.op = Op::None;
             m.unlock();
             Lw::publish(m, kM + 9);
             m.lock();
             const int64_t backup_last = sc::fence(geo, m);
             const int64_t floor = own_last > backup_last ? own_last : backup_last;
             m.op = Op::Start;
             m.op_worker = kW;
             m.op_floor = floor;
             (void)sc::start_tenure(geo, m, kW, floor);
             m.op = Op::None;
             m.unlock();
             Lw::publish(m, kM + 9);  // ids on the own id after the return
         }},
        {"reservation published", [](ModelWords& m) { Lw::publish(m, kM + 2); }},
        {"floor raised", [](ModelWords& m) { Lw::raise(m, kM + 1); }, false},
        {"lease lost", [](ModelWords& m) { Lw::lose(m); }, false, true},
    };
}

std::vector<std::pair<std::string, std::vector<Body>>> caller_sets() {
    return {
        {"fast, fast", {fast_caller, fast_caller}},
        {"fast, slow", {fast_caller, slow_caller(1)}},
        {"fast, batch", {fast_caller, slow_caller(geo.max_sequence + 1)}},
        {"slow, batch", {slow_caller(1), slow_caller(geo.max_sequence + 1)}},
    };
}

Scenario make(const Start& st, const Script& script, const std::pair<std::string, std::vector<Body>>& callers,
              int id_ticks, int boot_ticks, bool leased) {
    Scenario s;
    s.name = script.name + std::string(" / ") + callers.first + " / " + start_name(st);
    s.start = st;
    s.worker = kW;
    s.floor = kM - 10;
    s.leased = leased;
    s.bodies = callers.second;
    s.bodies.push_back(script.body);
    if (id_ticks + boot_ticks > 0) s.bodies.push_back(ticks(id_ticks, boot_ticks));
    s.clock_moves = id_ticks > 0;
    s.boot_moves = boot_ticks > 0;
    s.deadline_moves = script.writes_deadline;
    s.reserved_moves = script.writes_reserved;
    return s;
}

// Every transition, every pair of callers, every class of starting word,
// with the clock ticking once at any point, in geometry geo.
void check_two_callers() {
    size_t states = 0, runs = 0, scenarios = 0;
    for (const Start& st : starts())
        for (const Script& script : scripts())
            for (const auto& callers : caller_sets()) {
                const Scenario s = make(st, script, callers, 1, 0, false);
                const Outcome o = check(s);
                ASSERT_EQ(o.violation, "") << s.name;
                if (getenv("POSITION_CHECK_VERBOSE")) printf("%s: %zu states %zu runs\n", s.name.c_str(), o.states, o.runs);
                states += o.states;
                runs += o.runs;
                scenarios++;
            }
    printf("[position check] sequence of %d bits: %zu scenarios, %zu states, %zu complete runs\n",
           geo.sequence_bits, scenarios, states, runs);
    EXPECT_GT(runs, scenarios);
}

}  // namespace

TEST(PositionCheck, EveryInterleavingOfTwoCallersWithEachTransition) { check_two_callers(); }

// The same in a layout of 11 bits of time, 4 of worker id and 2 of
// sequence (snowflake.layout = 'time 11, worker 4, sequence 2'): every word
// has that geometry's form (its worker shift, its fenced values), and a
// millisecond fills after four ids. The protocol is the same for every
// geometry, so the interleavings are the same as twitter's (the state
// counts agree); what this adds is the check of the packing itself.
// The same in the small layout with snowflake.sequence_spread's offset: a
// later millisecond's first id takes sequence 2 of 0-3, so two callers fill
// a new millisecond between them (the spread's capacity cost at its worst).
TEST(PositionCheck, EveryInterleavingOfTwoCallersWithASpreadSequence) {
    struct Restore {
        ~Restore() {
            geo = sc::kTwitter;
            new_ms_sequence = 0;
        }
    } restore;
    geo = sc::geometry_of(11, 4, 2);
    new_ms_sequence = 2;
    check_two_callers();
}

TEST(PositionCheck, EveryInterleavingOfTwoCallersInASmallLayout) {
    struct Restore {
        ~Restore() { geo = sc::kTwitter; }
    } restore;
    geo = sc::geometry_of(11, 4, 2);
    ASSERT_GE(geo.max_ms, kM + 10);
    ASSERT_GE(geo.max_worker, 9);  // the scripts' backup worker id
    check_two_callers();
}

// Three callers (two fast, one batch) with every transition.
TEST(PositionCheck, EveryInterleavingOfThreeCallersWithEachTransition) {
    size_t states = 0;
    const std::pair<std::string, std::vector<Body>> three{"fast, fast, batch",
                                                          {fast_caller, fast_caller,
                                                           slow_caller(geo.max_sequence + 1)}};
    for (const Start& st : starts())
        for (const Script& script : scripts()) {
            const Outcome o = check(make(st, script, three, 1, 0, false));
            ASSERT_EQ(o.violation, "") << script.name << " / " << start_name(st);
            states += o.states;
        }
    printf("[position check] three callers: %zu states\n", states);
}

// A leased node whose lease really ends while callers are in flight and the
// lease worker is stopped (it never fences): no id is returned from a swap
// after the end, whatever the interleaving.
TEST(PositionCheck, NoIdIsReturnedFromASwapAfterTheLeaseEnded) {
    const Script stalled{"lease worker stopped", [](ModelWords&) {}, false};
    const Script late{"lease lost late", [](ModelWords& m) { Lw::lose(m); }, false, true};
    for (const Start& st : starts())
        for (const Script* script : {&stalled, &late})
            for (const auto& callers : caller_sets()) {
                const Scenario s = make(st, *script, callers, 1, 2, true);
                const Outcome o = check(s);
                ASSERT_EQ(o.violation, "") << s.name;
            }
}

// Leases that change beside the transitions, as the lease worker orders it:
// a pause and the same lease back with a later deadline; a lost lease, then
// a new tenure (another worker id, or the same one) and only then its lease
// published Held. Every id returned was swapped before its own tenure's
// lease ended.
namespace {

void set_deadline(ModelWords& m, int64_t deadline, bool same_lease) {
    m.access();
    m.w->deadline = deadline;
    if (same_lease) m.w->lease_until = deadline;
}

// A new lease for a new tenure of `worker` (floor), published as the host
// does it (apply_handover() before publish()), or, host_order false, in the
// wrong order: the deadline first.
Body new_lease(int32_t worker, int64_t floor, bool host_order) {
    return [worker, floor, host_order](ModelWords& m) {
        if (host_order) Lw::lose(m);
        m.w->next_lease_until = 6;
        if (!host_order) {
            m.lock();
            set_deadline(m, 6, false);
            m.unlock();
        }
        Lw::start(m, worker, floor);
        Lw::publish(m, kM + 9);
        if (host_order) {
            m.lock();
            set_deadline(m, 6, false);
            m.unlock();
        }
    };
}

std::vector<Script> lease_scripts() {
    return {
        {"paused, then back with a later deadline",
         [](ModelWords& m) {
             Lw::lose(m);
             m.lock();
             set_deadline(m, 6, true);
             m.op = Op::Lift;
             sc::lift(geo, m);
             m.op = Op::None;
             m.unlock();
         },
         false, true},
        {"lost, a new tenure of another worker id, then its lease", new_lease(7, kM + 2, true), true, true},
        {"lost, a new tenure of the same worker id, then its lease", new_lease(kW, kM - 1, true), true, true},
    };
}

}  // namespace

TEST(PositionCheck, LeasesThatChangeBesideTheTransitions) {
    for (const Start& st : starts())
        for (const Script& script : lease_scripts())
            for (const auto& callers : caller_sets()) {
                const Scenario s = make(st, script, callers, 1, 3, true);
                ASSERT_EQ(check(s).violation, "") << s.name;
            }
}

// The checker sees the order matter: a host that published a new lease's
// deadline before its tenure's word would let a stale word's swap pass the
// new deadline.
TEST(PositionCheck, FindsANewLeasePublishedBeforeItsTenure) {
    const Script wrong{"a new lease's deadline before its tenure", new_lease(7, kM + 2, false), true, true};
    std::string found;
    for (const Start& st : starts(false)) {  // every class, until one finds it
        for (const auto& callers : caller_sets()) {
            const Outcome o = check(make(st, wrong, callers, 1, 3, true));
            if (found.empty()) found = o.violation;
        }
        if (!found.empty()) break;
    }
    EXPECT_NE(found.find("after the lease had ended"), std::string::npos) << found;
}

// ---------------------------------------------------------------------------
// 1.2's protocol, as it was, under the same checker: it finds both holes.

namespace {

// 1.2's fence_ids_locked(): the reservation down to the word's millisecond,
// then the word's millisecond marked used up, and no swap when it was
// already (a full millisecond).
void fence_1_2(ModelWords& m) {
    m.lock();
    const uint64_t p = m.load_word();
    const int64_t ms = sc::packed_ms(geo, p);
    m.limit_reserved(ms);
    uint64_t cur = m.load_word();
    for (;;) {
        const uint64_t next = sc::pack_position(geo, sc::packed_ms(geo, cur), geo.max_sequence,
                                                sc::packed_worker(geo, cur));
        if (next == cur) {
            m.fence_without_swap(ms);
            break;
        }
        m.op = Op::Fence1_2;
        const bool swapped = m.cas_word(cur, next);
        m.op = Op::None;
        if (swapped) break;
    }
    m.unlock();
}

// 1.2's fast path: the lease checked once before the word, nothing after.
void fast_caller_1_2(ModelWords& m) {
    const int64_t deadline = m.lease_deadline_ns();
    if (deadline <= 0 || (deadline != sc::kNoDeadline && m.boot_ns() >= deadline)) return;
    uint64_t cur = m.load_word();
    const int64_t now = m.now_ms();
    const int64_t reserved = m.load_reserved();
    sc::FastNext f;
    if (!sc::fast_next(geo, cur, now, reserved, &f)) return;
    if (m.cas_word(cur, f.next)) m.returned(f.id, 1);
}

}  // namespace

TEST(PositionCheck, FindsTheFenceThatLeftAFullMillisecondUnchangedIn1_2) {
    const Start full{"", sc::pack_position(geo, kM, geo.max_sequence, kW), kM + 5, kM + 1};
    const Script shutdown{"1.2 shutdown barrier", fence_1_2, true};
    const std::pair<std::string, std::vector<Body>> one{"1.2 fast", {fast_caller_1_2}};
    const Outcome o = check(make(full, shutdown, one, 0, 0, false));
    EXPECT_NE(o.violation.find("fence"), std::string::npos) << o.violation;
    // From a word with sequence left, 1.2's fence swapped and held.
    const Start mid{"", sc::pack_position(geo, kM, 5, kW), kM + 5, kM + 1};
    EXPECT_EQ(check(make(mid, shutdown, one, 0, 0, false)).violation, "");
}

TEST(PositionCheck, FindsTheIdReturnedAfterTheLeaseEndedIn1_2) {
    const Start st{"", sc::pack_position(geo, kM, 5, kW), kM + 5, kM + 1};
    const Script stalled{"lease worker stopped", [](ModelWords&) {}, false};
    const std::pair<std::string, std::vector<Body>> one{"1.2 fast", {fast_caller_1_2}};
    const Outcome o = check(make(st, stalled, one, 0, 2, true));
    EXPECT_NE(o.violation.find("after the lease had ended"), std::string::npos) << o.violation;
}
