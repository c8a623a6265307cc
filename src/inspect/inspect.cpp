#include "inspect.hpp"

#include "core/ascii.hpp"
#include "core/epoch.hpp"
#include "core/generator.hpp"
#include "core/id_layout.hpp"
#include "core/layout.hpp"
#include "core/text.hpp"
#include "core/text_id.hpp"
#include "core/time.hpp"
#include "core/uuid.hpp"

#include <cinttypes>
#include <cstdio>
#include <limits>

#ifndef SNOWFLAKE_VERSION
#define SNOWFLAKE_VERSION "unknown"
#endif

namespace snowflake::inspect {

namespace core = snowflake::core;

namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

bool all_digits(std::string_view s) noexcept {
    if (s.empty()) return false;
    for (char c : s)
        if (!is_digit(c)) return false;
    return true;
}

// Decimal digits to a non-negative int64_t; false on overflow.
bool parse_decimal(std::string_view s, int64_t* out) noexcept {
    int64_t v = 0;
    for (char c : s) {
        const int d = c - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

// The last instant the epoch parser accepts, 9999-12-31T23:59:59.999999Z,
// bounds epochs given in Unix milliseconds too.
constexpr int64_t kMaxEpochUnixUs = int64_t{253402300799} * core::kUsPerS + 999999;

// Does a token that is not a UUID look like an attempt at one?
bool uuid_like(std::string_view s) noexcept {
    if (s.find('{') != std::string_view::npos || s.size() >= 32) return true;
    // A hyphen past the first character, with hex letters or long enough
    // to hold a group of eight digits.
    if (s.size() < 2 || s.substr(1).find('-') == std::string_view::npos) return false;
    if (s.size() >= 9) return true;
    for (char c : s)
        if ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) return true;
    return false;
}

Decoded invalid(std::string_view token, const char* why) noexcept {
    Decoded d;
    d.kind = Kind::Invalid;
    d.input = std::string(token);
    d.error = why;
    return d;
}

std::string to_string(int64_t v) noexcept {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRId64, v);
    return buf;
}

}  // namespace

bool parse_epoch_option(std::string_view text, int64_t* unix_us, std::string* why) noexcept {
    if (core::ascii_iequal(text, "default")) {
        const core::EpochParse p = core::parse_epoch(core::kDefaultEpoch, unix_us);
        if (p == core::EpochParse::Ok) return true;
        *why = core::epoch_parse_text(p);  // cannot happen: a unit test parses it
        return false;
    }
    if (core::ascii_iequal(text, "twitter")) {
        *unix_us = kTwitterEpochMs * core::kUsPerMs;
        return true;
    }
    if (core::ascii_iequal(text, "discord")) {
        *unix_us = kDiscordEpochMs * core::kUsPerMs;
        return true;
    }
    if (all_digits(text)) {
        int64_t ms = 0;
        if (!parse_decimal(text, &ms) || ms > kMaxEpochUnixUs / core::kUsPerMs) {
            *why = "Unix milliseconds past the year 9999";
            return false;
        }
        *unix_us = ms * core::kUsPerMs;
        return true;
    }
    const std::string copy(text);  // parse_epoch reads a NUL-terminated string
    const core::EpochParse p = core::parse_epoch(copy.c_str(), unix_us);
    if (p == core::EpochParse::Ok) return true;
    *why = core::epoch_parse_text(p);
    return false;
}

