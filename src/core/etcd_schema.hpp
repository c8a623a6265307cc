// The etcd key and value schema of leasing: the keys under
// snowflake.lease_prefix (<prefix>/workers/<id>, <prefix>/marks/<id>), the
// text of a mark value, and the node identity a worker key holds (who holds
// an id, and whether that is this very node's previous run). Pure: text in,
// text out; the etcd calls are src/etcd's.
#pragma once

#include "pure.hpp"

#include "mark.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace snowflake::core {

// ---------------------------------------------------------------------------
// Keys

std::string worker_key(std::string_view prefix, int32_t worker) noexcept;  // <prefix>/workers/<id>
std::string workers_prefix(std::string_view prefix) noexcept;              // <prefix>/workers/
std::string mark_key(std::string_view prefix, int32_t worker) noexcept;    // <prefix>/marks/<id>
// The id of a key under <prefix>/workers/, or -1 if it is not one.
int32_t parse_worker_key(std::string_view prefix, std::string_view key) noexcept;
// snowflake.lease_prefix: starts with '/', no trailing '/', printable ASCII
// without spaces, at most 200 bytes. On false, *reason is a sentence.
bool check_lease_prefix(std::string_view prefix, std::string* reason) noexcept;

// ---------------------------------------------------------------------------
// Mark values

// Text of the etcd mark: "<ms> reserved" or "<ms> exact".
std::string encode_etcd_mark(const Mark& m) noexcept;
// The mark of that text; false for anything else (a later version's format).
bool decode_etcd_mark(std::string_view text, Mark* out) noexcept;

// ---------------------------------------------------------------------------
// The node identity stored in a worker key: one line of text,
//   snowflake-node host=<host> port=<port> system_identifier=<u64> started_unix_ms=<i64>
//     data_directory=<path>
// Unknown fields are ignored when decoding (later versions may add some).

struct NodeIdentity {
    std::string host;                // control characters and spaces become '_'
    int32_t port = 0;                // 1..65535
    uint64_t system_identifier = 0;  // pg_control's
    int64_t started_unix_ms = 0;     // postmaster start time
    std::string data_directory;      // as host: control characters and spaces become '_'; "" if absent
};
// Both name the same node: host, port, system identifier and a data
// directory (which older versions did not record) all equal.
bool same_node(const NodeIdentity& a, const NodeIdentity& b) noexcept;
// The one-line text of an identity (the value of a worker key).
std::string encode_node_identity(const NodeIdentity& n) noexcept;
// Reads that text; false if it is not an identity.
bool decode_node_identity(std::string_view text, NodeIdentity* out) noexcept;
// "host db1 port 5432 (system identifier 7312..., started 2026-12-01 03:44:47 UTC)";
// for a value that is not an identity, a quoted, truncated copy of it.
std::string describe_holder(std::string_view value) noexcept;

}  // namespace snowflake::core
