// lease_worker.cpp: the process that leases the worker id from etcd.
#pragma once

namespace snowflake::pg {

// _PG_init, when leasing is configured: registers the lease worker.
void register_lease_worker();

}  // namespace snowflake::pg
