// snowflake.* settings.
//
// PostgreSQL applies a value given for an extension's setting before the
// extension defines it only with a WARNING, falling back to the default on a
// bad value. For the worker id or the epoch that would silently change the id
// space, so at server start every value given for a snowflake.* setting is
// checked again and a bad one stops the server with a FATAL.

#include <cstdlib>
#include <ctime>

#include "../core/epoch.hpp"
#include "snowflake.hpp"

extern "C" {
#include "utils/memutils.h"
}

namespace sf {

int worker_id = -1;
int clock_tolerance_ms = 5;
bool preloaded = false;

namespace {

constexpr const char* kDefaultEpoch = "2025-01-01 00:00:00+00";
constexpr int kMaxToleranceMs = 10000;

char* epoch_text = nullptr;
TimestampTz epoch_value = 0;  // set by the assign hook

// Parses and checks an epoch text: a timestamp with an explicit UTC offset
// (core/epoch.hpp), within the range of timestamp with time zone and, when
// check_clock is set, not later than now and leaving at least a year of the
// 41-bit range. Never raises an error (this runs in GUC check hooks).
// Returns nullptr on success, else the reason as a sentence.
const char* validate_epoch(const char* text, bool check_clock, TimestampTz* out) {
    int64_t unix_us = 0;
    const snowflake::core::EpochParse parsed = snowflake::core::parse_epoch(text, &unix_us);
    if (parsed != snowflake::core::EpochParse::Ok) return snowflake::core::epoch_parse_text(parsed);
    // Years 1 to 9999 lie well inside timestamp with time zone.
    const TimestampTz ts = unix_us - kPgEpochUnixUs;
    if (check_clock) {
        const int64_t epoch_ms = snowflake::core::floor_div(unix_us, 1000);
        const int64_t now_ms = snowflake::core::floor_div(unix_now_us(), 1000);
        switch (snowflake::core::check_epoch(epoch_ms, now_ms)) {
            case snowflake::core::EpochCheck::InFuture:
                return "The epoch is later than the current time.";
            case snowflake::core::EpochCheck::TooLittleRange:
                return "The epoch leaves less than a year of the 41-bit millisecond range (about 69.7 years).";
            case snowflake::core::EpochCheck::Ok:
                break;
        }
    }
    *out = ts;
    return nullptr;
}

bool check_epoch_hook(char** newval, void** extra, GucSource source) {
    TimestampTz ts = 0;
    if (*newval == nullptr) return false;
    // The built-in default is a fixed, valid text: checking it against the
    // clock would only keep a server whose clock is wrong at boot from
    // starting at all (issuing ids refuses such a clock anyway, SF002).
    if (const char* why = validate_epoch(*newval, source != PGC_S_DEFAULT, &ts)) {
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

void assign_epoch_hook(const char*, void* extra) {
    if (extra != nullptr) epoch_value = *static_cast<TimestampTz*>(extra);
}

// Values given in the configuration before the settings were defined.
struct GivenValue {
    const char* name;
    char* raw;  // palloc'd copy, or nullptr when not given
};

}  // namespace

void define_settings() {
    GivenValue given[] = {{"snowflake.worker_id", nullptr},
                          {"snowflake.epoch", nullptr},
                          {"snowflake.clock_tolerance_ms", nullptr}};
    for (auto& g : given) {
        const char* raw = GetConfigOption(g.name, true, false);
        g.raw = raw != nullptr ? pstrdup(raw) : nullptr;
    }

    DefineCustomIntVariable("snowflake.worker_id",
                            "Worker id of this node, written into every Snowflake id.",
                            "0 to 1023, unique among all nodes that issue ids into the same "
                            "tables; -1 (the default) leaves it unset and ids are refused.",
                            &worker_id, -1, -1, snowflake::core::kMaxWorker, PGC_POSTMASTER, 0,
                            nullptr, nullptr, nullptr);
    DefineCustomStringVariable("snowflake.epoch",
                               "Start of the 41-bit millisecond range of Snowflake ids.",
                               "An ISO 8601 timestamp with an explicit UTC offset, no later "
                               "than now, that leaves at least a year of the range.",
                               &epoch_text, kDefaultEpoch, PGC_POSTMASTER, 0, check_epoch_hook,
                               assign_epoch_hook, nullptr);
    DefineCustomIntVariable("snowflake.clock_tolerance_ms",
                            "How far the clock may be behind the last id before ids are refused.",
                            "A clock behind by at most this is waited out; further behind, "
                            "snowflake_nextval() raises an error.",
                            &clock_tolerance_ms, 5, 0, kMaxToleranceMs, PGC_SIGHUP, GUC_UNIT_MS,
                            nullptr, nullptr, nullptr);
    MarkGUCPrefixReserved("snowflake");

    // Check each given value again through the GUC machinery, without applying
    // it; a value that failed when PostgreSQL applied it fails again here.
    for (auto& g : given) {
        if (g.raw == nullptr) continue;
        ErrorData* edata = nullptr;
        MemoryContext oldcontext = CurrentMemoryContext;
        PG_TRY();
        {
            (void)set_config_option(g.name, g.raw, PGC_POSTMASTER, PGC_S_FILE, GUC_ACTION_SET,
                                    false, ERROR, false);
        }
        PG_CATCH();
        {
            MemoryContextSwitchTo(oldcontext);
            edata = CopyErrorData();
            FlushErrorState();
        }
        PG_END_TRY();
        if (edata != nullptr) {
            ereport(FATAL,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("invalid value for parameter \"%s\": \"%s\"", g.name, g.raw),
                     edata->detail != nullptr ? errdetail("%s", edata->detail)
                                              : errdetail("%s.", edata->message),
                     errhint("Correct %s in the server configuration. The server does not start "
                             "with an invalid snowflake setting, so that no id is ever issued "
                             "under a value you did not choose.",
                             g.name)));
        }
    }
}

TimestampTz current_epoch() {
    if (preloaded) return epoch_value;

    // Not preloaded: the setting is not defined in this process, but a value
    // given for it is still there as a placeholder. Its reset value is the one
    // the session started with (server configuration, or the role's, the
    // database's or the connection's settings); a SET does not change it.
    // Decoding does not depend on the clock, so only the text is checked.
    const char* raw = nullptr;
    if (GetConfigOption("snowflake.epoch", true, false) != nullptr)
        raw = GetConfigOptionResetString("snowflake.epoch");
    if (raw == nullptr || raw[0] == '\0') raw = kDefaultEpoch;
    TimestampTz ts = 0;
    if (const char* why = validate_epoch(raw, false, &ts)) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid value for parameter \"snowflake.epoch\": \"%s\"", raw),
                        errdetail("%s", why),
                        errhint("Correct snowflake.epoch in the server configuration.")));
    }
    return ts;
}

int64_t unix_now_us() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void unix_now_ms_ns(int64_t* ms, int64_t* sub_ms_ns) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    // Seconds and nanoseconds kept apart: a nanosecond count would overflow
    // 64 bits after the year 2262.
    *ms = static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
    *sub_ms_ns = ts.tv_nsec % 1000000;
}

}  // namespace sf
