// snowflake-inspect: decoding Snowflake ids and UUIDv7 values outside the
// database.
//
// Everything the command decides lives here, as pure functions with no I/O:
// reading the command line into a Request, classifying one input token as a
// Snowflake id, a UUID or neither, and formatting the result as text or as
// one line of JSON (JSON Lines). main.cpp only reads arguments and stdin and
// writes what these functions return. The bit layout, the UUIDv7 bytes and the
// epoch parser are the extension's own (src/core), so the command and the
// SQL decoders cannot disagree on what an id means.
#pragma once

#include "core/id_layout.hpp"
#include "core/text_id.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace snowflake::inspect {

// Exit statuses.
constexpr int kExitOk = 0;
constexpr int kExitInvalidInput = 1;  // at least one input was not an id
constexpr int kExitUsage = 2;         // bad command line
constexpr int kExitOutput = 3;        // the output could not be written

enum class Action { Decode, Compose, Help, Version, Usage };
enum class Format { Text, Json };
// An epoch preset whose ids split the 10 worker bits further: Twitter's
// datacenter (5 bits) and worker within it (5), Discord's internal worker
// (5) and internal process (5).
enum class Preset { None, Twitter, Discord };

struct Request {
    Action action = Action::Decode;
    Format format = Format::Text;
    int64_t epoch_unix_us = 0;       // the epoch of Snowflake ids, in Unix microseconds
    std::string epoch_name;          // "default", "twitter", "discord" or the text given
    Preset preset = Preset::None;    // --epoch twitter or discord (any case)
    std::vector<std::string> inputs; // ids and UUIDs from the command line; "-" is stdin
    bool read_stdin = false;         // no inputs given: read stdin
    std::string error;               // Action::Usage: what is wrong with the command line
    int64_t compose_unix_us = 0;     // Action::Compose: the time of --from-timestamp
    // --format: the text format of the ids given (decimal by default; base32
    // or base62 only when named: never guessed from the characters)
    core::TextFormat id_format = core::TextFormat::Decimal;
    bool text_forms = false;  // --text-forms: show each id's base32 and base62 text
    // --layout NAME|TEXT: the layout the ids were made in (the node's 41/10/12
    // without it). A profile with an epoch of its own (discord, sonyflake,
    // instagram) brings it unless --epoch is given; the preset's worker
    // halves apply only to a 10-bit worker id, and --layout discord implies
    // Discord's unless --epoch names another.
    core::IdLayout layout;
};

// --from-timestamp TIME (Action::Compose): the smallest id any node can issue
// in the millisecond of TIME under the epoch, as snowflake_from_timestamp()
// in SQL (snowflake_from_timestamp_as() under a layout: the first id of
// TIME's unit). TIME is an ISO 8601 timestamp with a UTC offset or Unix
// milliseconds. False, and *why, when TIME lies before the epoch or past the
// end of the layout's time field (41 bits of milliseconds by default), or
// when the layout's top field is not the time (its ids do not order by time).
bool compose_from_timestamp(int64_t unix_us, int64_t epoch_unix_us, int64_t* id, std::string* why,
                            const core::IdLayout& layout = core::IdLayout{}) noexcept;
// The answer: the id alone (text), or
//   {"from_timestamp":"2026-01-01T00:00:00.000Z","id":"..."} (JSON).
std::string format_composed(Format f, int64_t unix_us, int64_t id) noexcept;

// Epoch presets, in Unix milliseconds.
constexpr int64_t kTwitterEpochMs = 1288834974657;  // 2010-11-04T01:42:54.657Z
constexpr int64_t kDiscordEpochMs = 1420070400000;  // 2015-01-01T00:00:00.000Z

// The epoch of --epoch NAME_OR_TIME: "default" (the extension's default,
// core::kDefaultEpoch), "twitter", "discord", Unix milliseconds (digits
// only), or an ISO 8601 timestamp with a UTC offset (core::parse_epoch).
// Returns false and sets *why when the text is none of these.
bool parse_epoch_option(std::string_view text, int64_t* unix_us, std::string* why) noexcept;

// argv[1..argc-1]. A token that starts with '-' followed by a digit is an
// input (a negative number, reported as such), not an option.
Request parse_args(int argc, const char* const* argv) noexcept;

std::string usage_text() noexcept;
std::string version_text() noexcept;

enum class Kind { Snowflake, Uuid, Invalid };