Request parse_args(int argc, const char* const* argv) noexcept {
    Request r;
    r.epoch_name = "default";
    std::string why;
    parse_epoch_option("default", &r.epoch_unix_us, &why);

    auto usage = [&r](std::string message) {
        r.action = Action::Usage;
        r.error = std::move(message);
        return r;
    };
    bool epoch_given = false;
    auto set_epoch = [&r, &epoch_given](std::string_view value, std::string* message) {
        std::string reason;
        if (!parse_epoch_option(value, &r.epoch_unix_us, &reason)) {
            *message = "invalid epoch \"" + std::string(value) + "\": " + reason +
                       " Use default, twitter, discord, Unix milliseconds or a timestamp such as "
                       "2025-01-01T00:00:00Z.";
            return false;
        }
        r.epoch_name = std::string(value);
        epoch_given = true;
        r.preset = core::ascii_iequal(value, "twitter")   ? Preset::Twitter
                   : core::ascii_iequal(value, "discord") ? Preset::Discord
                                              : Preset::None;
        return true;
    };

    auto set_format = [&r](std::string_view value, std::string* message) {
        if (!core::parse_text_format(value, &r.id_format)) {
            *message = "invalid format \"" + std::string(value) +
                       "\": use decimal, base32 or base62 (in lower case; a format is never guessed)";
            return false;
        }
        return true;
    };

    std::string layout_text;
    bool layout_given = false;
    auto set_layout = [&layout_text, &layout_given](std::string_view value, std::string*) {
        layout_text = std::string(value);  // read once every option is in (--epoch may follow)
        layout_given = true;
        return true;
    };

    bool options_done = false;
    bool help = false, version = false, compose = false;
    auto set_compose = [&r, &compose](std::string_view value, std::string* message) {
        std::string reason;
        int64_t us = 0;
        bool ok = false;
        if (all_digits(value)) {
            int64_t ms = 0;
            ok = parse_decimal(value, &ms) && ms <= kMaxEpochUnixUs / core::kUsPerMs;
            us = ms * core::kUsPerMs;
            if (!ok) reason = "Unix milliseconds past the year 9999";
        } else {
            const std::string copy(value);
            const core::EpochParse p = core::parse_epoch(copy.c_str(), &us);
            ok = p == core::EpochParse::Ok;
            if (!ok) reason = core::epoch_parse_text(p);
        }
        if (!ok) {
            *message = "invalid time \"" + std::string(value) + "\": " + reason +
                       " Use Unix milliseconds or a timestamp such as 2026-01-01T00:00:00Z.";
            return false;
        }
        r.compose_unix_us = us;
        compose = true;
        return true;
    };
    for (int i = 1; i < argc; i++) {
        const std::string_view a = argv[i] != nullptr ? argv[i] : "";
        const bool option = !options_done && a.size() > 1 && a[0] == '-' && !is_digit(a[1]);
        if (!option) {
            r.inputs.emplace_back(a);
            continue;
        }
        if (a == "--") {
            options_done = true;
        } else if (a == "-h" || a == "--help") {
            help = true;
        } else if (a == "-V" || a == "--version") {
            version = true;
        } else if (a == "-j" || a == "--json") {
            r.format = Format::Json;
        } else if (a == "-e" || a == "--epoch") {
            if (i + 1 >= argc || argv[i + 1] == nullptr)
                return usage("option " + std::string(a) + " needs a value");
            std::string message;
            if (!set_epoch(argv[++i], &message)) return usage(message);
        } else if (a.substr(0, 8) == "--epoch=") {
            std::string message;
            if (!set_epoch(a.substr(8), &message)) return usage(message);
        } else if (a == "-f" || a == "--format") {
            if (i + 1 >= argc || argv[i + 1] == nullptr)
                return usage("option " + std::string(a) + " needs a value");
            std::string message;
            if (!set_format(argv[++i], &message)) return usage(message);
        } else if (a.substr(0, 9) == "--format=") {
            std::string message;
            if (!set_format(a.substr(9), &message)) return usage(message);
        } else if (a == "-l" || a == "--layout") {
            if (i + 1 >= argc || argv[i + 1] == nullptr)
                return usage("option " + std::string(a) + " needs a value");
            std::string message;
            set_layout(argv[++i], &message);
        } else if (a.substr(0, 9) == "--layout=") {
            std::string message;
            set_layout(a.substr(9), &message);
        } else if (a == "-t" || a == "--text-forms") {
            r.text_forms = true;
        } else if (a == "--from-timestamp") {
            if (i + 1 >= argc || argv[i + 1] == nullptr)
                return usage("option --from-timestamp needs a value");
            std::string message;
            if (!set_compose(argv[++i], &message)) return usage(message);
        } else if (a.substr(0, 17) == "--from-timestamp=") {
            std::string message;
            if (!set_compose(a.substr(17), &message)) return usage(message);
        } else if (a[1] != '-') {
            // Short options combined, as getopt takes them: "-jV", "-je
            // discord", "-jediscord" (the value of -e is the rest of the
            // token, or the next argument).
            for (size_t k = 1; k < a.size(); k++) {
                const char o = a[k];
                if (o == 'h') {
                    help = true;
                } else if (o == 'V') {
                    version = true;
                } else if (o == 'j') {
                    r.format = Format::Json;
                } else if (o == 't') {
                    r.text_forms = true;
                } else if (o == 'e' || o == 'f' || o == 'l') {
                    std::string_view value;
                    if (k + 1 < a.size()) {
                        value = a.substr(k + 1);
                    } else if (i + 1 < argc && argv[i + 1] != nullptr) {
                        value = argv[++i];
                    } else {
                        return usage(std::string("option -") + o + " needs a value");
                    }
                    std::string message;
                    const bool ok = o == 'e'   ? set_epoch(value, &message)
                                    : o == 'f' ? set_format(value, &message)
                                               : set_layout(value, &message);
                    if (!ok) return usage(message);
                    break;
                } else {
                    return usage("unknown option \"-" + std::string(1, o) + "\" in \"" + std::string(a) + "\"");
                }
            }
        } else {
            return usage("unknown option \"" + std::string(a) + "\"");
        }
    }
    if (layout_given && !help && !version) {
        core::LayoutArg arg;
        char why[256] = "";
        if (!core::parse_layout_arg(layout_text.c_str(), &arg, why, sizeof(why))) {
            char names[128];
            core::profile_names(names, sizeof(names), false);
            return usage("invalid layout \"" + layout_text + "\": " + why + ". Use a profile (" + names +
                         ") or the fields from the top bit down, such as \"time 39, sequence 8, worker 16, unit "
                         "10ms\".");
        }
        r.layout = arg.layout;
        if (!epoch_given && arg.own_epoch_unix_ms >= 0) {
            r.epoch_unix_us = arg.own_epoch_unix_ms * core::kUsPerMs;
            r.epoch_name = arg.profile->name;
        }
        if (r.preset == Preset::None && arg.profile != nullptr && std::string_view(arg.profile->name) == "discord")
            r.preset = Preset::Discord;
        if (r.layout.worker_bits != core::kWorkerBits) r.preset = Preset::None;  // no 5-bit halves
    }
    if (help) {
        r.action = Action::Help;
    } else if (version) {
        r.action = Action::Version;
    } else if (compose) {
        if (!r.inputs.empty()) return usage("--from-timestamp takes no ids to decode");
        if (r.id_format != core::TextFormat::Decimal || r.text_forms) {
            // The composed id is decimal: say so rather than ignore the option.
            return usage("--from-timestamp prints a decimal id; --format and --text-forms are for decoding");
        }
        r.action = Action::Compose;
        return r;
    }
    r.read_stdin = r.inputs.empty();
    return r;
}

