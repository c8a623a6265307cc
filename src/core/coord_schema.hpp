// The key and value schema of leasing, in etcd and in ZooKeeper alike: the
// keys under snowflake.lease_prefix (<prefix>/workers/<id>,
// <prefix>/marks/<id>, <prefix>/fleet), the text of a mark value, the node
// identity a worker key holds (who holds an id, and whether that is this
// very instance) and the fleet's settings. Pure: text in, text out; the
// coordinator calls are src/etcd's and src/zk's.
#pragma once

#include "pure.hpp"

#include "layout.hpp"

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
std::string fleet_key(std::string_view prefix) noexcept;                   // <prefix>/fleet
// The id of a key under <prefix>/workers/, or -1 if it is not one.
int32_t parse_worker_key(std::string_view prefix, std::string_view key) noexcept;
// snowflake.lease_prefix: starts with '/', no trailing '/', printable ASCII
// without spaces, at most 200 bytes. On false, *reason is a sentence.
bool check_lease_prefix(std::string_view prefix, std::string* reason) noexcept;

// ---------------------------------------------------------------------------
// Mark values

// Text of the coordinator's mark: "<ms> reserved" or "<ms> exact".
std::string encode_coord_mark(const Mark& m) noexcept;
// The mark of that text; false for anything else (a later version's format).
bool decode_coord_mark(std::string_view text, Mark* out) noexcept;

// ---------------------------------------------------------------------------
// The node identity stored in a worker key: one line of text,
//   snowflake-node host=<host> port=<port> system_identifier=<u64>
//     instance=<hex> started_unix_ms=<i64> data_directory=<path> lease_ttl_ms=<i64>
//     [runtime=<word> pid=<i64>]   (an application process: port=0)
// Unknown fields are ignored when decoding (later versions may add some,
// as earlier versions ignore instance and lease_ttl_ms); instance,
// data_directory and lease_ttl_ms are absent from keys of earlier versions
// (up to 1.2 no instance and no lease_ttl_ms, 1.0 no data directory
// either), and are read as "" or 0.

struct NodeIdentity {
    std::string host;                // control characters and spaces become '_'
    int32_t port = 0;                // 1..65535
    uint64_t system_identifier = 0;  // pg_control's
    // This run of the server: a nonce made at each start (random_instance()),
    // kept with the system identifier. A clone of the server (a copied VM, a
    // container with a copied data directory) has every other field the
    // same, never this one. "" if absent.
    std::string instance;
    int64_t started_unix_ms = 0;  // postmaster start time
    std::string data_directory;   // as host: control characters and spaces become '_'; "" if absent
    // The TTL of the lease that holds the key, as the coordinator granted it
    // (etcd: the lease's; ZooKeeper: the session timeout); 0 if unknown.
    int64_t lease_ttl_ms = 0;
    // An application process of the C library (sdk/c) and its bindings, not
    // a database node: its runtime ("c", "node", "python") and process id.
    // Such a process writes port 0, system_identifier 0 and no
    // data_directory, so it never has a node's name (classify_holder():
    // never SameName, never revoked as "this node's previous run"); its
    // start time is the process's. "" and 0 for a database node.
    std::string runtime;
    int64_t pid = 0;
};
// The instance text of 16 random bytes from the host's strong random source:
// 32 lower-case hex digits.
std::string random_instance(const unsigned char (&random)[16]) noexcept;

// Who a worker key's holder is, to a node that finds the key it claims held
// by another lease.
enum class HolderKind {
    Other,  // another node
    // Another run with this node's name (host, port, system identifier and
    // data directory), not this one: this node's previous run, or a live
    // clone. Nothing in a name proves it dead: its lease is left to expire.
    SameName,
    ThisRun,  // this very instance (same instance, same system identifier): an earlier lease of this run
};
HolderKind classify_holder(const NodeIdentity& holder, const NodeIdentity& me) noexcept;
// The one-line text of an identity (the value of a worker key).
std::string encode_node_identity(const NodeIdentity& n) noexcept;
// Reads that text; false if it is not an identity.
bool decode_node_identity(std::string_view text, NodeIdentity* out) noexcept;
// "host db1 port 5432 (system identifier 7312..., started 2026-12-01 03:44:47 UTC)";
// for a value that is not an identity, a quoted, truncated copy of it.
std::string describe_holder(std::string_view value) noexcept;
// "instance 3f9a1c2e (started 2026-12-01 03:44:47 UTC)": the first eight
// digits of the instance ("instance (none recorded)" for a key of a version
// that wrote none).
std::string describe_instance(const NodeIdentity& n) noexcept;
// "2025-01-01 00:00:00 UTC" (with ".ffffff" when the instant has microseconds).
std::string utc_text(int64_t unix_us) noexcept;

// ---------------------------------------------------------------------------
// The fleet's settings: the settings every node that leases under a prefix
// must share, recorded in <prefix>/fleet (persistent: etcd, a key without a
// lease; ZooKeeper, a persistent znode) by the first node that leases, and
// compared by each node at each new lease. One line of text,
//   snowflake-fleet epoch_unix_us=<i64>[ layout=<time>/<worker>/<sequence>]
// The epoch (snowflake.epoch, in Unix microseconds: the instant, not its
// spelling) and the bit layout (snowflake.layout, its widths), written only
// when it is not twitter, so that a key of a twitter fleet reads as before
// and a node of 1.2 does not lease in a fleet of another layout. A field a
// node does not know is a setting it cannot check, so it does not lease
// (FleetCheck::Unreadable); a later setting adds a field the same way.

struct FleetSettings {
    int64_t epoch_unix_us = 0;
    Geometry layout = kTwitter;
};
std::string encode_fleet_settings(const FleetSettings& f) noexcept;

enum class FleetCheck {
    Agree,       // ids may be leased
    Differ,      // a setting differs: no lease
    Unreadable,  // not the text above, or a field this version does not know: no lease
};
// Compares the recorded text (of key, for the sentence) with this node's
// settings; unless they agree, *sentence says how, naming both values.
FleetCheck check_fleet_settings(std::string_view recorded, const FleetSettings& mine, std::string_view key,
                                std::string* sentence) noexcept;

}  // namespace snowflake::core
