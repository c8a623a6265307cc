#include "inspect.hpp"

#include "core/ascii.hpp"
#include "core/epoch.hpp"
#include "core/generator.hpp"
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
    auto set_epoch = [&r](std::string_view value, std::string* message) {
        std::string reason;
        if (!parse_epoch_option(value, &r.epoch_unix_us, &reason)) {
            *message = "invalid epoch \"" + std::string(value) + "\": " + reason +
                       " Use default, twitter, discord, Unix milliseconds or a timestamp such as "
                       "2025-01-01T00:00:00Z.";
            return false;
        }
        r.epoch_name = std::string(value);
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
                } else if (o == 'e' || o == 'f') {
                    std::string_view value;
                    if (k + 1 < a.size()) {
                        value = a.substr(k + 1);
                    } else if (i + 1 < argc && argv[i + 1] != nullptr) {
                        value = argv[++i];
                    } else {
                        return usage(std::string("option -") + o + " needs a value");
                    }
                    std::string message;
                    if (!(o == 'e' ? set_epoch(value, &message) : set_format(value, &message)))
                        return usage(message);
                    break;
                } else {
                    return usage("unknown option \"-" + std::string(1, o) + "\" in \"" + std::string(a) + "\"");
                }
            }
        } else {
            return usage("unknown option \"" + std::string(a) + "\"");
        }
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

bool compose_from_timestamp(int64_t unix_us, int64_t epoch_unix_us, int64_t* id, std::string* why) noexcept {
    // Both lie within years 1 to 9999: the difference cannot overflow.
    const int64_t ms = core::floor_div(unix_us - epoch_unix_us, core::kUsPerMs);
    if (ms < 0) {
        *why = "the time lies before the epoch";
        return false;
    }
    if (ms > core::kMaxMs) {
        *why = "the time lies past the end of the epoch's 41-bit millisecond range (about 69.7 years)";
        return false;
    }
    *id = core::first_id_of_ms(ms);
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
           "  --from-timestamp=TIME  instead of decoding: the smallest id of the\n"
           "                     millisecond of TIME (a timestamp with a UTC offset, or\n"
           "                     Unix milliseconds) under the epoch, as SQL's\n"
           "                     snowflake_from_timestamp(): WHERE id >= that id\n"
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
           "-t -f base32.\n"
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

// A Snowflake id decoded under the epoch.
Decoded snowflake_id(std::string_view token, int64_t id, int64_t epoch_unix_us) noexcept {
    const core::Fields f = core::decompose(id);
    Decoded d;
    d.kind = Kind::Snowflake;
    d.input = std::string(token);
    d.canonical = to_string(id);
    d.id = id;
    d.ms = f.ms;
    d.worker = f.worker;
    d.sequence = f.sequence;
    d.epoch_unix_us = epoch_unix_us;
    // |epoch| < 2^58 us and ms < 2^41: no overflow.
    d.unix_us = epoch_unix_us + f.ms * core::kUsPerMs;
    return d;
}

// A token read as an id of a text format (base32, base62), or a UUID.
Decoded decode_text_id(std::string_view token, int64_t epoch_unix_us, core::TextFormat f) noexcept;

}  // namespace

Decoded decode_token(std::string_view token, int64_t epoch_unix_us, core::TextFormat id_format) noexcept {
    if (token.empty()) return invalid(token, "empty input");
    if (id_format != core::TextFormat::Decimal) return decode_text_id(token, epoch_unix_us, id_format);

    if (all_digits(token)) {
        int64_t id = 0;
        if (!parse_decimal(token, &id))
            return invalid(token, "out of range: larger than 9223372036854775807, the largest bigint");
        return snowflake_id(token, id, epoch_unix_us);
    }
    if (token[0] == '-' && all_digits(token.substr(1))) {
        const std::string_view digits = token.substr(1);
        if (digits.find_first_not_of('0') != std::string_view::npos)
            return invalid(token, "negative: Snowflake ids are positive bigints (bit 63 is zero)");
        Decoded zero = decode_token("0", epoch_unix_us);  // -0 is 0, as in SQL
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

Decoded decode_text_id(std::string_view token, int64_t epoch_unix_us, core::TextFormat f) noexcept {
    core::Uuid u{};
    // A UUID has 32 hexadecimal digits: no base32 (13) or base62 (11) id.
    if (core::parse_uuid_text(token, &u)) return decode_token(token, epoch_unix_us, core::TextFormat::Decimal);
    int64_t id = 0;
    core::TextError err;
    if (core::decode_id(token, f, &id, &err)) return snowflake_id(token, id, epoch_unix_us);
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
