// uuidv7.cpp: UUIDv7 values of this process's ascending clock.
#pragma once

#include "../core/uuid.hpp"

namespace snowflake::pg {

// The next UUIDv7 of this process's ascending clock; raises an error
// (ereport) for a clock outside the UUIDv7 range.
snowflake::core::Uuid new_uuidv7();

}  // namespace snowflake::pg