bool compose_from_timestamp(int64_t unix_us, int64_t epoch_unix_us, int64_t* id, std::string* why,
                            const core::IdLayout& layout) noexcept {
    if (!core::time_leads(layout)) {
        *why = "the layout does not order ids by time (its top field is not the time): no id bounds a time's ids";
        return false;
    }
    // Both lie within years 1 to 9999: the difference cannot overflow.
    const int64_t ms = core::floor_div(unix_us - epoch_unix_us, core::kUsPerMs);
    int64_t time = 0;
    if (ms < 0) {
        *why = "the time lies before the epoch";
        return false;
    }
    if (!core::time_of_ms(layout, ms, &time)) {
        char text[160];
        const double years = static_cast<double>(core::lifetime_end_unix_ms(layout, 0)) / (365.25 * 86400000.0);
        if (layout == core::IdLayout{}) {  // the sentence of the node's layout, as before
            std::snprintf(text, sizeof text,
                          "the time lies past the end of the epoch's %d-bit millisecond range (about %.1f years)",
                          layout.time_bits, years);
        } else {
            std::snprintf(
                text, sizeof text,
                "the time lies past the end of the layout's %d-bit range of %d ms units (about %.1f years)",
                layout.time_bits, layout.unit_ms, years);
        }
        *why = text;
        return false;
    }
    *id = core::compose_in(layout, time, 0, 0);
    return true;
}

std::string format_composed(Format f, int64_t unix_us, int64_t id) noexcept {
    if (f == Format::Text) return to_string(id);
    return "{\"from_timestamp\":\"" + format_time(unix_us) + "\",\"id\":\"" + to_string(id) + "\"}";
}

