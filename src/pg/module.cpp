// Module entry point.

#include "snowflake.hpp"

extern "C" {
PG_MODULE_MAGIC;

void _PG_init(void);

void _PG_init(void) {
    // Without shared_preload_libraries there is no shared state: the id
    // generator refuses to run, everything that needs no shared state works.
    if (!process_shared_preload_libraries_in_progress) return;

    snowflake::pg::preloaded = true;
    snowflake::pg::define_settings();
    snowflake::pg::check_one_coordinator();
    snowflake::pg::warn_if_clock_outside_epoch();
    snowflake::pg::install_shmem_hooks();
    snowflake::pg::register_wal_rmgr();
    snowflake::pg::register_mark_worker();
    if (snowflake::pg::leasing_configured()) snowflake::pg::register_lease_worker();
    if (snowflake::pg::http_listen != nullptr && snowflake::pg::http_listen[0] != '\0')
        snowflake::pg::register_http_worker();
}
}
