// Module entry point.

#include "snowflake.hpp"

extern "C" {
PG_MODULE_MAGIC;

void _PG_init(void);

void _PG_init(void) {
    // Without shared_preload_libraries there is no shared state: the id
    // generator refuses to run, everything that needs no shared state works.
    if (!process_shared_preload_libraries_in_progress) return;

    sf::preloaded = true;
    sf::define_settings();
    sf::install_shmem_hooks();
    sf::register_mark_worker();
}
}
