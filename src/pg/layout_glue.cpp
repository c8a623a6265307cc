// snowflake.layout in the server (layout_glue.hpp). The decisions are the
// core's (core/id_layout.hpp: node_geometry, change_keeps_ids_above,
// judge_record_layout, fit_lease_range); here they are read from the
// settings and turned into errors. No std::string lives across an ereport:
// the texts are copied into buffers first.

#include <cstdio>
#include <cstring>
#include <string>

#include "../core/id_layout.hpp"
#include "../core/layout.hpp"
#include "../core/mark.hpp"
#include "guc.hpp"
#include "layout_glue.hpp"
#include "mark_file.hpp"

namespace snowflake::pg {

namespace core = snowflake::core;

namespace {

// snowflake.layout's geometry (assign hook): the id path's.
core::Geometry layout_value = core::kTwitter;

constexpr const char* kLayoutHint =
    "Give a profile (twitter, js-safe) or the fields from the top bit down, such as "
    "'time 41, worker 8, sequence 14'; see \"Layouts\" in docs/reference.md.";

// The geometry of a snowflake.layout text; false with the reason, a
// sentence (capitalised), in why.
bool validate_layout(const char* text, core::Geometry* out, char* why, size_t why_size) {
    core::IdLayout l;
    if (core::parse_layout(text, &l, why, why_size) && core::node_geometry(l, out, why, why_size)) return true;
    why[0] = static_cast<char>(pg_toupper(static_cast<unsigned char>(why[0])));
    return false;
}

// A geometry's name (core::geometry_text) in a buffer.
struct LayoutName {
    char text[96];
    explicit LayoutName(const core::Geometry& g) {
        snprintf(text, sizeof(text), "%s", core::geometry_text(g).c_str());
    }
};

// The mark's layout, noted at load_mark() for report_mark_layout().
bool mark_differs = false;
core::Geometry mark_geometry = core::kTwitter;

}  // namespace

bool check_layout_hook(char** newval, void** extra, GucSource) {
    if (*newval == nullptr) return false;
    core::Geometry g{};
    char why[320] = "";
    if (!validate_layout(*newval, &g, why, sizeof(why))) {
        GUC_check_errdetail("%s.", why);
        GUC_check_errhint("%s", kLayoutHint);
        return false;
    }
    auto* copy = static_cast<core::Geometry*>(sf_guc_malloc(sizeof(g)));
    if (copy == nullptr) return false;
    *copy = g;
    *extra = copy;
    return true;
}

void assign_layout_hook(const char*, void* extra) {
    if (extra != nullptr) layout_value = *static_cast<core::Geometry*>(extra);
}

// snowflake.sequence_spread: 0 (off) or a power of two up to a quarter of
// the layout's ids a millisecond (core::spread_for() would round; a value
// that is not what it does is refused instead).
bool check_sequence_spread_hook(int* newval, void**, GucSource) {
    if (*newval == 0) return true;
    const core::IdLayout l = core::layout_of(layout_value);
    if (*newval >= 2 && core::spread_for(l, *newval) == *newval) return true;
    const int cap = core::spread_for(l, INT32_MAX);
    if (cap < 2) {
        GUC_check_errdetail("The %d ids a millisecond of snowflake.layout leave no room for a spread (a quarter "
                            "of them is below 2).",
                            layout_value.max_sequence + 1);
        GUC_check_errhint("Set snowflake.sequence_spread to 0.");
    } else {
        GUC_check_errdetail(
            "snowflake.sequence_spread is 0 (off) or a power of two from 2 to %d, a quarter of the "
            "%d ids a millisecond of snowflake.layout.",
            cap, layout_value.max_sequence + 1);
        GUC_check_errhint("%d evens id %% %d at low rates and costs %.1f ids a millisecond on average; 0 turns "
                          "it off.",
                          cap < 16 ? cap : 16, cap < 16 ? cap : 16, ((cap < 16 ? cap : 16) - 1) / 2.0);
    }
    return false;
}

// The node's layout (guc.hpp).
const core::Geometry& node_geometry() {
    if (preloaded) return layout_value;
    // Not preloaded: as current_epoch(), the value the session started with.
    static core::Geometry read;
    const char* raw = nullptr;
    if (GetConfigOption(layout_setting_name(), true, false) != nullptr)
        raw = GetConfigOptionResetString(layout_setting_name());
    if (raw == nullptr || raw[0] == '\0') return core::kTwitter;
    char why[320] = "";
    if (!validate_layout(raw, &read, why, sizeof(why)))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid value for parameter \"%s\": \"%s\"", layout_setting_name(), raw),
                        errdetail("%s.", why), errhint("%s", kLayoutHint)));
    return read;
}

