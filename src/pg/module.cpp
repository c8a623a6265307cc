// The module's entry point: _PG_init() sets up what a preloaded library
// brings (settings, shared memory, the WAL resource manager, the workers).

#include "../core/clock_health.hpp"
#include "../core/generator.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/stats_snapshot.hpp"
#include "guc.hpp"
#include "http_worker.hpp"
#include "lease_worker.hpp"
#include "mark_worker.hpp"
#include "shmem.hpp"
#include "wal.hpp"

extern "C" {
PG_MODULE_MAGIC;

void _PG_init(void);

// Called when the library is loaded.
void _PG_init(void) {
    // Without shared_preload_libraries there is no shared state: the id
    // generator refuses to run, everything that needs no shared state works.
    if (!process_shared_preload_libraries_in_progress) return;

    snowflake::pg::preloaded = true;
    snowflake::pg::define_settings();
    snowflake::pg::check_one_coordinator();
    snowflake::pg::check_layout_fits();
    snowflake::pg::warn_if_clock_outside_epoch();
    snowflake::pg::install_shmem_hooks();
    snowflake::pg::register_wal_rmgr();
    snowflake::pg::register_mark_worker();
    if (snowflake::pg::leasing_configured()) snowflake::pg::register_lease_worker();
    if (snowflake::pg::http_listen != nullptr && snowflake::pg::http_listen[0] != '\0')
        snowflake::pg::register_http_worker();
}
}
