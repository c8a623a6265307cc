// snowflake.* settings.
//
// PostgreSQL applies a value given for an extension's setting before the
// extension defines it only with a WARNING, falling back to the default on a
// bad value. For the worker id or the epoch that would silently change the id
// space, so at server start every value given for a snowflake.* setting is
// checked again and a bad one stops the server with a FATAL.

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <arpa/inet.h>

#include "../core/backup.hpp"
#include "../core/clock_health.hpp"
#include "../core/coord_schema.hpp"
#include "../core/endpoints.hpp"
#include "../core/epoch.hpp"
#include "../core/generator.hpp"
#include "../core/http_api.hpp"
#include "../core/http_worker_id.hpp"
#include "../core/id_layout.hpp"
#include "../core/lease.hpp"
#include "../zk/hosts.hpp"
#include "guc.hpp"
#include "clock.hpp"
#include "layout_glue.hpp"
#include "ereport_guard.hpp"

extern "C" {
#include "utils/memutils.h"
}

namespace snowflake::pg {
namespace {

// Every snowflake.* setting. Its name is written once, here: the definition
// in define_settings(), the check at start of a value given before it, and
// every message of this file that names it take it from this table.
enum class Setting {
    WorkerId,
    Epoch,
    Layout,
    AcceptLayoutChange,
    SequenceSpread,
    ClockToleranceMs,
    MaxClockErrorMs,
    EtcdEndpoints,
    ZookeeperHosts,
    LeaseTtl,
    LeasePrefix,
    LeaseWorkerIds,
    ClockBackwards,
    HttpListen,
    HttpToken,
    HttpTokenFile,
    HttpAllowUnauthenticated,
    HttpMaxIdsPerSecond,
    HttpWorkerId,
};
struct SettingName {
    Setting setting;
    const char* name;
    bool secret;  // its value is never repeated in an error
};
constexpr SettingName kSettings[] = {
    {Setting::WorkerId, "snowflake.worker_id", false},
    {Setting::Epoch, "snowflake.epoch", false},
    {Setting::Layout, "snowflake.layout", false},
    {Setting::AcceptLayoutChange, "snowflake.accept_layout_change", false},
    {Setting::SequenceSpread, "snowflake.sequence_spread", false},
    {Setting::ClockToleranceMs, "snowflake.clock_tolerance_ms", false},
    {Setting::MaxClockErrorMs, "snowflake.max_clock_error_ms", false},
    {Setting::EtcdEndpoints, "snowflake.etcd_endpoints", false},
    {Setting::ZookeeperHosts, "snowflake.zookeeper_hosts", false},
    {Setting::LeaseTtl, "snowflake.lease_ttl", false},
    {Setting::LeasePrefix, "snowflake.lease_prefix", false},
    {Setting::LeaseWorkerIds, "snowflake.lease_worker_ids", false},
    {Setting::ClockBackwards, "snowflake.clock_backwards", false},
    {Setting::HttpListen, "snowflake.http_listen", false},
    {Setting::HttpToken, "snowflake.http_token", true},
    {Setting::HttpTokenFile, "snowflake.http_token_file", false},
    {Setting::HttpAllowUnauthenticated, "snowflake.http_allow_unauthenticated", false},
    {Setting::HttpMaxIdsPerSecond, "snowflake.http_max_ids_per_second", false},
    {Setting::HttpWorkerId, "snowflake.http_worker_id", false},
};
constexpr int kSettingCount = sizeof(kSettings) / sizeof(kSettings[0]);

constexpr bool table_in_order() {
    for (int i = 0; i < kSettingCount; i++)
        if (static_cast<int>(kSettings[i].setting) != i) return false;
    return true;
}
static_assert(table_in_order(), "kSettings lists the settings in the order of Setting");

constexpr const char* name(Setting s) { return kSettings[static_cast<int>(s)].name; }

// A text made once (a description, which PostgreSQL keeps by pointer, or a
// hint) that names settings: formatted into TopMemoryContext.
__attribute__((format(printf, 1, 2))) const char* text(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return MemoryContextStrdup(TopMemoryContext, buf);
}

}  // namespace

int worker_id = -1;
int clock_tolerance_ms = 5;
int clock_backwards = static_cast<int>(snowflake::core::ClockPolicy::Refuse);
int max_clock_error_ms = 0;
char* etcd_endpoints = nullptr;
char* zookeeper_hosts = nullptr;
int lease_ttl_s = snowflake::core::kDefaultLeaseTtlS;
char* lease_prefix = nullptr;
int lease_worker_min = 0;
int lease_worker_max = snowflake::core::kMaxWorker;
bool preloaded = false;
char* http_listen = nullptr;
char* http_token = nullptr;
char* http_token_file = nullptr;
bool http_allow_unauthenticated = false;
int http_max_ids_per_second = kDefaultHttpMaxIdsPerSecond;
int http_worker_id = snowflake::core::kHttpWorkerIdOff;
char* layout_setting = nullptr;
bool accept_layout_change = false;
int sequence_spread = 0;

namespace {
bool setting_given(const char* value) {
    if (value == nullptr) return false;
    for (const char* p = value; *p != '\0'; p++)
        if (*p != ' ') return true;
    return false;
}
}  // namespace

bool etcd_configured() { return setting_given(etcd_endpoints); }
bool zookeeper_configured() { return setting_given(zookeeper_hosts); }
bool leasing_configured() { return etcd_configured() || zookeeper_configured(); }

const char* coordinator_display() { return zookeeper_configured() ? "ZooKeeper" : "etcd"; }
const char* coordinator_setting() {
    return name(zookeeper_configured() ? Setting::ZookeeperHosts : Setting::EtcdEndpoints);
}
const char* coordinator_hosts() { return zookeeper_configured() ? zookeeper_hosts : etcd_endpoints; }

const char* coordinator_name() {
    return zookeeper_configured() ? "zookeeper" : etcd_configured() ? "etcd" : "none";
}

namespace {

using snowflake::core::kDefaultEpoch;
constexpr int kMaxToleranceMs = 10000;

char* epoch_text = nullptr;
TimestampTz epoch_value = 0;  // set by the assign hook

// Parses and checks an epoch text: a timestamp with an explicit UTC offset
// (core/epoch.hpp), within the range of timestamp with time zone. The clock
// is not consulted: a clock that is wrong at boot must not keep the server
// from starting (warn_if_clock_outside_epoch()). Never raises an error (this
// runs in GUC check hooks, in every process at every reload). Returns
// nullptr on success, else the reason as a sentence.
const char* validate_epoch(const char* text, TimestampTz* out) {
    int64_t unix_us = 0;
    const snowflake::core::EpochParse parsed = snowflake::core::parse_epoch(text, &unix_us);
    if (parsed != snowflake::core::EpochParse::Ok) return snowflake::core::epoch_parse_text(parsed);
    // Years 1 to 9999 lie well inside timestamp with time zone.
    *out = unix_us - kPgEpochUnixUs;
    return nullptr;
}

// snowflake.epoch's check hook: the parsed value goes to the assign hook.
bool check_epoch_hook(char** newval, void** extra, GucSource) {
    TimestampTz ts = 0;
    if (*newval == nullptr) return false;
    if (const char* why = validate_epoch(*newval, &ts)) {
        GUC_check_errdetail("%s", why);
        GUC_check_errhint("Give a past timestamp with an explicit UTC offset, such as '%s'.", kDefaultEpoch);
        return false;
    }
    auto* copy = static_cast<TimestampTz*>(sf_guc_malloc(sizeof(TimestampTz)));
    if (copy == nullptr) return false;
    *copy = ts;
    *extra = copy;
    return true;
}

// snowflake.epoch's assign hook.
void assign_epoch_hook(const char*, void* extra) {
    if (extra != nullptr) epoch_value = *static_cast<TimestampTz*>(extra);
}

// The end of a check hook: true without a reason (nullptr or ""), else
// false with the reason as the error's detail and the hint.
bool check_verdict(const char* why, const char* hint) {
    if (why == nullptr || why[0] == '\0') return true;
    GUC_check_errdetail("%s", why);
    GUC_check_errhint("%s", hint);
    return false;
}

// The parsers are the core's; their reasons (std::string) are copied out
// before GUC_check_errdetail, and nothing here can raise an error.
bool check_endpoints_hook(char** newval, void**, GucSource) {
    if (*newval == nullptr) return true;
    char why[256] = "";
    {
        std::vector<std::string> endpoints;
        std::string reason;
        if (!snowflake::core::parse_endpoints(*newval, &endpoints, &reason))
            snprintf(why, sizeof(why), "%s", reason.c_str());
    }
    char hint[200];
    snprintf(hint, sizeof(hint),
             "List etcd client URLs as http://host:port, separated by commas, or leave it empty to use %s "
             "as it is.",
             name(Setting::WorkerId));
    return check_verdict(why, hint);
}

// snowflake.zookeeper_hosts' check hook.
bool check_zookeeper_hosts_hook(char** newval, void**, GucSource) {
    if (*newval == nullptr) return true;
    char why[256] = "";
    {
        std::string reason;
        if (!snowflake::zk::check_hosts(*newval, &reason)) snprintf(why, sizeof(why), "%s", reason.c_str());
    }
    return check_verdict(why, "List ZooKeeper servers as host:port, separated by commas, optionally "
                              "followed by a chroot path (/path), or leave it empty.");
}

// snowflake.lease_prefix's check hook.
bool check_prefix_hook(char** newval, void**, GucSource) {
    if (*newval == nullptr) return false;
    char why[256] = "";
    {
        std::string reason;
        if (!snowflake::core::check_lease_prefix(*newval, &reason))
            snprintf(why, sizeof(why), "%s", reason.c_str());
    }
    return check_verdict(why, "Use a key prefix such as '/snowflake', shared by the nodes that issue "
                              "ids into the same tables.");
}

// snowflake.lease_worker_ids: "N-M" or "N" (core::parse_worker_range); the
// parsed range goes to the assign hook.
char* lease_worker_ids_text = nullptr;
bool check_lease_worker_ids_hook(char** newval, void** extra, GucSource) {
    if (*newval == nullptr) return false;
    int32_t range[2] = {0, snowflake::core::kMaxWorker};
    const char* why = snowflake::core::parse_worker_range(*newval, &range[0], &range[1]);
    if (!check_verdict(why, "Give the worker ids this node may lease as a range such as '0-511', or one id; "
                            "the default '0-1023' is every id."))
        return false;
    auto* copy = static_cast<int32_t*>(sf_guc_malloc(sizeof(range)));
    if (copy == nullptr) return false;
    copy[0] = range[0];
    copy[1] = range[1];
    *extra = copy;
    return true;
}
void assign_lease_worker_ids_hook(const char*, void* extra) {
    if (extra == nullptr) return;
    lease_worker_min = static_cast<int32_t*>(extra)[0];
    lease_worker_max = static_cast<int32_t*>(extra)[1];
}

// snowflake.http_listen: empty (off) or an address core::http::parse_listen
// accepts whose host is a numeric address. Never raises an error.
bool check_http_listen_hook(char** newval, void**, GucSource) {
    if (*newval == nullptr || (*newval)[0] == '\0') return true;
    snowflake::core::http::ListenAddress a;
    const char* why = snowflake::core::http::parse_listen(*newval, &a);
    unsigned char addr[16];
    if (why == nullptr && inet_pton(a.ipv6 ? AF_INET6 : AF_INET, a.host, addr) != 1)
        why = a.ipv6 ? "The host is not a numeric IPv6 address."
                     : "The host is not a numeric IPv4 address, \"localhost\" or \"*\".";
    return check_verdict(why, "Give host:port, such as '127.0.0.1:8080', ':8080' (loopback) or "
                              "'[::1]:8080'; an empty value turns the HTTP endpoint off.");
}

// snowflake.http_token: at most two tokens (old and new), separated by a
// comma. Never raises an error, and never repeats the value.
bool check_http_token_hook(char** newval, void**, GucSource) {
    if (*newval == nullptr) return true;
    snowflake::core::http::Tokens t;
    const char* why = snowflake::core::http::add_tokens(&t, *newval);
    return check_verdict(why, "Give one token, or two separated by a comma while clients move from "
                              "the old one to the new one; each of visible ASCII characters, at most "
                              "256 bytes.");
}

// Nobody reads the token through SHOW, current_setting() or pg_settings,
// not even members of pg_read_all_settings (who may read GUC_SUPERUSER_ONLY
// settings): only whether one is set.
const char* show_http_token() { return http_token != nullptr && http_token[0] != '\0' ? "********" : ""; }

// snowflake.clock_backwards: core::ClockPolicy's values.
const struct config_enum_entry kClockBackwardsOptions[] = {
    {"refuse", static_cast<int>(snowflake::core::ClockPolicy::Refuse), false},
    {"failover", static_cast<int>(snowflake::core::ClockPolicy::Failover), false},
    {nullptr, 0, false}};

// failover needs a coordinator to lease a backup id from: refused without
// one (at start the value is checked again: a FATAL, define_settings()).
bool check_clock_backwards_hook(int* newval, void**, GucSource) {
    if (*newval != static_cast<int>(snowflake::core::ClockPolicy::Failover) || leasing_configured()) return true;
    GUC_check_errdetail("%s = failover needs leased worker ids.", name(Setting::ClockBackwards));
    GUC_check_errhint("Set %s or %s, or set %s to refuse.", name(Setting::EtcdEndpoints),
                      name(Setting::ZookeeperHosts), name(Setting::ClockBackwards));
    return false;
}

// snowflake.http_worker_id: core::check_http_worker_id()'s rule, against
// snowflake.worker_id and the coordinators' settings (defined before it).
bool check_http_worker_id_hook(int* newval, void**, GucSource) {
    using snowflake::core::HttpWorkerIdCheck;
    switch (snowflake::core::check_http_worker_id(*newval, worker_id, leasing_configured())) {
        case HttpWorkerIdCheck::Ok: return true;
        case HttpWorkerIdCheck::OutOfRange:  // the GUC's bounds refuse it first
            GUC_check_errdetail("%s is -1 (off) or a worker id from 0 to %d.", name(Setting::HttpWorkerId),
                                snowflake::core::kMaxWorker);
            GUC_check_errhint("Give the HTTP endpoint a worker id of its own, or -1.");
            return false;
        case HttpWorkerIdCheck::Leasing:
            GUC_check_errdetail("%s needs a static worker id: with %s or %s set, worker ids are leased, and "
                                "HTTP ids under a second leased worker id are not built.",
                                name(Setting::HttpWorkerId), name(Setting::EtcdEndpoints),
                                name(Setting::ZookeeperHosts));
            GUC_check_errhint("Set %s to -1: the HTTP endpoint then issues its ids under the leased worker id.",
                              name(Setting::HttpWorkerId));
            return false;
        case HttpWorkerIdCheck::NoWorkerId:
            GUC_check_errdetail("%s needs %s: its ids are issued beside the node's own.",
                                name(Setting::HttpWorkerId), name(Setting::WorkerId));
            GUC_check_errhint("Set %s to this node's worker id, or set %s to -1.", name(Setting::WorkerId),
                              name(Setting::HttpWorkerId));
            return false;
        case HttpWorkerIdCheck::SameAsWorkerId:
            GUC_check_errdetail("%s is %s (%d): HTTP ids would share the SQL ids' sequence space.",
                                name(Setting::HttpWorkerId), name(Setting::WorkerId), worker_id);
            GUC_check_errhint("Give the HTTP endpoint a worker id of its own that no other node uses, or set "
                              "%s to -1 to issue HTTP ids under %s.",
                              name(Setting::HttpWorkerId), name(Setting::WorkerId));
            return false;
    }
    return false;
}

}  // namespace

// One coordinator: both settings given is a FATAL naming both (guc.hpp).
void check_one_coordinator() {
    if (!etcd_configured() || !zookeeper_configured()) return;
    ereport(FATAL, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s and %s are both set", name(Setting::EtcdEndpoints), name(Setting::ZookeeperHosts)),
                    errdetail("Worker ids are leased from one coordinator: etcd or ZooKeeper."),
                    errhint("Clear one of %s and %s in the server configuration.", name(Setting::EtcdEndpoints),
                            name(Setting::ZookeeperHosts))));
}

