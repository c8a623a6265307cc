// Parsing of snowflake.epoch: a strict ISO 8601 timestamp with an explicit
// UTC offset, so that its meaning never depends on the server's time zone.
//
//   YYYY-MM-DD[(T| )HH:MM[:SS[.ffffff]]][ ](Z|UTC|GMT|(+|-)HH[[:]MM])
//
// The year has four digits (0001-9999); the time of day defaults to
// midnight; the offset is required and at most 15:59. Names of time zones
// (Europe/Berlin) and abbreviations other than Z, UTC and GMT are not
// accepted: say "+01" instead.
#pragma once

#include "pure.hpp"

#include "time.hpp"  // days_from_civil, civil_from_days

#include <cstdint>

namespace snowflake::core {

// The epoch of snowflake.epoch when it is not set (the GUC's boot value and
// the default of snowflake-inspect).
constexpr const char* kDefaultEpoch = "2025-01-01 00:00:00+00";

enum class EpochParse {
    Ok,
    Syntax,          // not of the form above
    FieldRange,      // a month, day, hour, minute, second or offset out of range
    MissingOffset,   // no UTC offset
};

// Parses text into microseconds since 1970-01-01 00:00:00 UTC.
EpochParse parse_epoch(const char* text, int64_t* unix_us) noexcept;
const char* epoch_parse_text(EpochParse p) noexcept;

}  // namespace snowflake::core
