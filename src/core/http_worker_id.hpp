// snowflake.http_worker_id (issue 32): the HTTP endpoint's ids under a
// worker id of their own, issued by a second generator (a second position
// word, core/position.hpp's protocol over it) beside the node's static
// worker id, so that HTTP batches never take the SQL callers' sequence
// space. The rule of which values a node may run with is here; the glue's
// check hook (src/pg/guc.cpp) words the refusal.
#pragma once

#include "pure.hpp"

#include <cstdint>

namespace snowflake::core {

// The setting's value when it is off (the default).
constexpr int32_t kHttpWorkerIdOff = -1;

enum class HttpWorkerIdCheck {
    Ok,              // off, or a worker id of its own beside a static one
    OutOfRange,      // not -1 and not 0 to kMaxWorker
    Leasing,         // worker ids are leased: a second lease is not built
    NoWorkerId,      // no static worker id: nothing issues ids beside it
    SameAsWorkerId,  // the node's worker id: HTTP ids would share its sequence space
};

// Whether a node with static worker id worker_id (-1: unset) and leasing
// (a coordinator configured) may run with http_worker_id. The first rule
// broken is the answer, in the order of the enum.
HttpWorkerIdCheck check_http_worker_id(int32_t http_worker_id, int32_t worker_id, bool leasing) noexcept;

}  // namespace snowflake::core