// The worker ids of the other settings against the layout (guc.hpp).
void check_layout_fits() {
    const core::Geometry& g = layout_value;
    const char* layout = layout_setting != nullptr ? layout_setting : "twitter";
    auto refuse = [&](const char* setting, int value) {
        ereport(FATAL,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("%s %d does not fit snowflake.layout '%s'", setting, value, layout),
                 errdetail("The layout's worker field has %d bits: worker ids from 0 to %d.", g.worker_bits,
                           g.max_worker),
                 errhint("Choose %s from 0 to %d, or a layout with more worker bits.", setting, g.max_worker)));
    };
    if (worker_id > g.max_worker) refuse("snowflake.worker_id", worker_id);
    if (http_worker_id > g.max_worker) refuse("snowflake.http_worker_id", http_worker_id);
    int32_t lo = lease_worker_min, hi = lease_worker_max;
    if (!core::fit_lease_range(g, lease_worker_ids_default(), &lo, &hi))
        ereport(FATAL, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("snowflake.lease_worker_ids %d-%d does not fit snowflake.layout '%s'",
                               lease_worker_min, lease_worker_max, layout),
                        errdetail("The layout's worker field has %d bits: worker ids from 0 to %d.", g.worker_bits,
                                  g.max_worker),
                        errhint("Give snowflake.lease_worker_ids a range within 0-%d.", g.max_worker)));
    lease_worker_max = hi;  // the default range narrowed to the layout's ids
}

void note_mark_layout(const core::Mark& mark) {
    mark_differs = mark.layout != core::mark_layout_code(node_geometry());
    if (mark_differs) (void)core::geometry_of_mark_code(mark.layout, &mark_geometry);  // decode_mark() accepted it
}

// A mark of another layout than snowflake.layout: its ids and the new ones
// can be equal bit for bit, so the server does not start, unless
// snowflake.accept_layout_change says that this change is meant (its ids
// then start after the mark's millisecond, as after any mark).
void report_mark_layout() {
    if (!mark_differs) return;
    const LayoutName theirs(mark_geometry), mine(node_geometry());
    const bool above = core::change_keeps_ids_above(mark_geometry, node_geometry());
    if (!accept_layout_change)
        ereport(FATAL, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("snowflake.layout is '%s', but this data directory issued ids in '%s'", mine.text,
                               theirs.text),
                        errdetail("The high-water mark file \"%s\" was written under layout '%s'. %s", kMarkFile,
                                  theirs.text,
                                  above ? "Ids of the new layout would all lie above this node's ids so far."
                                        : "Ids of the new layout can be equal to ids this node issued before."),
                        errhint("Set snowflake.layout back to '%s', or, to change the layout, start once with "
                                "snowflake.accept_layout_change = on (see \"Changing the layout\" in "
                                "docs/operations.md).",
                                theirs.text)));
    ereport(above ? LOG : WARNING,
            (errmsg("snowflake.layout changes from '%s' to '%s' (snowflake.accept_layout_change is on)",
                    theirs.text, mine.text),
             errdetail(above ? "Every new id lies above this node's ids of the old layout."
                             : "New ids can be equal to ids this node issued before: they must not share a "
                               "column with them."),
             errhint("Set snowflake.accept_layout_change back to off.")));
}

void check_record_layout(uint32_t record, bool archive_recovery) {
    const uint32_t mine_code = core::mark_layout_code(node_geometry());
    const core::RecordLayout v = core::judge_record_layout(record, mine_code, accept_layout_change,
                                                           archive_recovery);
    if (v == core::RecordLayout::Same) return;
    core::Geometry g{};
    (void)core::geometry_of_mark_code(record, &g);  // decode_reservation() accepted it
    const LayoutName theirs(g), mine(node_geometry());
    if (v == core::RecordLayout::Refused)
        ereport(FATAL,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("snowflake WAL records were written under snowflake.layout '%s', this server's is '%s'",
                        theirs.text, mine.text),
                 errdetail(archive_recovery
                               ? "A standby issues ids in its primary's layout once promoted: ids of two layouts "
                                 "can be equal. snowflake.accept_layout_change does not apply to a standby."
                               : "Ids of two layouts can be equal."),
                 errhint("Set snowflake.layout to '%s' on this server and start it again.", theirs.text)));
    static bool warned = false;
    if (!warned)
        ereport(WARNING, (errmsg("snowflake replays WAL records of snowflake.layout '%s' under '%s'", theirs.text,
                                 mine.text),
                          errdetail("Crash recovery with snowflake.accept_layout_change on: their milliseconds "
                                    "raise the floor of the new layout's ids.")));
    warned = true;
}

}  // namespace snowflake::pg
