// snowflake.* settings.
//
// PostgreSQL applies a value given for an extension's setting before the
// extension defines it only with a WARNING, falling back to the default on a
// bad value. For the worker id or the epoch that would silently change the id
// space, so at server start every value given for a snowflake.* setting is
// checked again and a bad one stops the server with a FATAL.

#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <cstring>
#include <ctime>

#include "snowflake.hpp"

extern "C" {
#include "utils/guc.h"
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

// Parses a fixed point in time without ever raising an error (this runs in
// GUC check hooks, where errors are not allowed). Returns nullptr on success,
// otherwise the reason.
const char* parse_fixed_timestamptz(const char* text, TimestampTz* out) {
    if (std::strlen(text) >= MAXDATELEN) return "The value is too long.";
    // Words whose meaning moves with the clock make no epoch.
    char lower[MAXDATELEN];
    size_t n = std::strlen(text);
    for (size_t i = 0; i <= n; i++) lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
    for (const char* word : {"now", "today", "tomorrow", "yesterday", "infinity"}) {
        if (std::strstr(lower, word) != nullptr) return "The epoch must be a fixed point in time.";
    }

    char workbuf[MAXDATELEN + MAXDATEFIELDS];
    char* field[MAXDATEFIELDS];
    int ftype[MAXDATEFIELDS];
    int nf = 0;
    int dtype = 0;
    struct pg_tm tt;
    fsec_t fsec = 0;
    int tz = 0;
    if (ParseDateTime(text, workbuf, sizeof(workbuf), field, ftype, MAXDATEFIELDS, &nf) != 0 ||
        sf_decode_date_time(field, ftype, nf, &dtype, &tt, &fsec, &tz) != 0)
        return "It is not a valid timestamp with time zone.";
    if (dtype == DTK_EPOCH) {
        *out = SetEpochTimestamp();
        return nullptr;
    }
    if (dtype != DTK_DATE) return "The epoch must be a fixed point in time.";
    Timestamp ts;
    if (tm2timestamp(&tt, fsec, &tz, &ts) != 0 || !IS_VALID_TIMESTAMP(ts))
        return "It is out of the range of timestamp with time zone.";
    *out = ts;
    return nullptr;
}

// Full validation of an epoch text: parsable, not in the future, and leaving at
// least a year of the 41-bit range. nullptr on success, else the detail.
const char* validate_epoch(const char* text, TimestampTz* out) {
    TimestampTz ts;
    if (const char* why = parse_fixed_timestamptz(text, &ts)) return why;
    const int64_t epoch_ms = snowflake::core::floor_div(ts + kPgEpochUnixUs, 1000);
    const int64_t now_ms = snowflake::core::floor_div(unix_now_us(), 1000);
    switch (snowflake::core::check_epoch(epoch_ms, now_ms)) {
        case snowflake::core::EpochCheck::InFuture:
            return "The epoch is later than the current time.";
        case snowflake::core::EpochCheck::TooLittleRange:
            return "The epoch leaves less than a year of the 41-bit millisecond range (about 69.7 years).";
        case snowflake::core::EpochCheck::Ok:
            break;
    }
    *out = ts;
    return nullptr;
}

bool check_epoch_hook(char** newval, void** extra, GucSource) {
    TimestampTz ts;
    if (*newval == nullptr) return false;
    if (const char* why = validate_epoch(*newval, &ts)) {
        GUC_check_errdetail("%s", why);
        GUC_check_errhint("Give a past timestamp with time zone in ISO form, such as '%s'.", kDefaultEpoch);
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
                               "A timestamp with time zone no later than now that leaves at "
                               "least a year of the range.",
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
                                              : errdetail("%s", edata->message),
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
    // given in the server configuration is still there as a placeholder. Its
    // reset value is the configured one; a session's SET does not change it.
    const char* raw = nullptr;
    if (GetConfigOption("snowflake.epoch", true, false) != nullptr)
        raw = GetConfigOptionResetString("snowflake.epoch");
    if (raw == nullptr || raw[0] == '\0') raw = kDefaultEpoch;
    TimestampTz ts;
    if (const char* why = validate_epoch(raw, &ts)) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid value for parameter \"snowflake.epoch\": \"%s\"", raw),
                        errdetail("%s", why),
                        errhint("Correct snowflake.epoch in the server configuration.")));
    }
    return ts;
}

int64_t unix_now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t unix_now_us() { return unix_now_ns() / 1000; }

}  // namespace sf
