// The layout of a generator's ids (sf_config.layout) and of
// sf_decode_layout(): the text the extension's snowflake.layout takes, read
// into the geometry ids are issued in (core::parse_layout() and
// core::node_geometry(), as the extension reads it), and the default range
// of leased worker ids in it.
#pragma once

#include "api.hpp"

#include "core/layout.hpp"

#include <cstdint>

namespace snowflake::sdk {

// text: NULL or "" for twitter. SF_OK with *out, or SF_ERR_INVALID set
// (the message names `what`, the argument: "layout").
sf_code read_layout(const char* text, const char* what, core::Geometry* out) noexcept;

// The default range a leased worker id is chosen from: the upper half of
// the layout's worker ids (512..1023 for twitter, 32..63 for js-safe), the
// lower half left to the database nodes.
constexpr int32_t default_worker_min(const core::Geometry& g) noexcept { return (g.max_worker + 1) / 2; }
constexpr int32_t default_worker_max(const core::Geometry& g) noexcept { return g.max_worker; }

}  // namespace snowflake::sdk
