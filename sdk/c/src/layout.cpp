// The layout of sf_config.layout and sf_decode_layout() (layout.hpp).

#include "layout.hpp"
#include "error.hpp"

#include "core/id_layout.hpp"

#include <cstdio>

namespace snowflake::sdk {

namespace {

constexpr const char* kLayoutHint =
    "Give a profile (twitter, js-safe) or the fields from the top bit down, such as \"time 41, worker 8, "
    "sequence 14\", as the database nodes' snowflake.layout.";

}  // namespace

sf_code read_layout(const char* text, const char* what, core::Geometry* out) noexcept {
    if (text == nullptr || text[0] == '\0') {
        *out = core::kTwitter;
        return SF_OK;
    }
    core::IdLayout l;
    char why[320] = "";
    if (!core::parse_layout(text, &l, why, sizeof why) || !core::node_geometry(l, out, why, sizeof why)) {
        char message[96];
        snprintf(message, sizeof message, "%s is invalid", what);
        return fail_detail(SF_ERR_INVALID, message, kLayoutHint, "\"%s\": %s.", text, why);
    }
    return SF_OK;
}

}  // namespace snowflake::sdk