// Defines the settings and checks again the values given before (guc.hpp).
void define_settings() {
    // The values given in the configuration before the settings are defined
    // (palloc'd copies, or nullptr when not given), for every setting.
    char* given[kSettingCount];
    for (int i = 0; i < kSettingCount; i++) {
        const char* raw = GetConfigOption(kSettings[i].name, true, false);
        given[i] = raw != nullptr ? pstrdup(raw) : nullptr;
    }

    // One call per setting, laid out by hand.
    // clang-format off
    DefineCustomIntVariable(name(Setting::WorkerId),
                            "Worker id of this node, written into every Snowflake id.",
                            text("0 to 1023, unique among all nodes that issue ids into the same "
                                 "tables; -1 (the default) leaves it unset: ids are refused, or, with "
                                 "%s or %s, any free id is leased.",
                                 name(Setting::EtcdEndpoints), name(Setting::ZookeeperHosts)),
                            &worker_id, -1, -1, snowflake::core::kMaxWorker, PGC_POSTMASTER, 0,
                            nullptr, nullptr, nullptr);
    DefineCustomStringVariable(name(Setting::Epoch),
                               "Start of the millisecond range of Snowflake ids.",
                               "An ISO 8601 timestamp with an explicit UTC offset; the clock "
                               "must lie in the range of snowflake.layout's time field that starts there.",
                               &epoch_text, kDefaultEpoch, PGC_POSTMASTER, 0, check_epoch_hook,
                               assign_epoch_hook, nullptr);
    DefineCustomStringVariable(name(Setting::Layout),
                               "Bit layout of this node's Snowflake ids: a profile or the fields' widths.",
                               "twitter (the default: 41-bit milliseconds, 10-bit worker id, 12-bit "
                               "sequence), js-safe (every id below 2^53: 41/6/6), or 'time T, worker W, "
                               "sequence S'. Every node of a fleet uses the same.",
                               &layout_setting, "twitter", PGC_POSTMASTER, 0, check_layout_hook,
                               assign_layout_hook, nullptr);
    DefineCustomBoolVariable(name(Setting::AcceptLayoutChange),
                             "Starts a data directory whose ids were issued in another snowflake.layout.",
                             "Off (the default): a high-water mark of another layout stops the server. On: "
                             "ids of the new layout start after the mark; turn it off again after that start.",
                             &accept_layout_change, false, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(name(Setting::SequenceSpread),
                            "Starts each millisecond's sequence at a random offset below this, for even low bits.",
                            "0 (the default) starts it at 0: at low rates most ids then end in the same bits, "
                            "and id % N puts them on one shard. A power of two N evens id % N; a millisecond "
                            "then holds (N - 1) / 2 fewer ids on average, at most N - 1 fewer.",
                            &sequence_spread, 0, 0, 1 << 20, PGC_SIGHUP, 0, check_sequence_spread_hook, nullptr,
                            nullptr);
    DefineCustomIntVariable(name(Setting::ClockToleranceMs),
                            "How far the clock may be behind the last id before ids are refused.",
                            "A clock behind by at most this is waited out; further behind, "
                            "snowflake_nextval() raises an error.",
                            &clock_tolerance_ms, 5, 0, kMaxToleranceMs, PGC_SIGHUP, GUC_UNIT_MS,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable(name(Setting::MaxClockErrorMs),
                            "Largest maximum clock error the kernel may report for ids to be issued.",
                            "0 (the default) checks nothing; otherwise ids are refused while the "
                            "kernel reports the clock unsynchronised or its maximum error above this.",
                            &max_clock_error_ms, 0, 0, 60000, PGC_SIGHUP, GUC_UNIT_MS, nullptr,
                            nullptr, nullptr);
    DefineCustomStringVariable(name(Setting::EtcdEndpoints),
                               "etcd client URLs to lease the worker id from.",
                               text("Comma-separated http://host:port; empty (the default): no "
                                    "leasing, %s is used as it is.",
                                    name(Setting::WorkerId)),
                               &etcd_endpoints, "", PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
                               check_endpoints_hook, nullptr, nullptr);
    DefineCustomStringVariable(name(Setting::ZookeeperHosts),
                               "ZooKeeper servers to lease the worker id from.",
                               text("A connect string, host:port[,host:port...][/chroot]; empty (the "
                                    "default): not used. Set it or %s, not both.",
                                    name(Setting::EtcdEndpoints)),
                               &zookeeper_hosts, "", PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
                               check_zookeeper_hosts_hook, nullptr, nullptr);
    DefineCustomIntVariable(name(Setting::LeaseTtl),
                            "Time to live of the worker id lease in etcd (the session timeout asked of ZooKeeper).",
                            "The node stops issuing ids before the lease can have expired: "
                            "keepalives every third of it. ZooKeeper may grant another session "
                            "timeout (snowflake_stats shows it); the node uses the shorter.",
                            &lease_ttl_s, snowflake::core::kDefaultLeaseTtlS,
                            snowflake::core::kMinLeaseTtlS, snowflake::core::kMaxLeaseTtlS,
                            PGC_POSTMASTER, GUC_UNIT_S | GUC_SUPERUSER_ONLY, nullptr, nullptr, nullptr);
    DefineCustomStringVariable(name(Setting::LeasePrefix),
                               "etcd key prefix (ZooKeeper znode path) of the worker id leases.",
                               "Nodes that issue ids into the same tables share a prefix.",
                               &lease_prefix, "/snowflake", PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
                               check_prefix_hook, nullptr, nullptr);
    DefineCustomStringVariable(name(Setting::LeaseWorkerIds),
                               "The worker ids this node leases any free one from, N-M.",
                               "The default '0-1023' is every id. Applications' embedded generators "
                               "lease from 512-1023 by default: '0-511' leaves those to them. "
                               "A set snowflake.worker_id is leased as it is.",
                               &lease_worker_ids_text, "0-1023", PGC_POSTMASTER, 0,
                               check_lease_worker_ids_hook, assign_lease_worker_ids_hook, nullptr);
    // After the coordinators' settings: its check reads them.
    DefineCustomEnumVariable(name(Setting::ClockBackwards),
                             "What a node with a leased worker id does when its clock steps back.",
                             "refuse (the default): ids are refused (SF001) until the clock passes "
                             "the last id; failover: ids go on under a backup worker id, leased like "
                             "the own one, until then.",
                             &clock_backwards, static_cast<int>(snowflake::core::ClockPolicy::Refuse),
                             kClockBackwardsOptions, PGC_SIGHUP, 0, check_clock_backwards_hook, nullptr,
                             nullptr);
    DefineCustomStringVariable(name(Setting::HttpListen),
                               "Address of the HTTP endpoint that hands out ids, host:port.",
                               "Empty (the default) turns it off; ':port' listens on 127.0.0.1. "
                               "See \"Ids over HTTP\" in the README.",
                               &http_listen, "", PGC_POSTMASTER, 0, check_http_listen_hook, nullptr,
                               nullptr);
    DefineCustomStringVariable(name(Setting::HttpToken),
                               "Bearer token the HTTP endpoint requires on every path but the health probes.",
                               "Empty (the default): no token is asked for. Two tokens separated by a "
                               "comma are both accepted (a rotation). Shown only as ********.",
                               &http_token, "", PGC_SIGHUP,
                               GUC_SUPERUSER_ONLY | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
                               check_http_token_hook, nullptr, show_http_token);
    DefineCustomStringVariable(name(Setting::HttpTokenFile),
                               "File with the Bearer token(s) of the HTTP endpoint, one per line.",
                               "Empty (the default): none. Read at start and at every reload; it must "
                               "not be readable by group or others. Relative to the data directory.",
                               &http_token_file, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, nullptr, nullptr,
                               nullptr);
    DefineCustomBoolVariable(name(Setting::HttpAllowUnauthenticated),
                             "Allows the HTTP endpoint without a token on a non-loopback address.",
                             "Off (the default): such a configuration stops the server at start.",
                             &http_allow_unauthenticated, false, PGC_SIGHUP, 0, nullptr, nullptr,
                             nullptr);
    DefineCustomIntVariable(name(Setting::HttpMaxIdsPerSecond),
                            "Most ids per second the HTTP endpoint hands out; more are refused with 429.",
                            "0 turns the ceiling off; the default is half of what one node can issue "
                            "(4,096 ids a millisecond), so that SQL callers keep the rest.",
                            &http_max_ids_per_second, kDefaultHttpMaxIdsPerSecond, 0, 4096000,
                            PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    // After the worker id's and the coordinators' settings: its check reads them.
    DefineCustomIntVariable(name(Setting::HttpWorkerId),
                            "Worker id of the HTTP endpoint's ids, beside the node's own.",
                            text("-1 (the default): HTTP ids are issued under %s, from the same sequence "
                                 "as SQL's. 0 to 1023: under this worker id, from a generator of their "
                                 "own, so that HTTP batches never take SQL's ids of a millisecond; unique "
                                 "among all nodes like %s. Needs a static %s (no %s or %s).",
                                 name(Setting::WorkerId), name(Setting::WorkerId), name(Setting::WorkerId),
                                 name(Setting::EtcdEndpoints), name(Setting::ZookeeperHosts)),
                            &http_worker_id, snowflake::core::kHttpWorkerIdOff, -1, snowflake::core::kMaxWorker,
                            PGC_POSTMASTER, 0, check_http_worker_id_hook, nullptr, nullptr);
    // clang-format on
    MarkGUCPrefixReserved("snowflake");

    // Check each given value again through the GUC machinery, without applying
    // it; a value that failed when PostgreSQL applied it fails again here.
    for (int i = 0; i < kSettingCount; i++) {
        const SettingName& g = kSettings[i];
        const char* raw = given[i];
        if (raw == nullptr) continue;
        CaughtError e;
        const bool valid = call_catching_error(
            [&] {
                (void)set_config_option(g.name, raw, PGC_POSTMASTER, PGC_S_FILE, GUC_ACTION_SET, false, ERROR,
                                        false);
            },
            &e);
        if (!valid) {
            ereport(FATAL,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("invalid value for parameter \"%s\": \"%s\"", g.name, g.secret ? "(not shown)" : raw),
                     e.detail[0] != '\0' ? errdetail("%s", e.detail) : errdetail("%s.", e.message),
                     // The error's own hint first when it has one: a check's
                     // (clock_backwards: the coordinators' settings) or
                     // PostgreSQL's (an enum's values, a unit's names).
                     errhint("%s%sCorrect %s in the server configuration. The server does not start "
                             "with an invalid snowflake setting, so that no id is ever issued under a "
                             "value you did not choose.",
                             e.hint, e.hint[0] != '\0' ? " " : "", g.name)));
        }
    }
}

// The epoch in effect (guc.hpp).
TimestampTz current_epoch() {
    if (preloaded) return epoch_value;

    // Not preloaded: the setting is not defined in this process, but a value
    // given for it is still there as a placeholder. Its reset value is the one
    // the session started with (server configuration, or the role's, the
    // database's or the connection's settings); a SET does not change it.
    // Decoding does not depend on the clock, so only the text is checked.
    const char* raw = nullptr;
    if (GetConfigOption(name(Setting::Epoch), true, false) != nullptr)
        raw = GetConfigOptionResetString(name(Setting::Epoch));
    if (raw == nullptr || raw[0] == '\0') raw = kDefaultEpoch;
    TimestampTz ts = 0;
    if (const char* why = validate_epoch(raw, &ts)) {
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("invalid value for parameter \"%s\": \"%s\"", name(Setting::Epoch), raw),
                 errdetail("%s", why), errhint("Correct %s in the server configuration.", name(Setting::Epoch))));
    }
    return ts;
}

