#include "http_worker_id.hpp"

#include "layout.hpp"

namespace snowflake::core {

HttpWorkerIdCheck check_http_worker_id(int32_t http_worker_id, int32_t worker_id, bool leasing) noexcept {
    if (http_worker_id == kHttpWorkerIdOff) return HttpWorkerIdCheck::Ok;
    if (http_worker_id < 0 || http_worker_id > kMaxWorker) return HttpWorkerIdCheck::OutOfRange;
    // The durable reservation bounds both generators (one mark file, one
    // WAL record), but a leased worker id's tenure and its mark in the
    // coordinator are one worker id's: the HTTP one would need a lease too.
    if (leasing) return HttpWorkerIdCheck::Leasing;
    if (worker_id < 0) return HttpWorkerIdCheck::NoWorkerId;
    if (worker_id == http_worker_id) return HttpWorkerIdCheck::SameAsWorkerId;
    return HttpWorkerIdCheck::Ok;
}

}  // namespace snowflake::core