struct Decoded {
    Kind kind = Kind::Invalid;
    std::string input;      // the token as given
    std::string canonical;  // the id in decimal, or the UUID in lower-case 8-4-4-4-12 form
    // Snowflake ids
    int64_t id = 0;         // the id
    int64_t ms = 0;         // milliseconds since the epoch (the time field times its unit)
    int32_t worker = 0;
    int32_t sequence = 0;
    int64_t epoch_unix_us = 0;
    // Snowflake ids and UUIDs: the instant, in Unix microseconds
    int64_t unix_us = 0;
    // Kind::Invalid: why, as in "not a number"
    std::string error;
    // Snowflake ids under a preset (add_preset_fields): the worker's two halves
    Preset preset = Preset::None;
    int32_t worker_high = 0;  // Twitter: datacenter; Discord: internal worker
    int32_t worker_low = 0;   // Twitter: worker in the datacenter; Discord: internal process
    // Snowflake ids with --text-forms (add_text_forms): the id's text forms
    std::string base32;
    std::string base62;
};

// Splits the worker id of a Snowflake id by the preset's layout (nothing for
// other kinds or Preset::None). format_text and format_json then add
//   Twitter: datacenter=28 datacenter_worker=26
//   Discord: internal_worker=1 internal_process=0
void add_preset_fields(Decoded* d, Preset p) noexcept;

// Adds a Snowflake id's base32 and base62 text (nothing for other kinds).
// format_text and format_json then add
//   base32=070FNENJ40W00 base62=0IfbtDtw5i4
void add_text_forms(Decoded* d) noexcept;

// Classifies and decodes one token. In the decimal format (the default),
// decimal digits are a Snowflake id (0 to 9223372036854775807); in base32
// or base62 (--format), an id of that format, as snowflake_decode_text()
// reads it (base32 leniently: either case, hyphens ignored). In every
// format, 32 hexadecimal digits, optionally in 8-4-4-4-12 groups and
// optionally in braces, are a UUID, which must be an RFC 9562 version-7
// UUID (no id of any format has that form). Anything else is invalid, with
// the reason. An id is decoded under the layout (the node's by default); an
// id at or above 2^id_bits of the layout is not one of its ids (invalid).
Decoded decode_token(std::string_view token, int64_t epoch_unix_us,
                     core::TextFormat id_format = core::TextFormat::Decimal,
                     const core::IdLayout& layout = core::IdLayout{}) noexcept;

// Splits a line of input at spaces, tabs, commas and line ends.
std::vector<std::string_view> split_tokens(std::string_view line) noexcept;

// RFC 3339 in UTC: 2026-11-29T11:09:56.498Z. Milliseconds always; six
// digits when the instant has microseconds (only epochs with microseconds
// give such times). Years past 9999 (UUIDv7 reaches 10889) get five digits.
std::string format_time(int64_t unix_us) noexcept;

// One line, without the line end:
//   252752938651381760 time=2026-11-29T11:09:56.498Z worker=7 sequence=0
//   01a22700-f63a-78f3-a26f-1db9e426f23a time=2026-11-29T11:09:56.498Z
// Invalid input has no text line: see error_message.
std::string format_text(const Decoded& d) noexcept;

// One JSON object, without the line end. Ids are strings (JavaScript numbers
// cannot hold them); small numbers are numbers:
//   {"input":"252752938651381760","type":"snowflake","id":"252752938651381760",
//    "time":"2026-11-29T11:09:56.498Z","ms_since_epoch":60001234567,"worker":7,
//    "sequence":0,"epoch":"2025-01-01T00:00:00.000Z",
//    "timestamp":"2026-11-29T11:09:56.498Z","worker_id":7}
//   (a preset's halves of the worker id follow worker_id; then, with
//   --text-forms, "base32":"070FNENJ40W00","base62":"0IfbtDtw5i4", as HTTP's
//   /v1/ids/{id} names them)
//   {"input":"...","type":"uuidv7","uuid":"...","time":"...","unix_ms":1796036996498,
//    "timestamp":"..."}
// timestamp, worker_id, sequence and ms_since_epoch are the decoded-id
// vocabulary HTTP's /v1/ids/{id} shares (the names; the values agree for an
// epoch in whole milliseconds and years up to 9999: this timestamp is time's
// text, which keeps an epoch's microseconds and writes a year as four
// digits or more, where HTTP writes milliseconds and RFC 3339's signed
// years); time and worker are the same values under their older names, kept
// for scripts that read them.
//   {"input":"abc","type":"invalid","error":"not a number or a UUID"}
std::string format_json(const Decoded& d) noexcept;

// The message for stderr, without the line end:
//   snowflake-inspect: "abc": not a number or a UUID
//   snowflake-inspect: stdin line 3: "abc": not a number or a UUID
// line <= 0: the token came from the command line.
std::string error_message(const Decoded& d, long line) noexcept;

// A JSON string literal of arbitrary bytes: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD.
std::string json_string(std::string_view s) noexcept;

}  // namespace snowflake::inspect