std::string usage_text() noexcept {
    return "Usage: snowflake-inspect [OPTION]... [ID|UUID]...\n"
           "Decodes Snowflake ids into their time, worker id and sequence, and version-7\n"
           "UUIDs into their time. With no ID, or with -, reads standard input: ids and\n"
           "UUIDs separated by spaces, tabs, commas or line ends.\n"
           "\n"
           "Options:\n"
           "  -e, --epoch=EPOCH  the epoch the Snowflake ids were made with (a name in\n"
           "                     any case):\n"
           "                       default  2025-01-01T00:00:00Z, the extension's default\n"
           "                       twitter  2010-11-04T01:42:54.657Z; shows the worker's\n"
           "                                halves too: datacenter, datacenter_worker\n"
           "                       discord  2015-01-01T00:00:00Z; shows the worker's\n"
           "                                halves too: internal_worker, internal_process\n"
           "                     or Unix milliseconds (1420070400000), or an ISO 8601\n"
           "                     timestamp with a UTC offset (\"2024-06-01 00:00:00+02\")\n"
           "  -l, --layout=LAYOUT  the bit layout the ids were made in (default: the\n"
           "                     extension's, time 41, worker 10, sequence 12, unit 1ms):\n"
           "                     a profile, twitter, js-safe, sonyflake, discord or\n"
           "                     instagram (the last three with their system's epoch,\n"
           "                     unless --epoch is given), or the fields from the top bit\n"
           "                     down, \"time 39, sequence 8, worker 16, unit 10ms\", as\n"
           "                     SQL's snowflake_decode_as() reads them\n"
           "  --from-timestamp=TIME  instead of decoding: the smallest id of the\n"
           "                     millisecond (the layout's time unit) of TIME (a\n"
           "                     timestamp with a UTC offset, or Unix milliseconds)\n"
           "                     under the epoch, as SQL's snowflake_from_timestamp():\n"
           "                     WHERE id >= that id\n"
           "  -f, --format=FORMAT  the text format of the ids given: decimal (the\n"
           "                     default), base32 (13 characters of Crockford's base32,\n"
           "                     either case, hyphens ignored) or base62 (11\n"
           "                     characters), as SQL's snowflake_encode() writes them;\n"
           "                     never guessed from the characters. UUIDs are read in\n"
           "                     every format\n"
           "  -t, --text-forms   show each id's base32 and base62 text too\n"
           "  -j, --json         one JSON object per input, one per line (JSON Lines),\n"
           "                     with ids as strings\n"
           "  -h, --help         show this help\n"
           "  -V, --version      show the version\n"
           "Short options combine: -je discord is -j -e discord, -tf base32 is\n"
           "-t -f base32, -jl sonyflake is -j -l sonyflake.\n"
           "\n"
           "Output: one line per input, in input order, times in UTC (RFC 3339):\n"
           "  252752938651381760 time=2026-11-29T11:09:56.497Z worker=7 sequence=0\n"
           "  01a22700-f63a-78f3-a26f-1db9e426f23a time=2026-11-29T11:11:44.186Z\n"
           "With --text-forms an id's line ends in base32=070FNENJ40W00 base62=0IfbtDtw5i4.\n"
           "\n"
           "Exit status: 0 if every input was decoded; 1 if some input was not a\n"
           "Snowflake id or a version-7 UUID (each is reported on standard error, the\n"
           "others are still decoded); 2 if the command line was wrong; 3 if writing the\n"
           "output failed.\n";
}

std::string version_text() noexcept {
    return "snowflake-inspect (snowflake) " SNOWFLAKE_VERSION "\n";
}

