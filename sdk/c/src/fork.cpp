// fork(): the registry of live generators and the pthread_atfork handlers
// that keep a child off its parent's worker id. Before a fork every
// generator's mutex is taken (so the child's copy is consistent); in the
// child each copy is fenced, its deadline cleared (its next call fails at
// once on the fast path, without a system call per id) and marked forked:
// the parent's background thread does not exist there, and its lease, its
// sockets and its mark file are never touched (the objects are left, not
// destroyed: a ZooKeeper handle would close the parent's session).

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

void prepare() noexcept {
    g_registry_mu.lock();
    if (g_registry != nullptr)
        for (sf_generator* g : *g_registry) g->mu.lock();
}

void parent() noexcept {
    if (g_registry != nullptr)
        for (sf_generator* g : *g_registry) g->mu.unlock();
    g_registry_mu.unlock();
}

void child() noexcept {
    if (g_registry != nullptr) {
        for (sf_generator* g : *g_registry) {
            Words words(*g);
            g->deadline_ns.store(0);
            (void)core::fence(words);
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
}

}  // namespace

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
