// Leased worker ids: the lease driver (src/coord/lease_driver.hpp) in the
// generator's background thread, over a host (LeaseRunner) that publishes
// the lease into the generator's words.
#pragma once

#include "generator.hpp"

#include "core/coordinator.hpp"

#include <memory>

namespace snowflake::sdk {

// sf_open with a coordinator: the driver and its thread started (ids fail
// with SF003 until a worker id is held). SF_OK, or the error set.
sf_code open_leased(sf_generator* g) noexcept;
// sf_close: ids fenced, the exact mark handed over, the lease revoked
// (LeaseDriver::shutdown()), the thread joined. False if a call of the
// shutdown failed (the lease then expires by itself).
bool close_leased(sf_generator* g) noexcept;
// A fork child's first call: a lease of its own (a new driver, coordinator
// connection and thread; the parent's are left alone). g->mu held. False
// when it could not be started.
bool start_child_lease(sf_generator* g) noexcept;
// g->mu held: a caller waits for the coordinator's reservation; the
// background thread takes its next turn at once.
void wake_runner(sf_generator* g) noexcept;
// g->mu held, the lease refused for the fleet's settings
// (core::LeaseError::FleetSettings): SF_ERR_FLEET set, its detail the
// lease's sentence, which names both epochs or both layouts.
sf_code refuse_fleet(const sf_generator* g) noexcept;

// Tests only (test/sdk/fake_coordinator_test.cpp, linked with the static
// library): every lease from now on is taken from the coordinator f makes
// (an in-memory one) instead of etcd's or ZooKeeper's; null restores them.
// Not exported from the shared library.
using CoordinatorFactory = std::unique_ptr<core::Coordinator> (*)(void* arg);
void set_coordinator_factory(CoordinatorFactory f, void* arg) noexcept;

}  // namespace snowflake::sdk
