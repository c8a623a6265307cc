// Layouts beyond 41/10/12 (issue 31): an id's three fields (time, worker id,
// sequence), their widths, their order from the top bit down, and the unit
// of the time field, as a value, with the named profiles and the text form
// of snowflake.layout.
//
//   text:   a profile name, or the fields from the most significant down,
//           each "<field> <bits>", then optionally "unit <N>ms":
//             "time 41, worker 10, sequence 12"            (twitter)
//             "time 39, sequence 8, worker 16, unit 10ms"  (sonyflake)
//           Fields are time, worker and sequence, each exactly once; the
//           widths add up to at most 63 (bit 63 stays zero: ids are
//           positive bigints); the unit is 1 to 1000 ms (default 1ms).
//
// Ids of other systems (foreign ids) and of other splits are read and built
// under a layout argument by the SQL functions snowflake_decode_as(),
// snowflake_compose_as(), snowflake_from_timestamp_as() and
// snowflake_layouts() (src/pg/layouts.cpp), and by snowflake-inspect
// --layout (src/inspect). A node issues its own ids in snowflake.layout when
// node_geometry() accepts it (time, worker, sequence in that order, 1 ms
// units, at most 41 bits of time): the id path takes its Geometry
// (layout.hpp), and so does the SDK under sf_config.layout (sdk/c/src/layout.hpp).
#pragma once

#include "pure.hpp"

#include "layout.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace snowflake::core {

enum class IdField : uint8_t { Time = 0, Worker = 1, Sequence = 2 };

struct IdLayout {
    int32_t time_bits = kTimestampBits;
    int32_t worker_bits = kWorkerBits;
    int32_t sequence_bits = kSequenceBits;
    int32_t unit_ms = 1;  // the time field counts units of this many milliseconds
    // The fields from the most significant down.
    IdField order[3] = {IdField::Time, IdField::Worker, IdField::Sequence};
};

bool operator==(const IdLayout& a, const IdLayout& b) noexcept;
inline bool operator!=(const IdLayout& a, const IdLayout& b) noexcept { return !(a == b); }

// A named layout; foreign_epoch_unix_ms: the epoch of the system whose ids
// it reads (Discord's, sonyflake's default, Instagram's), for decoding
// their ids; -1 for our own profiles (the node's snowflake.epoch applies).
struct LayoutProfile {
    const char* name;
    IdLayout layout;
    int64_t foreign_epoch_unix_ms;
    const char* note;  // what differs from the original, for the docs and hints
};

// twitter, js-safe, sonyflake, discord, instagram.
const LayoutProfile* layout_profiles(size_t* count) noexcept;
const LayoutProfile* find_layout_profile(const char* name) noexcept;  // nullptr: none of that name
// The profile equal to layout, nullptr if none (a custom split).
const LayoutProfile* profile_of(const IdLayout& layout) noexcept;

// A layout given as an argument (a function's, a command's): the layout, and
// the profile its text names with that profile's foreign epoch. A text that
// spells the fields names no profile and carries no epoch, even when it is
// Discord's split: only a name says whose ids they are.
struct LayoutArg {
    IdLayout layout;
    int64_t own_epoch_unix_ms = -1;          // the profile's foreign epoch; -1: none of its own
    const LayoutProfile* profile = nullptr;  // the profile named; nullptr: the fields were written
};
// parse_layout(), and the profile named. On failure writes parse_layout's
// sentence into why.
bool parse_layout_arg(const char* text, LayoutArg* out, char* why, size_t why_size) noexcept;
// The profiles' names in the table's order, separated by ", ", into out
// (truncated to size); own_epoch_only: only those with a foreign epoch.
void profile_names(char* out, size_t size, bool own_epoch_only) noexcept;

// The layout's own limits: widths of at least one bit each, 63 bits in
// all, each field once, a unit of 1 to 1000 ms. Writes why not (a sentence
// for an error's detail) into why.
bool layout_valid(const IdLayout& layout, char* why, size_t why_size) noexcept;

// Parses the text form (above) or a profile name. On failure writes a
// sentence into why.
bool parse_layout(const char* text, IdLayout* out, char* why, size_t why_size) noexcept;
// The canonical text form: "time 41, worker 10, sequence 12, unit 1ms".
std::string layout_text(const IdLayout& layout) noexcept;

int32_t field_shift(const IdLayout& layout, IdField field) noexcept;
int64_t max_time(const IdLayout& layout) noexcept;      // the last unit of the lifetime
int32_t max_worker_id(const IdLayout& layout) noexcept;
int32_t max_sequence_of(const IdLayout& layout) noexcept;
int32_t ids_per_unit(const IdLayout& layout) noexcept;
// The top id bit the layout can set, plus one: ids stay below 2^id_bits.
int32_t id_bits(const IdLayout& layout) noexcept;

