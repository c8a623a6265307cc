// reservation_limit.cpp: the demand for a reservation and the published
// limit ids may be issued up to.
#pragma once

#include "pg_headers.hpp"

namespace snowflake::pg {

// Asks the workers for a reservation covering ms (any process, no lock).
void raise_demand(int64_t ms);
// The latest millisecond asked for (-1: none).
int64_t demand_ms();
// Publishes min(local, coordinator) in reserved_until_ms; lock held.
void publish_reservation_locked();
// The end of the worker id's reservation in the coordinator (-1: none).
int64_t coord_reserved_ms();
// Raises the coordinator's reservation to until_ms and publishes the limit;
// lock held.
void raise_coord_reservation_locked(int64_t until_ms);

}  // namespace snowflake::pg
