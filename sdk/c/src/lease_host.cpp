// Leased worker ids (lease_host.hpp): not in this commit yet.

#include "lease_host.hpp"
#include "error.hpp"

namespace snowflake::sdk {

sf_code open_leased(sf_generator*) noexcept {
    return fail(SF_ERR_INVALID, "leasing is not available in this build yet", nullptr,
                "Use a static worker_id with a mark_file.");
}
bool close_leased(sf_generator*) noexcept { return true; }
bool start_child_lease(sf_generator*) noexcept { return false; }

}  // namespace snowflake::sdk
