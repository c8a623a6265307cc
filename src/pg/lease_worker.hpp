// lease_worker.cpp: the process that leases the worker id from etcd.
#pragma once

namespace snowflake::pg {

// _PG_init, when leasing is configured: registers the lease worker and
// draws this run's instance (core::NodeIdentity::instance) for it.
void register_lease_worker();

}  // namespace snowflake::pg
