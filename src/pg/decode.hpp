// decode.cpp: the checks the decoders and constructors of ids share, those of
// the fixed layout (decode.cpp) and those of any layout (layouts.cpp), so that
// both refuse the same input with the same error.
#pragma once

#include "pg_headers.hpp"

namespace snowflake::pg {

// An error (22023) for a negative id: Snowflake ids are positive bigints.
void refuse_negative_id(int64 id);
// An error (22008) for an infinite timestamp; `what` names the argument.
void require_finite(TimestampTz ts, const char* what, const char* hint);
// The timestamp ms milliseconds after epoch: an error (22008) for an infinite
// epoch or a time past the range of timestamptz.
TimestampTz time_after_epoch(int64 ms, TimestampTz epoch);
// The (ts, worker_id, sequence) row a decoder returns.
Datum decoded_row(FunctionCallInfo fcinfo, TimestampTz ts, int32 worker, int32 sequence);

}  // namespace snowflake::pg