// Whether the time field is the top one: then ids order by time, and
// compose_in(layout, t, 0, 0) is at most every id of unit t and later (the
// bound of a range scan). "worker 4, time 30, sequence 2" orders by worker.
bool time_leads(const IdLayout& layout) noexcept;
// Whether id can be an id of the layout: not negative and below 2^id_bits.
bool id_fits(const IdLayout& layout, int64_t id) noexcept;
// The time field of the instant ms_since_epoch milliseconds after the epoch,
// floored to its unit; false when the instant lies before the epoch or past
// the lifetime's last unit.
bool time_of_ms(const IdLayout& layout, int64_t ms_since_epoch, int64_t* time) noexcept;
// Milliseconds from the epoch to the start of unit `time`; false when time
// is negative or the milliseconds do not fit in 64 bits.
bool ms_of_time(const IdLayout& layout, int64_t time, int64_t* ms) noexcept;

// Packs the fields; out-of-range bits are masked off, never carried into a
// neighbour (the caller checks the ranges first).
int64_t compose_in(const IdLayout& layout, int64_t time, int32_t worker, int32_t sequence) noexcept;
// Unpacks a non-negative id: Fields::ms is the time field, in units.
Fields decompose_in(const IdLayout& layout, int64_t id) noexcept;

// Unix milliseconds of the start of the unit after the last one: the
// lifetime's end for an epoch.
int64_t lifetime_end_unix_ms(const IdLayout& layout, int64_t epoch_unix_ms) noexcept;

enum class LayoutFit {
    Ok,
    WorkerTooLarge,  // the worker id needs more bits than the layout has
    EpochAhead,      // the epoch is after now: the time field would be negative
    LifetimeOver,    // now is past the last unit of the lifetime
};
// Whether a node with this worker id (-1: leased, checked per lease) and
// epoch can issue ids in this layout now.
LayoutFit layout_fits(const IdLayout& layout, int32_t worker, int64_t epoch_unix_ms, int64_t now_unix_ms) noexcept;

// The geometry a node issues ids in under this layout: the fields in the
// order time, worker, sequence, a unit of 1 ms, at most kMaxNodeTimeBits of
// time. Otherwise false, with why (a sentence).
bool node_geometry(const IdLayout& layout, Geometry* out, char* why, size_t why_size) noexcept;
// The IdLayout of a geometry.
IdLayout layout_of(const Geometry& g) noexcept;

// A node that changes from layout `from` to `to` (snowflake.accept_layout_change)
// starts its ids after its mark's millisecond. With the time field on top
// in both, every new id then lies above every id of `from` up to the mark
// when `to` has at least as many bits below its time field; otherwise new
// ids can equal old ones.
constexpr bool change_keeps_ids_above(const Geometry& from, const Geometry& to) noexcept {
    return to.time_shift >= from.time_shift;
}

// What a node does with a WAL record of layout code `record` (mark.hpp's
// mark_layout_code; node: its own). A record of another layout is replayed
// only in crash recovery with snowflake.accept_layout_change on (the
// records of its own run before a change); a standby, or any archive
// recovery, stops: it would issue ids of its own layout beside the
// primary's, which can be equal.
enum class RecordLayout { Same, AcceptedChange, Refused };
constexpr RecordLayout judge_record_layout(uint32_t record, uint32_t node, bool accept_change,
                                           bool archive_recovery) noexcept {
    if (record == node) return RecordLayout::Same;
    return accept_change && !archive_recovery ? RecordLayout::AcceptedChange : RecordLayout::Refused;
}

// The lease range of a node (snowflake.lease_worker_ids, [*lo, *hi]) in
// layout g: the default range, every id, narrows to the layout's worker ids;
// a range given beyond them does not fit (false).
bool fit_lease_range(const Geometry& g, bool default_range, int32_t* lo, int32_t* hi) noexcept;
// The text a node shows for its layout: the profile's name when one is
// equal to it ("twitter"), else layout_text() ("time 40, worker 12, ...").
std::string geometry_text(const Geometry& g) noexcept;

// Even low bits at low load (opt-in): the sequence of each new unit starts
// at an offset in [0, spread) drawn from random (the caller's source), so
// that at low rates the low bits of the ids are even, and ids stay
// strictly increasing within a unit. spread is a power of two, at most a
// quarter of the unit's sequences; a unit then holds ids_per_unit - offset
// ids (on average (spread - 1) / 2 fewer). A layout whose lowest field is
// not the sequence gets no spread (1).
int32_t spread_for(const IdLayout& layout, int32_t wanted) noexcept;  // wanted rounded down, capped
int32_t first_sequence(int32_t spread, uint32_t random) noexcept;

}  // namespace snowflake::core