namespace {

// A Snowflake id decoded under the epoch and the layout.
Decoded snowflake_id(std::string_view token, int64_t id, int64_t epoch_unix_us,
                     const core::IdLayout& layout) noexcept {
    if (!core::id_fits(layout, id)) {
        const int bits = core::id_bits(layout);  // below 63: every positive bigint fits 63 bits
        Decoded bad = invalid(token, "");
        bad.error = "not an id of the layout: its ids are below 2^" + std::to_string(bits) + " (" +
                    to_string(int64_t{1} << bits) + ")";
        return bad;
    }
    const core::Fields f = core::decompose_in(layout, id);
    int64_t ms = 0, us = 0, unix_us = 0;
    if (!core::ms_of_time(layout, f.ms, &ms) || __builtin_mul_overflow(ms, core::kUsPerMs, &us) ||
        __builtin_add_overflow(epoch_unix_us, us, &unix_us))
        return invalid(token, "its time is out of range: the layout's time field is too wide for a 64-bit time");
    Decoded d;
    d.kind = Kind::Snowflake;
    d.input = std::string(token);
    d.canonical = to_string(id);
    d.id = id;
    d.ms = ms;
    d.worker = f.worker;
    d.sequence = f.sequence;
    d.epoch_unix_us = epoch_unix_us;
    d.unix_us = unix_us;
    return d;
}

// A token read as an id of a text format (base32, base62), or a UUID.
Decoded decode_text_id(std::string_view token, int64_t epoch_unix_us, core::TextFormat f,
                       const core::IdLayout& layout) noexcept;

}  // namespace

Decoded decode_token(std::string_view token, int64_t epoch_unix_us, core::TextFormat id_format,
                     const core::IdLayout& layout) noexcept {
    if (token.empty()) return invalid(token, "empty input");
    if (id_format != core::TextFormat::Decimal) return decode_text_id(token, epoch_unix_us, id_format, layout);

    if (all_digits(token)) {
        int64_t id = 0;
        if (!parse_decimal(token, &id))
            return invalid(token, "out of range: larger than 9223372036854775807, the largest bigint");
        return snowflake_id(token, id, epoch_unix_us, layout);
    }
    if (token[0] == '-' && all_digits(token.substr(1))) {
        const std::string_view digits = token.substr(1);
        if (digits.find_first_not_of('0') != std::string_view::npos)
            return invalid(token, "negative: Snowflake ids are positive bigints (bit 63 is zero)");
        Decoded zero = decode_token("0", epoch_unix_us, core::TextFormat::Decimal, layout);  // -0 is 0, as in SQL
        zero.input = std::string(token);
        return zero;
    }

    core::Uuid u{};
    if (core::parse_uuid_text(token, &u)) {
        const int version = core::uuid_version(u);
        if (version != 7) {
            Decoded d = invalid(token, "");
            d.error = "UUID version " + std::to_string(version) + " is not a version-7 UUID";
            return d;
        }
        if (!core::uuid_rfc_variant(u))
            return invalid(token, "not a version-7 UUID: its variant bits are not RFC 9562's (10)");
        Decoded d;
        d.kind = Kind::Uuid;
        d.input = std::string(token);
        char text[core::kUuidTextLen + 1];
        core::format_uuid(text, u);
        d.canonical = text;
        d.unix_us = core::uuid_ms(u) * core::kUsPerMs;
        return d;
    }

    if (uuid_like(token))
        return invalid(token,
                       "not a UUID: expected 32 hexadecimal digits, as in "
                       "01a22700-f63a-78f3-a26f-1db9e426f23a");
    if (is_digit(token[0]) || token[0] == '-' || token[0] == '+') return invalid(token, "not a number");
    return invalid(token, "not a number or a UUID");
}

namespace {

Decoded decode_text_id(std::string_view token, int64_t epoch_unix_us, core::TextFormat f,
                       const core::IdLayout& layout) noexcept {
    core::Uuid u{};
    // A UUID has 32 hexadecimal digits: no base32 (13) or base62 (11) id.
    if (core::parse_uuid_text(token, &u)) return decode_token(token, epoch_unix_us, core::TextFormat::Decimal);
    int64_t id = 0;
    core::TextError err;
    if (core::decode_id(token, f, &id, &err)) return snowflake_id(token, id, epoch_unix_us, layout);
    Decoded d = invalid(token, "");
    d.error = std::string("not a ") + core::text_format_name(f) + " id: " + err.sentence;
    if (err.at >= 0) d.error += " (character " + std::to_string(err.at + 1) + ")";
    return d;
}

}  // namespace

void add_text_forms(Decoded* d) noexcept {
    if (d->kind != Kind::Snowflake) return;
    d->base32 = core::encode_id(d->id, core::TextFormat::Base32);
    d->base62 = core::encode_id(d->id, core::TextFormat::Base62);
}

