// Every PostgreSQL version difference the glue depends on, in one place.
// Tested against PostgreSQL 15, 17 and 18 (README, "Supported PostgreSQL
// versions"); 16 builds but is not tested. Versions before 15 are not
// supported: wal.cpp calls RegisterCustomRmgr() (15+). The branches for 13/14
// below are left from earlier releases and are neither built nor tested.
#pragma once

#if PG_VERSION_NUM < 150000
#error "snowflake needs PostgreSQL 15 or later (the high-water mark's WAL records need custom resource managers)"
#endif

// PostgreSQL 15 added shmem_request_hook; before it, shared memory and LWLock
// tranches were requested directly from _PG_init.
#if PG_VERSION_NUM >= 150000
#define SF_HAVE_SHMEM_REQUEST_HOOK 1
#else
#define SF_HAVE_SHMEM_REQUEST_HOOK 0
#endif

// MarkGUCPrefixReserved() is the PostgreSQL 15 name of EmitWarningsOnPlaceholders().
#if PG_VERSION_NUM < 150000
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

// A GUC check hook's *extra must come from the allocator the GUC machinery
// frees it with: malloc() up to 15, guc_malloc() (a memory context) from 16.
static inline void* sf_guc_malloc(size_t size) {
#if PG_VERSION_NUM >= 160000
    return guc_malloc(LOG, size);
#else
    return malloc(size);
#endif
}

// The number of backend slots, and this process's slot (1-based; 0 when it
// has none): PostgreSQL 17 replaced backend ids with proc numbers.
// Before 15, MaxBackends is not yet computed when _PG_init requests memory.
static inline int sf_backend_slots(void) {
#if PG_VERSION_NUM >= 150000
    return MaxBackends;
#else
    return MaxConnections + autovacuum_max_workers + 1 + max_worker_processes + max_wal_senders;
#endif
}
static inline int sf_my_backend_slot(void) {
#if PG_VERSION_NUM >= 170000
    return MyProcNumber == INVALID_PROC_NUMBER ? 0 : MyProcNumber + 1;
#else
    return MyBackendId == InvalidBackendId ? 0 : MyBackendId;
#endif
}

// A WaitEventSet for a background worker's lifetime: PostgreSQL 17 ties it to
// a resource owner (none here: it lives until the process exits), earlier
// versions to a memory context.
static inline WaitEventSet* sf_create_wait_event_set(int nevents) {
#if PG_VERSION_NUM >= 170000
    return CreateWaitEventSet(NULL, nevents);
#else
    return CreateWaitEventSet(TopMemoryContext, nevents);
#endif
}
