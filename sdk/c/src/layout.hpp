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

// The largest worker id a lease can hold: the layout's, at most
// core::kMaxWorker (1023). The registry's worker keys and the lease's choice
// of an id (core/lease.hpp, core/coord_schema.hpp) know ids 0..1023 in every
// layout, as a node's snowflake.lease_worker_ids does; a wider worker field's
// higher ids are for static worker ids.
constexpr int32_t max_leased_worker(const core::Geometry& g) noexcept {
    return g.max_worker < core::kMaxWorker ? g.max_worker : core::kMaxWorker;
}

// The default range a leased worker id is chosen from: the upper half of
// the ids a lease can hold (512..1023 for twitter and wider layouts, 32..63
// for js-safe), the lower half left to the database nodes.
constexpr int32_t default_worker_min(const core::Geometry& g) noexcept { return (max_leased_worker(g) + 1) / 2; }
constexpr int32_t default_worker_max(const core::Geometry& g) noexcept { return max_leased_worker(g); }

}  // namespace snowflake::sdk