const char* layout_setting_name() { return name(Setting::Layout); }
bool lease_worker_ids_default() {
    return lease_worker_ids_text == nullptr || strcmp(lease_worker_ids_text, "0-1023") == 0;
}

// A WARNING at start for a clock outside the epoch's range (guc.hpp).
void warn_if_clock_outside_epoch() {
    const int64_t epoch_ms = snowflake::core::floor_div(epoch_value + kPgEpochUnixUs, 1000);
    const int64_t now_ms = snowflake::core::floor_div(unix_now_us(), 1000);
    char why[256];
    switch (snowflake::core::check_epoch(epoch_ms, now_ms, node_geometry())) {
        case snowflake::core::EpochCheck::InFuture:
            snprintf(why, sizeof(why), "The clock reads a time before %s.", name(Setting::Epoch));
            break;
        case snowflake::core::EpochCheck::TooLittleRange:
            snprintf(why, sizeof(why),
                     "Less than a year of the %d-bit millisecond range of %s that starts "
                     "at %s is left, or the clock is past its end.",
                     node_geometry().time_bits, name(Setting::Layout), name(Setting::Epoch));
            break;
        case snowflake::core::EpochCheck::Ok:
            return;
    }
    char* clock_text = pstrdup(timestamptz_to_str(GetCurrentTimestamp()));
    ereport(WARNING, (errcode(ERRCODE_SF_CLOCK_OUT_OF_RANGE),
                      errmsg("system clock %s does not fit %s %s", clock_text, name(Setting::Epoch),
                             timestamptz_to_str(epoch_value)),
                      errdetail("%s snowflake_nextval() refuses ids (SQLSTATE SF002) while this lasts.", why),
                      errhint("Check the system clock and its time synchronisation, or choose a "
                              "%s that covers the clock.",
                              name(Setting::Epoch))));
}

}  // namespace snowflake::pg
