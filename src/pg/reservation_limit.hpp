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
// The end of the worker id's reservation in etcd (-1: none).
int64_t etcd_reserved_ms();
// Raises the etcd reservation to until_ms and publishes the limit; lock held.
void raise_etcd_reservation_locked(int64_t until_ms);

}  // namespace snowflake::pg
