// Text forms of ids for URLs and APIs: a Snowflake id in Crockford base32 or
// base62, a UUID as a TypeID or as a ULID's text. Pure: text in, text out.
//
// Every form is fixed width, so that text order (byte order, COLLATE "C")
// equals the order of the values:
//
//   base32  13 characters of Crockford's alphabet 0-9 A-H J K M N P-T V-Z,
//           upper case, most significant first (65 bits: the first
//           character is at most 7). Decoding is lenient as Crockford's
//           specification says: lower case is read as upper case, I and L
//           as 1, O as 0, and hyphens are ignored.
//   base62  11 characters of 0-9 A-Z a-z, most significant first (at most
//           AzL8n0Y58m7 for 2^63 - 1). Case matters.
//   ULID    26 characters of Crockford's alphabet: the UUID's 128 bits after
//           two zero bits, so the first character is at most 7. Upper case;
//           decoded as leniently as base32 (without hyphens).
//   TypeID  prefix, '_', then the same 26 characters in lower case (the
//           TypeID specification, version 0.3.0): the prefix is empty (no
//           '_' then) or up to 63 of a-z and '_', starting and ending with a
//           letter. Decoding is strict: lower case only, no other letter
//           for a digit.
//
// A form is always named by the caller: nothing here guesses it from the text.
#pragma once

#include "pure.hpp"

#include "uuid.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace snowflake::core {

enum class TextFormat { Decimal, Base32, Base62 };
constexpr int kBase32IdChars = 13;
constexpr int kBase62IdChars = 11;
constexpr int kUuidBase32Chars = 26;
constexpr int kMaxTypeidPrefix = 63;

// "decimal", "base32", "base62" (exactly: lower case); false for anything else.
bool parse_text_format(std::string_view name, TextFormat* out) noexcept;
const char* text_format_name(TextFormat f) noexcept;

// An id (>= 0) in the format; "" for a negative id.
std::string encode_id(int64_t id, TextFormat f) noexcept;
// The same into out without allocating (the HTTP endpoint's answers): the
// length written, no NUL added; 0 for a negative id or when cap is below
// kMaxIdTextChars.
constexpr int kMaxIdTextChars = 19;  // the longest: decimal 9223372036854775807
size_t write_id_text(char* out, size_t cap, int64_t id, TextFormat f) noexcept;

// Why a text is not an id, a UUID or a TypeID: a sentence without the text
// itself (the caller quotes it), and the offending character's offset when
// there is one (-1 otherwise).
struct TextError {
    const char* sentence = "";
    int at = -1;
};
// The id a text of the format stands for. Decimal: 1 to 19 digits, no sign,
// no space.
bool decode_id(std::string_view text, TextFormat f, int64_t* out, TextError* err) noexcept;

// The ULID text of a UUID (any version), and back.
std::string uuid_to_ulid(const Uuid& u) noexcept;
bool ulid_to_uuid(std::string_view text, Uuid* out, TextError* err) noexcept;

// TypeID. check_typeid_prefix: the prefix rules above.
bool check_typeid_prefix(std::string_view prefix, TextError* err) noexcept;
// prefix must pass check_typeid_prefix.
std::string encode_typeid(std::string_view prefix, const Uuid& u) noexcept;
bool decode_typeid(std::string_view text, std::string* prefix, Uuid* out, TextError* err) noexcept;

}  // namespace snowflake::core
