// fork(): the registry of live generators and the pthread_atfork handlers
// that keep a child off its parent's worker id. Before a fork every
// generator's mutex is taken (so the child's copy is consistent); in the
// child each copy is fenced, its deadline cleared (its next call fails at
// once on the fast path, without a system call per id) and marked forked:
// the parent's background thread does not exist there, and its lease, its
// sockets and its mark file are never touched (the objects are left, not
// destroyed: a ZooKeeper handle would close the parent's session).
//
// The fork gate (generator.hpp) is taken exclusively first of all, so that
// no lease thread is inside its coordinator's client (name resolution,
// libcurl, libzookeeper) when the process is copied: a lock such a call held
// (glibc's resolver's, for one) would stay locked in the child for good. It
// is a mutex, a count and a condition variable of its own, so that the child
// can start it afresh (no lease thread of the parent exists there).

#include "generator.hpp"

#include <pthread.h>
#include <unistd.h>

#include <mutex>
#include <new>
#include <vector>

namespace snowflake::sdk {

namespace {

std::mutex g_registry_mu;
std::vector<sf_generator*>* g_registry = nullptr;  // never freed: a child may fork again
std::once_flag g_atfork_once;

struct Gate {
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    int shared = 0;         // lease threads inside coordinator I/O
    int forks_waiting = 0;  // prepare handlers waiting: new shared holders wait
    bool forking = false;   // held exclusively (between prepare and parent/child)
};
Gate g_gate;

void gate_lock_exclusive() noexcept {
    pthread_mutex_lock(&g_gate.mu);
    g_gate.forks_waiting++;
    while (g_gate.forking || g_gate.shared > 0) pthread_cond_wait(&g_gate.cv, &g_gate.mu);
    g_gate.forks_waiting--;
    g_gate.forking = true;
    pthread_mutex_unlock(&g_gate.mu);
}

void gate_unlock_exclusive() noexcept {
    pthread_mutex_lock(&g_gate.mu);
    g_gate.forking = false;
    pthread_cond_broadcast(&g_gate.cv);
    pthread_mutex_unlock(&g_gate.mu);
}

void prepare() noexcept {
    gate_lock_exclusive();  // first: a lease thread holding it takes a generator's mutex
    g_registry_mu.lock();
    if (g_registry != nullptr)
        for (sf_generator* g : *g_registry) g->mu.lock();
}

void parent() noexcept {
    if (g_registry != nullptr)
        for (sf_generator* g : *g_registry) g->mu.unlock();
    g_registry_mu.unlock();
    gate_unlock_exclusive();
}

void child() noexcept {
    if (g_registry != nullptr) {
        for (sf_generator* g : *g_registry) {
            Words words(*g);
            g->deadline_ns.store(0);
            (void)core::fence(g->settings.geometry, words);
            if (!g->forked) g->owner_pid = getppid();  // the parent's, for messages
            g->forked = true;
            g->thread = nullptr;  // the parent's thread: not in this process
            g->runner = nullptr;  // the parent's lease: left alone
            g->mu.unlock();
            // Waiters of the parent's threads do not exist here.
            new (&g->cv) std::condition_variable();
        }
    }
    g_registry_mu.unlock();
    // No lease thread exists here, and no waiter: the gate starts afresh
    // (its mutex may have been held by a thread of the parent's).
    new (&g_gate) Gate();
}

}  // namespace

void fork_gate_enter() noexcept {
    pthread_mutex_lock(&g_gate.mu);
    while (g_gate.forking || g_gate.forks_waiting > 0) pthread_cond_wait(&g_gate.cv, &g_gate.mu);
    g_gate.shared++;
    pthread_mutex_unlock(&g_gate.mu);
}

void fork_gate_leave() noexcept {
    pthread_mutex_lock(&g_gate.mu);
    if (--g_gate.shared == 0) pthread_cond_broadcast(&g_gate.cv);
    pthread_mutex_unlock(&g_gate.mu);
}

void register_generator(sf_generator* g) noexcept {
    std::call_once(g_atfork_once, [] { pthread_atfork(prepare, parent, child); });
    std::lock_guard<std::mutex> lock(g_registry_mu);
    if (g_registry == nullptr) g_registry = new std::vector<sf_generator*>();
    g_registry->push_back(g);
}

void unregister_generator(sf_generator* g) noexcept {
    std::lock_guard<std::mutex> lock(g_registry_mu);
    if (g_registry == nullptr) return;
    for (size_t i = 0; i < g_registry->size(); i++)
        if ((*g_registry)[i] == g) {
            (*g_registry)[i] = g_registry->back();
            g_registry->pop_back();
            return;
        }
}

}  // namespace snowflake::sdk
