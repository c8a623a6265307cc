// PostgreSQL's headers as the glue uses them, in one place, with the
// version differences (compat.hpp) and snowflake's own SQLSTATEs.
//
// PostgreSQL defines macros (ERROR, LOG, _, snprintf, ...) that break C++
// standard headers included after it. So every glue header includes the C++
// standard headers it needs first and this one last; and every glue source
// includes the C++ standard headers and the core's (src/core) first, then
// the glue's headers, then any further PostgreSQL header inside extern "C".
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#else
#include "storage/backendid.h"
#endif
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#if PG_VERSION_NUM < 150000
#include "postmaster/autovacuum.h"
#include "replication/walsender.h"
#endif
}

#include "compat.hpp"

// Dedicated SQLSTATEs, documented in docs/reference.md.
#define ERRCODE_SF_CLOCK_BEHIND MAKE_SQLSTATE('S', 'F', '0', '0', '1')
#define ERRCODE_SF_CLOCK_OUT_OF_RANGE MAKE_SQLSTATE('S', 'F', '0', '0', '2')
#define ERRCODE_SF_NO_LEASE MAKE_SQLSTATE('S', 'F', '0', '0', '3')
#define ERRCODE_SF_CLOCK_UNHEALTHY MAKE_SQLSTATE('S', 'F', '0', '0', '4')
