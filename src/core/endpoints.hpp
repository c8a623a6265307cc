// Parsing of snowflake.etcd_endpoints into the normal form the etcd client
// (src/etcd/client.hpp) takes. Pure; the reason for a refused value is a
// sentence for the GUC's error detail.
#pragma once

#include "pure.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace snowflake::core {

// snowflake.etcd_endpoints: "http://host:port[,http://host:port...]"; spaces
// around entries are allowed. host is a name, an IPv4 address or [IPv6].
// An empty (or all-space) string gives no endpoints (leasing off).
constexpr size_t kMaxEndpoints = 16;
// Parses text into normal "http://host:port" entries; false with *reason
// (a sentence) when an entry is invalid or there are too many.
bool parse_endpoints(std::string_view text, std::vector<std::string>* out,
                     std::string* reason) noexcept;

}  // namespace snowflake::core
