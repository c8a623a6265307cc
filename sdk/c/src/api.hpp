// The C API's header with every sf_* function exported: the library is
// built with -fvisibility=hidden, and only what snowflake_ids.h declares is
// seen from outside it.
#pragma once

#pragma GCC visibility push(default)
#include "snowflake_ids.h"
#pragma GCC visibility pop
