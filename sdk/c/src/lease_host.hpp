// Leased worker ids: the lease driver (src/coord/lease_driver.hpp) in the
// generator's background thread, over a host (LeaseRunner) that publishes
// the lease into the generator's words.
#pragma once

#include "generator.hpp"

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

}  // namespace snowflake::sdk
