#include "id_layout.hpp"

#include <cstdio>
#include <cstring>

namespace snowflake::core {

namespace {

IdLayout make(int32_t time_bits, int32_t worker_bits, int32_t sequence_bits, int32_t unit_ms, IdField first,
              IdField second, IdField third) noexcept {
    IdLayout l;
    l.time_bits = time_bits;
    l.worker_bits = worker_bits;
    l.sequence_bits = sequence_bits;
    l.unit_ms = unit_ms;
    l.order[0] = first;
    l.order[1] = second;
    l.order[2] = third;
    return l;
}

constexpr IdField T = IdField::Time;
constexpr IdField W = IdField::Worker;
constexpr IdField S = IdField::Sequence;

const LayoutProfile kProfiles[] = {
    {"twitter", make(41, 10, 12, 1, T, W, S), -1,
     "41-bit milliseconds (69.7 years), 1,024 worker ids, 4,096 ids a millisecond each: the default"},
    {"js-safe", make(41, 6, 6, 1, T, W, S), -1,
     "every id below 2^53: 41-bit milliseconds (69.7 years), 64 worker ids, 64 ids a millisecond each"},
    // sonyflake's default: 39 bits of 10 ms, then the sequence, then a
    // 16-bit machine id; its default start time 2014-09-01 00:00:00 UTC.
    {"sonyflake", make(39, 16, 8, 10, T, S, W), 1409529600000,
     "sonyflake's order (time, sequence, machine): 10 ms units (174 years), 65,536 worker ids, 256 ids a "
     "unit each"},
    // Discord's: 42 bits of milliseconds since 2015-01-01, a 5-bit worker
    // and a 5-bit process id (here one 10-bit worker id: worker * 32 +
    // process), a 12-bit increment. Its top time bit is zero until 2084,
    // so our 41 bits read and write the same ids until then.
    {"discord", make(41, 10, 12, 1, T, W, S), 1420070400000,
     "Discord's bits until 2084-09-06, when their 42-bit time field first sets the top bit (ours ends "
     "there); the worker id is Discord's worker * 32 + process"},
    // Instagram's: 41 bits of milliseconds since their epoch, a 13-bit
    // shard id, a 10-bit sequence: 64 bits, positive only while the time
    // field's top bit is zero. We take 40 bits: the same ids until then.
    {"instagram", make(40, 13, 10, 1, T, W, S), 1314220021721,
     "Instagram's bits with 40 bits of time: the same ids until 2046-06-27, when their 41-bit time field "
     "sets the sign bit; 8,192 shard ids, 1,024 ids a millisecond each"},
};
constexpr size_t kProfileCount = sizeof(kProfiles) / sizeof(kProfiles[0]);

int32_t width(const IdLayout& l, IdField f) noexcept {
    switch (f) {
        case IdField::Time: return l.time_bits;
        case IdField::Worker: return l.worker_bits;
        case IdField::Sequence: return l.sequence_bits;
    }
    return 0;
}

int32_t* width_of(IdLayout& l, IdField f) noexcept {
    switch (f) {
        case IdField::Time: return &l.time_bits;
        case IdField::Worker: return &l.worker_bits;
        case IdField::Sequence: return &l.sequence_bits;
    }
    return &l.time_bits;
}

const char* field_name(IdField f) noexcept {
    switch (f) {
        case IdField::Time: return "time";
        case IdField::Worker: return "worker";
        case IdField::Sequence: return "sequence";
    }
    return "?";
}

uint64_t mask(int32_t bits) noexcept { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

void say(char* why, size_t size, const char* text) noexcept {
    if (why != nullptr && size > 0) snprintf(why, size, "%s", text);
}
template <class... Args>
void say(char* why, size_t size, const char* fmt, Args... args) noexcept {
    if (why != nullptr && size > 0) snprintf(why, size, fmt, args...);
}

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The profile text names, spaces around the name allowed; nullptr if none.
const LayoutProfile* profile_named(const char* text) noexcept {
    while (is_space(*text)) text++;
    size_t len = std::strlen(text);
    while (len > 0 && is_space(text[len - 1])) len--;
    char name[24];
    if (len >= sizeof(name)) return nullptr;
    std::memcpy(name, text, len);
    name[len] = '\0';
    return find_layout_profile(name);
}

// Reads a word of letters, hyphens or digits at p (after spaces).
size_t word_at(const char* p, char* out, size_t size) noexcept {
    size_t n = 0;
    while (p[n] != '\0' && !is_space(p[n]) && p[n] != ',') {
        if (n + 1 < size) out[n] = p[n];
        n++;
    }
    out[n < size ? n : size - 1] = '\0';
    return n;
}

// A decimal number of at most 4 digits, optionally followed by suffix.
bool number_with(const char* word, const char* suffix, int32_t* out) noexcept {
    int32_t v = 0;
    size_t i = 0;
    for (; word[i] >= '0' && word[i] <= '9'; i++) {
        if (i >= 4) return false;
        v = v * 10 + (word[i] - '0');
    }
    if (i == 0 || std::strcmp(word + i, suffix) != 0) return false;
    *out = v;
    return true;
}

}  // namespace

bool operator==(const IdLayout& a, const IdLayout& b) noexcept {
    return a.time_bits == b.time_bits && a.worker_bits == b.worker_bits && a.sequence_bits == b.sequence_bits &&
           a.unit_ms == b.unit_ms && a.order[0] == b.order[0] && a.order[1] == b.order[1] &&
           a.order[2] == b.order[2];
}

const LayoutProfile* layout_profiles(size_t* count) noexcept {
    *count = kProfileCount;
    return kProfiles;
}

const LayoutProfile* find_layout_profile(const char* name) noexcept {
    if (name == nullptr) return nullptr;
    for (const LayoutProfile& p : kProfiles)
        if (std::strcmp(p.name, name) == 0) return &p;
    return nullptr;
}

const LayoutProfile* profile_of(const IdLayout& layout) noexcept {
    for (const LayoutProfile& p : kProfiles)
        if (p.layout == layout && p.foreign_epoch_unix_ms < 0) return &p;
    return nullptr;
}

bool layout_valid(const IdLayout& l, char* why, size_t why_size) noexcept {
    bool seen[3] = {false, false, false};
    for (IdField f : l.order) {
        const auto i = static_cast<size_t>(f);
        if (i > 2 || seen[i]) {
            say(why, why_size, "each of time, worker and sequence must appear exactly once");
            return false;
        }
        seen[i] = true;
    }
    for (IdField f : l.order) {
        if (width(l, f) < 1) {
            char text[120];
            snprintf(text, sizeof(text), "the %s field needs at least one bit", field_name(f));
            say(why, why_size, text);
            return false;
        }
    }
    if (l.worker_bits > 16) {
        say(why, why_size, "the worker id has at most 16 bits (65,536 worker ids)");
        return false;
    }
    if (l.sequence_bits > 22) {
        say(why, why_size, "the sequence has at most 22 bits");
        return false;
    }
    if (l.time_bits > 62 || l.time_bits + l.worker_bits + l.sequence_bits > 63) {
        char text[160];
        snprintf(text, sizeof(text),
                 "the fields add up to %d bits; an id has 63 (the sign bit stays zero: ids are positive bigints)",
                 l.time_bits + l.worker_bits + l.sequence_bits);
        say(why, why_size, text);
        return false;
    }
    if (l.unit_ms < 1 || l.unit_ms > 1000) {
        say(why, why_size, "the time unit is 1 to 1000 ms");
        return false;
    }
    return true;
}

bool parse_layout(const char* text, IdLayout* out, char* why, size_t why_size) noexcept {
    if (text == nullptr) {
        say(why, why_size, "no layout given");
        return false;
    }
    while (is_space(*text)) text++;
    if (const LayoutProfile* p = profile_named(text)) {
        *out = p->layout;
        return true;
    }
    IdLayout l;
    int fields = 0;
    bool unit_seen = false;
    const char* p = text;
    char name[24], value[24], msg[200];
    while (true) {
        while (is_space(*p)) p++;
        if (*p == '\0') break;
        p += word_at(p, name, sizeof(name));
        while (is_space(*p)) p++;
        const size_t n = word_at(p, value, sizeof(value));
        p += n;
        while (is_space(*p)) p++;
        if (*p == ',') {
            p++;
        } else if (*p != '\0') {
            say(why, why_size, "the parts of a layout are separated by commas");
            return false;
        }
        if (std::strcmp(name, "unit") == 0) {
            if (unit_seen || !number_with(value, "ms", &l.unit_ms)) {
                say(why, why_size, "the unit is written once, as a number of milliseconds: \"unit 10ms\"");
                return false;
            }
            unit_seen = true;
            continue;
        }
        IdField f;
        if (std::strcmp(name, "time") == 0)
            f = IdField::Time;
        else if (std::strcmp(name, "worker") == 0)
            f = IdField::Worker;
        else if (std::strcmp(name, "sequence") == 0)
            f = IdField::Sequence;
        else {
            snprintf(msg, sizeof(msg),
                     "\"%s\" is neither a profile (twitter, js-safe, sonyflake, discord, instagram) nor a field "
                     "(time, worker, sequence, unit)",
                     name);
            say(why, why_size, msg);
            return false;
        }
        int32_t bits = 0;
        if (!number_with(value, "", &bits)) {
            snprintf(msg, sizeof(msg), "the %s field's width is a number of bits: \"%s 12\"", name, name);
            say(why, why_size, msg);
            return false;
        }
        for (int i = 0; i < fields; i++) {
            if (l.order[i] == f) {
                snprintf(msg, sizeof(msg), "the %s field is given twice", name);
                say(why, why_size, msg);
                return false;
            }
        }
        if (fields == 3) {
            say(why, why_size, "a layout has three fields");
            return false;
        }
        l.order[fields++] = f;
        *width_of(l, f) = bits;
    }
    if (fields != 3) {
        say(why, why_size, "a layout names all three fields, from the top bit down: \"time 41, worker 10, sequence 12\"");
        return false;
    }
    if (!layout_valid(l, why, why_size)) return false;
    *out = l;
    return true;
}

bool parse_layout_arg(const char* text, LayoutArg* out, char* why, size_t why_size) noexcept {
    IdLayout l;
    if (!parse_layout(text, &l, why, why_size)) return false;
    const LayoutProfile* p = profile_named(text);  // as parse_layout reads a name
    out->layout = l;
    out->profile = p;
    out->own_epoch_unix_ms = p != nullptr ? p->foreign_epoch_unix_ms : -1;
    return true;
}

void profile_names(char* out, size_t size, bool own_epoch_only) noexcept {
    if (out == nullptr || size == 0) return;
    out[0] = '\0';
    size_t used = 0;
    for (const LayoutProfile& p : kProfiles) {
        if (own_epoch_only && p.foreign_epoch_unix_ms < 0) continue;
        const int n = snprintf(out + used, size - used, "%s%s", used == 0 ? "" : ", ", p.name);
        if (n < 0 || static_cast<size_t>(n) >= size - used) return;  // truncated
        used += static_cast<size_t>(n);
    }
}

bool node_geometry(const IdLayout& l, Geometry* out, char* why, size_t why_size) noexcept {
    if (l.order[0] != IdField::Time || l.order[1] != IdField::Worker || l.order[2] != IdField::Sequence) {
        say(why, why_size,
            "a node issues ids whose fields run time, worker, sequence from the top bit down; this layout's "
            "order (%s, %s, %s) is read and built by snowflake_decode_as() and snowflake_compose_as() only",
            field_name(l.order[0]), field_name(l.order[1]), field_name(l.order[2]));
        return false;
    }
    if (l.unit_ms != 1) {
        say(why, why_size,
            "a node issues ids in units of 1 ms; this layout's unit of %d ms is read and built by "
            "snowflake_decode_as() and snowflake_compose_as() only",
            l.unit_ms);
        return false;
    }
    if (l.time_bits > kMaxNodeTimeBits) {
        say(why, why_size,
            "a node's time field has at most %d bits (the mark file and the WAL hold milliseconds up to "
            "2^%d - 1); this layout has %d",
            kMaxNodeTimeBits, kMaxNodeTimeBits, l.time_bits);
        return false;
    }
    if (l.time_bits < kMinNodeTimeBits) {
        say(why, why_size,
            "a node's time field has at least %d bits (2^%d ms, about a year: a node needs a year of its "
            "lifetime left at start); this layout has %d",
            kMinNodeTimeBits, kMinNodeTimeBits, l.time_bits);
        return false;
    }
    if (!geometry_valid(l.time_bits, l.worker_bits, l.sequence_bits)) {
        say(why, why_size, "a node's worker id and sequence have at most 30 bits each");
        return false;
    }
    *out = geometry_of(l.time_bits, l.worker_bits, l.sequence_bits);
    return true;
}

IdLayout layout_of(const Geometry& g) noexcept {
    return make(g.time_bits, g.worker_bits, g.sequence_bits, 1, T, W, S);
}

bool fit_lease_range(const Geometry& g, bool default_range, int32_t* lo, int32_t* hi) noexcept {
    if (*hi <= g.max_worker) return true;
    if (!default_range || *lo > g.max_worker) return false;
    *hi = g.max_worker;
    return true;
}

std::string geometry_text(const Geometry& g) noexcept {
    const IdLayout l = layout_of(g);
    for (const LayoutProfile& p : kProfiles)
        if (p.foreign_epoch_unix_ms < 0 && p.layout == l) return p.name;
    return layout_text(l);
}

std::string layout_text(const IdLayout& l) noexcept {
    char text[96];
    snprintf(text, sizeof(text), "%s %d, %s %d, %s %d, unit %dms", field_name(l.order[0]), width(l, l.order[0]),
             field_name(l.order[1]), width(l, l.order[1]), field_name(l.order[2]), width(l, l.order[2]),
             l.unit_ms);
    return text;
}

int32_t field_shift(const IdLayout& l, IdField field) noexcept {
    int32_t shift = 0;
    for (int i = 2; i >= 0; i--) {
        if (l.order[i] == field) return shift;
        shift += width(l, l.order[i]);
    }
    return shift;
}

int64_t max_time(const IdLayout& l) noexcept { return static_cast<int64_t>(mask(l.time_bits)); }
int32_t max_worker_id(const IdLayout& l) noexcept { return static_cast<int32_t>(mask(l.worker_bits)); }
int32_t max_sequence_of(const IdLayout& l) noexcept { return static_cast<int32_t>(mask(l.sequence_bits)); }
int32_t ids_per_unit(const IdLayout& l) noexcept { return max_sequence_of(l) + 1; }
int32_t id_bits(const IdLayout& l) noexcept { return l.time_bits + l.worker_bits + l.sequence_bits; }

bool time_leads(const IdLayout& l) noexcept { return l.order[0] == IdField::Time; }

bool id_fits(const IdLayout& l, int64_t id) noexcept {
    return id >= 0 && (static_cast<uint64_t>(id) >> id_bits(l)) == 0;
}

bool time_of_ms(const IdLayout& l, int64_t ms_since_epoch, int64_t* time) noexcept {
    if (ms_since_epoch < 0) return false;
    const int64_t t = ms_since_epoch / l.unit_ms;  // not negative: division floors
    if (t > max_time(l)) return false;
    *time = t;
    return true;
}

bool ms_of_time(const IdLayout& l, int64_t time, int64_t* ms) noexcept {
    if (time < 0 || time > INT64_MAX / l.unit_ms) return false;
    *ms = time * l.unit_ms;
    return true;
}

int64_t compose_in(const IdLayout& l, int64_t time, int32_t worker, int32_t sequence) noexcept {
    const uint64_t t = (static_cast<uint64_t>(time) & mask(l.time_bits)) << field_shift(l, IdField::Time);
    const uint64_t w = (static_cast<uint64_t>(static_cast<uint32_t>(worker)) & mask(l.worker_bits))
                       << field_shift(l, IdField::Worker);
    const uint64_t s = (static_cast<uint64_t>(static_cast<uint32_t>(sequence)) & mask(l.sequence_bits))
                       << field_shift(l, IdField::Sequence);
    return static_cast<int64_t>(t | w | s);
}

Fields decompose_in(const IdLayout& l, int64_t id) noexcept {
    const auto u = static_cast<uint64_t>(id);
    Fields f;
    f.ms = static_cast<int64_t>((u >> field_shift(l, IdField::Time)) & mask(l.time_bits));
    f.worker = static_cast<int32_t>((u >> field_shift(l, IdField::Worker)) & mask(l.worker_bits));
    f.sequence = static_cast<int32_t>((u >> field_shift(l, IdField::Sequence)) & mask(l.sequence_bits));
    return f;
}

int64_t lifetime_end_unix_ms(const IdLayout& l, int64_t epoch_unix_ms) noexcept {
    // (max_time + 1) units; at most 2^62 units of at most 1000 ms would
    // overflow, so saturate.
    const uint64_t units = static_cast<uint64_t>(max_time(l)) + 1;
    const uint64_t limit = static_cast<uint64_t>(INT64_MAX - (epoch_unix_ms > 0 ? epoch_unix_ms : 0));
    if (units > limit / static_cast<uint64_t>(l.unit_ms)) return INT64_MAX;
    return epoch_unix_ms + static_cast<int64_t>(units * static_cast<uint64_t>(l.unit_ms));
}

LayoutFit layout_fits(const IdLayout& l, int32_t worker, int64_t epoch_unix_ms, int64_t now_unix_ms) noexcept {
    if (worker > max_worker_id(l)) return LayoutFit::WorkerTooLarge;
    if (now_unix_ms < epoch_unix_ms) return LayoutFit::EpochAhead;
    if (now_unix_ms >= lifetime_end_unix_ms(l, epoch_unix_ms)) return LayoutFit::LifetimeOver;
    return LayoutFit::Ok;
}

int32_t spread_for(const IdLayout& l, int32_t wanted) noexcept {
    // Only a sequence in the low bits evens them (sonyflake's order puts
    // the worker id there).
    if (wanted < 2 || l.order[2] != IdField::Sequence) return 1;
    int32_t cap = ids_per_unit(l) / 4;
    int32_t s = 1;
    while (s * 2 <= wanted && s * 2 <= cap) s *= 2;
    return s;
}

int32_t first_sequence(int32_t spread, uint32_t random) noexcept {
    if (spread <= 1) return 0;
    return static_cast<int32_t>(random & static_cast<uint32_t>(spread - 1));
}

}  // namespace snowflake::core