std::vector<std::string_view> split_tokens(std::string_view line) noexcept {
    std::vector<std::string_view> out;
    size_t i = 0;
    auto separator = [](char c) { return c == ' ' || c == '\t' || c == ',' || c == '\n' || c == '\r'; };
    while (i < line.size()) {
        while (i < line.size() && separator(line[i])) i++;
        const size_t start = i;
        while (i < line.size() && !separator(line[i])) i++;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
}

std::string format_time(int64_t unix_us) noexcept {
    core::Rfc3339Style style;
    style.micros_when_present = true;
    char buf[40];
    core::format_rfc3339(buf, sizeof buf, core::utc_from_unix_us(unix_us), style);
    return buf;
}

void add_preset_fields(Decoded* d, Preset p) noexcept {
    if (d->kind != Kind::Snowflake || p == Preset::None) return;
    d->preset = p;
    d->worker_high = d->worker >> 5;
    d->worker_low = d->worker & 31;
}

namespace {

// The names of the worker's halves under a preset.
const char* high_name(Preset p) noexcept { return p == Preset::Twitter ? "datacenter" : "internal_worker"; }
const char* low_name(Preset p) noexcept { return p == Preset::Twitter ? "datacenter_worker" : "internal_process"; }

}  // namespace

std::string format_text(const Decoded& d) noexcept {
    switch (d.kind) {
        case Kind::Snowflake:
            return d.canonical + " time=" + format_time(d.unix_us) + " worker=" + std::to_string(d.worker) +
                   " sequence=" + std::to_string(d.sequence) +
                   (d.preset == Preset::None
                        ? std::string()
                        : std::string(" ") + high_name(d.preset) + "=" + std::to_string(d.worker_high) + " " +
                              low_name(d.preset) + "=" + std::to_string(d.worker_low)) +
                   (d.base32.empty() ? std::string() : " base32=" + d.base32 + " base62=" + d.base62);
        case Kind::Uuid:
            return d.canonical + " time=" + format_time(d.unix_us);
        case Kind::Invalid:
            break;
    }
    return std::string();
}

std::string format_json(const Decoded& d) noexcept {
    std::string s = "{\"input\":" + json_string(d.input);
    switch (d.kind) {
        case Kind::Snowflake:
            s += ",\"type\":\"snowflake\",\"id\":\"" + d.canonical + "\",\"time\":\"" + format_time(d.unix_us) +
                 "\",\"ms_since_epoch\":" + to_string(d.ms) + ",\"worker\":" + std::to_string(d.worker) +
                 ",\"sequence\":" + std::to_string(d.sequence) + ",\"epoch\":\"" +
                 format_time(d.epoch_unix_us) + "\"";
            // The shared vocabulary of a decoded id (as HTTP's), after the
            // older names, which stay; the preset's halves come last.
            s += ",\"timestamp\":\"" + format_time(d.unix_us) + "\",\"worker_id\":" + std::to_string(d.worker);
            if (d.preset != Preset::None)
                s += std::string(",\"") + high_name(d.preset) + "\":" + std::to_string(d.worker_high) + ",\"" +
                     low_name(d.preset) + "\":" + std::to_string(d.worker_low);
            if (!d.base32.empty()) s += ",\"base32\":\"" + d.base32 + "\",\"base62\":\"" + d.base62 + "\"";
            s += "}";
            break;
        case Kind::Uuid:
            s += ",\"type\":\"uuidv7\",\"uuid\":\"" + d.canonical + "\",\"time\":\"" + format_time(d.unix_us) +
                 "\",\"unix_ms\":" + to_string(core::floor_div(d.unix_us, core::kUsPerMs)) +
                 ",\"timestamp\":\"" + format_time(d.unix_us) + "\"}";
            break;
        case Kind::Invalid:
            s += ",\"type\":\"invalid\",\"error\":" + json_string(d.error) + "}";
            break;
    }
    return s;
}

std::string error_message(const Decoded& d, long line) noexcept {
    std::string s = "snowflake-inspect: ";
    if (line > 0) s += "stdin line " + std::to_string(line) + ": ";
    // The token quoted as a JSON string: control characters and invalid
    // UTF-8 cannot reach the terminal raw.
    return s + json_string(d.input) + ": " + d.error;
}

std::string json_string(std::string_view s) noexcept { return core::json_string(s); }

}  // namespace snowflake::inspect
