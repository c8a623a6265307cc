// guc.cpp: the snowflake.* settings and the epoch they define.
#pragma once

#include "clock.hpp"

#include "../core/layout.hpp"

namespace snowflake::pg {

extern int worker_id;            // -1 while unset
extern int clock_tolerance_ms;
extern int clock_backwards;      // core::ClockPolicy: snowflake.clock_backwards
extern int max_clock_error_ms;   // 0: the kernel's clock state is not checked
extern char* etcd_endpoints;     // "" (or NULL): no leasing
extern int lease_ttl_s;
extern char* lease_prefix;
extern int lease_worker_min;  // snowflake.lease_worker_ids: the range a free id is leased from
extern int lease_worker_max;
extern bool preloaded;           // loaded through shared_preload_libraries
extern char* zookeeper_hosts;    // "" (or NULL): not used
// Worker ids are leased from etcd (snowflake.etcd_endpoints is set) or from
// ZooKeeper (snowflake.zookeeper_hosts is set; both set is a FATAL at start).
bool leasing_configured();
bool etcd_configured();
bool zookeeper_configured();
const char* coordinator_name();  // "etcd", "zookeeper" or "none"
// For messages: "etcd" or "ZooKeeper", the setting that names it, its value.
const char* coordinator_display();
const char* coordinator_setting();
const char* coordinator_hosts();
extern char* http_listen;        // "host:port" of the HTTP endpoint, "" when off
extern char* http_token;         // Bearer token(s) the HTTP endpoint requires, "" for none
extern char* http_token_file;    // a file with the token(s), "" for none
extern bool http_allow_unauthenticated;  // no token beyond loopback is allowed
extern int http_max_ids_per_second;      // 0: no ceiling
extern int http_worker_id;               // the HTTP endpoint's own worker id, -1 (off): worker_id's
constexpr int kDefaultHttpMaxIdsPerSecond = 2048000;  // half of 4,096 ids a millisecond
// _PG_init, while preloading: defines every setting; a bad value given for
// one before stops the server (FATAL).
void define_settings();
// FATAL if both snowflake.etcd_endpoints and snowflake.zookeeper_hosts are set.
void check_one_coordinator();
// The postmaster, once at start: a clock outside the epoch's range is a
// WARNING (ids are refused with SF002 while it lasts), never a failed start.
void warn_if_clock_outside_epoch();
// snowflake.layout's text, and the geometry the id path issues ids in. Not
// preloaded: the value the session started with, as current_epoch().
extern char* layout_setting;
extern bool accept_layout_change;  // a mark of another layout is read (mark_file.cpp)
extern int sequence_spread;        // 0 (off) or the spread of a millisecond's first sequence
const core::Geometry& node_geometry();
const char* layout_setting_name();  // "snowflake.layout"
bool lease_worker_ids_default();    // snowflake.lease_worker_ids is its default, every id
// _PG_init: FATAL when snowflake.worker_id, snowflake.http_worker_id or
// snowflake.lease_worker_ids does not fit the layout's worker field (the
// default lease range is narrowed to the layout's worker ids).
void check_layout_fits();
// The epoch in effect, as a TimestampTz. Without preload it is the value the
// session started with (a SET is ignored), parsed the same way, or the default.
TimestampTz current_epoch();
// The epoch in Unix microseconds; an id-space millisecond as a timestamp.
inline int64_t epoch_unix_us() { return current_epoch() + kPgEpochUnixUs; }
inline TimestampTz ms_to_timestamptz(int64_t rel_ms) { return current_epoch() + rel_ms * 1000; }

}  // namespace snowflake::pg
