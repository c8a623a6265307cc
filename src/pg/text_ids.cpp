// Text forms of ids for URLs and APIs (core/text_id.hpp): snowflake_encode,
// snowflake_decode_text, the TypeID functions and the ULID text of a UUID.
// No shared state: these work without shared_preload_libraries. Bad text is
// an error that names it, never a wrong id.
//
// The core hands back std::string. No ereport (palloc's out-of-memory error
// included) may jump over one (CONTRIBUTING.md), so every call into the core
// happens in a helper that copies its answer into a fixed buffer (a Text or
// a Verdict: plain data) and returns; the strings are gone before anything
// here reports or allocates. Arguments reach the core as std::string_view,
// which has no destructor.

#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "../core/text_id.hpp"
#include "../core/uuid.hpp"
#include "uuidv7.hpp"
#include "pg_headers.hpp"

extern "C" {
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(snowflake_encode);
PG_FUNCTION_INFO_V1(snowflake_decode_text);
PG_FUNCTION_INFO_V1(snowflake_uuid_to_typeid);
PG_FUNCTION_INFO_V1(snowflake_uuidv7_typeid);
PG_FUNCTION_INFO_V1(snowflake_typeid_to_uuid);
PG_FUNCTION_INFO_V1(snowflake_typeid_prefix);
PG_FUNCTION_INFO_V1(snowflake_uuid_to_ulid);
PG_FUNCTION_INFO_V1(snowflake_ulid_to_uuid);
}

namespace core = snowflake::core;

namespace {

// The longest text made here: a TypeID (a prefix of 63, '_', 26 characters).
constexpr size_t kMaxText = core::kMaxTypeidPrefix + 1 + core::kUuidBase32Chars;
// At most this many bytes of a bad value are quoted in an error.
constexpr int kQuoteBytes = 100;

// A text made by the core, copied out of its std::string.
struct Text {
    char data[kMaxText];
    size_t len;
};
static_assert(std::is_trivially_destructible_v<Text>, "a Text may be in scope at an ereport");

// What the core said about a text: valid or the reason, and what it decoded.
struct Verdict {
    bool ok;
    core::TextError err;  // a static sentence and an offset: plain data
    int64_t id;
    core::Uuid uuid;
    Text prefix;
};
static_assert(std::is_trivially_destructible_v<Verdict>, "a Verdict may be in scope at an ereport");

void copy_out(const std::string& s, Text* out) noexcept {
    out->len = s.size() < kMaxText ? s.size() : kMaxText;  // never more than kMaxText: see encode_typeid
    std::memcpy(out->data, s.data(), out->len);
}

Text encoded_id(int64_t id, core::TextFormat f) noexcept {
    Text t;
    copy_out(core::encode_id(id, f), &t);
    return t;
}

Text encoded_typeid(std::string_view prefix, const core::Uuid& u) noexcept {
    Text t;
    copy_out(core::encode_typeid(prefix, u), &t);
    return t;
}

Text encoded_ulid(const core::Uuid& u) noexcept {
    Text t;
    copy_out(core::uuid_to_ulid(u), &t);
    return t;
}

Verdict decoded_typeid(std::string_view value) noexcept {
    Verdict v{};
    std::string prefix;
    v.ok = core::decode_typeid(value, &prefix, &v.uuid, &v.err);
    if (v.ok) copy_out(prefix, &v.prefix);
    return v;
}

std::string_view arg_view(const text* t) { return std::string_view(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)); }

Datum text_datum(const Text& t) {
    return PointerGetDatum(cstring_to_text_with_len(t.data, static_cast<int>(t.len)));
}

core::Uuid uuid_arg(const pg_uuid_t* u) {
    core::Uuid c;
    static_assert(sizeof(u->data) == sizeof(c.bytes), "UUIDs are 16 bytes");
    std::memcpy(c.bytes, u->data, sizeof(c.bytes));
    return c;
}

Datum uuid_datum(const core::Uuid& u) {
    auto* out = static_cast<pg_uuid_t*>(palloc(sizeof(pg_uuid_t)));
    std::memcpy(out->data, u.bytes, sizeof(u.bytes));
    return UUIDPGetDatum(out);
}

// How many bytes of value an error quotes: all of a short one, the first
// kQuoteBytes of a long one, cut at a character boundary.
int quoted_len(std::string_view value) {
    const int len = static_cast<int>(value.size());
    return len <= kQuoteBytes ? len : pg_mbcliplen(value.data(), len, kQuoteBytes);
}

const char* const kFormatsHint =
    "The formats are 'base32' (Crockford's, 13 characters), 'base62' (11 characters) and 'decimal'.";

core::TextFormat format_arg(const text* t) {
    const std::string_view name = arg_view(t);
    core::TextFormat f = core::TextFormat::Base32;
    if (!core::parse_text_format(name, &f))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("unknown snowflake id format \"%.*s\"", quoted_len(name), name.data()),
                        errdetail("A text format is named exactly, in lower case; it is never guessed."),
                        errhint("%s", kFormatsHint)));
    return f;
}

// The error of a text that is not a `what` ("base32 id", "TypeID").
void report_bad_text(const char* what, std::string_view value, const core::TextError& err, const char* hint) {
    if (err.at >= 0) {
        // The core counts bytes; a user counts characters (a prefix may hold
        // a multibyte one, which is then what is refused).
        const int at = pg_mbstrlen_with_len(value.data(), err.at) + 1;
        ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                        errmsg("invalid %s: \"%.*s\"", what, quoted_len(value), value.data()),
                        errdetail("At character %d: %s.", at, err.sentence), errhint("%s", hint)));
    }
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("invalid %s: \"%.*s\"", what, quoted_len(value), value.data()),
                    errdetail("The text as a whole (%d characters): %s.",
                              pg_mbstrlen_with_len(value.data(), static_cast<int>(value.size())), err.sentence),
                    errhint("%s", hint)));
}

const char* id_what(core::TextFormat f) {
    switch (f) {
        case core::TextFormat::Base32: return "base32 id";
        case core::TextFormat::Base62: return "base62 id";
        case core::TextFormat::Decimal: break;
    }
    return "decimal id";
}

const char* id_hint(core::TextFormat f) {
    switch (f) {
        case core::TextFormat::Base32:
            return "A base32 id is 13 characters of 0-9 and A-Z without I, L, O, U (either case; hyphens are "
                   "ignored) whose first is at most 7, as snowflake_encode(id, 'base32') gives.";
        case core::TextFormat::Base62:
            return "A base62 id is 11 characters of 0-9, A-Z and a-z, at most AzL8n0Y58m7, as "
                   "snowflake_encode(id, 'base62') gives.";
        case core::TextFormat::Decimal: break;
    }
    return "A decimal id is 1 to 19 digits without a sign, at most 9223372036854775807.";
}

const char* const kTypeidHint =
    "A TypeID is an optional prefix of a-z and '_' (at most 63, starting and ending with a letter) followed by "
    "'_', then 26 characters of lower-case base32 (0-9 and a-z without i, l, o, u) whose first is at most 7.";

const char* const kPrefixHint =
    "A prefix is empty or up to 63 of a-z and '_', starting and ending with a letter, such as 'user' or "
    "'order_item'.";

// The prefix argument, checked; an error for a bad one.
std::string_view prefix_arg(const text* t) {
    const std::string_view prefix = arg_view(t);
    core::TextError err;
    if (!core::check_typeid_prefix(prefix, &err)) {
        if (err.at >= 0)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("invalid TypeID prefix: \"%.*s\"", quoted_len(prefix), prefix.data()),
                            errdetail("At character %d: %s.", pg_mbstrlen_with_len(prefix.data(), err.at) + 1,
                                      err.sentence),
                            errhint("%s", kPrefixHint)));
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("invalid TypeID prefix: \"%.*s\"", quoted_len(prefix), prefix.data()),
                 errdetail("The prefix as a whole (%d characters): %s.",
                           pg_mbstrlen_with_len(prefix.data(), static_cast<int>(prefix.size())), err.sentence),
                 errhint("%s", kPrefixHint)));
    }
    return prefix;
}

// The TypeID argument decoded; an error for a bad one.
Verdict typeid_arg(const text* t) {
    const std::string_view value = arg_view(t);
    const Verdict v = decoded_typeid(value);
    if (!v.ok) report_bad_text("TypeID", value, v.err, kTypeidHint);
    return v;
}

}  // namespace

extern "C" {

// snowflake_encode(id, format): the id's text, fixed width.
Datum snowflake_encode(PG_FUNCTION_ARGS) {
    const int64 id = PG_GETARG_INT64(0);
    const core::TextFormat f = format_arg(PG_GETARG_TEXT_PP(1));
    if (id < 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("snowflake id %lld is negative", static_cast<long long>(id)),
                 errdetail("Format '%s' encodes ids from 0 to 9223372036854775807.", core::text_format_name(f)),
                 errhint("Snowflake ids are positive bigints; bit 63 is always zero.")));
    PG_RETURN_DATUM(text_datum(encoded_id(id, f)));
}

// snowflake_decode_text(text, format): the id a text of the format stands for.
Datum snowflake_decode_text(PG_FUNCTION_ARGS) {
    const std::string_view value = arg_view(PG_GETARG_TEXT_PP(0));
    const core::TextFormat f = format_arg(PG_GETARG_TEXT_PP(1));
    int64_t id = 0;
    core::TextError err;
    if (!core::decode_id(value, f, &id, &err)) report_bad_text(id_what(f), value, err, id_hint(f));
    PG_RETURN_INT64(id);
}

// uuid_to_typeid(u, prefix): any UUID as a TypeID.
Datum snowflake_uuid_to_typeid(PG_FUNCTION_ARGS) {
    const core::Uuid u = uuid_arg(PG_GETARG_UUID_P(0));
    const std::string_view prefix = prefix_arg(PG_GETARG_TEXT_PP(1));
    PG_RETURN_DATUM(text_datum(encoded_typeid(prefix, u)));
}

// uuidv7_typeid(prefix): a new UUIDv7 as a TypeID. The prefix is checked
// before a UUID is taken, so a bad prefix uses up no random bytes.
Datum snowflake_uuidv7_typeid(PG_FUNCTION_ARGS) {
    const std::string_view prefix = prefix_arg(PG_GETARG_TEXT_PP(0));
    const core::Uuid u = snowflake::pg::new_uuidv7();
    PG_RETURN_DATUM(text_datum(encoded_typeid(prefix, u)));
}

// typeid_to_uuid(t): the UUID of a TypeID.
Datum snowflake_typeid_to_uuid(PG_FUNCTION_ARGS) {
    const Verdict v = typeid_arg(PG_GETARG_TEXT_PP(0));
    PG_RETURN_DATUM(uuid_datum(v.uuid));
}

// typeid_prefix(t): the prefix of a TypeID ('' for none).
Datum snowflake_typeid_prefix(PG_FUNCTION_ARGS) {
    const Verdict v = typeid_arg(PG_GETARG_TEXT_PP(0));
    PG_RETURN_DATUM(text_datum(v.prefix));
}

// uuid_to_ulid(u): the ULID text of a UUID.
Datum snowflake_uuid_to_ulid(PG_FUNCTION_ARGS) {
    PG_RETURN_DATUM(text_datum(encoded_ulid(uuid_arg(PG_GETARG_UUID_P(0)))));
}

// ulid_to_uuid(t): the UUID of a ULID's text.
Datum snowflake_ulid_to_uuid(PG_FUNCTION_ARGS) {
    const std::string_view value = arg_view(PG_GETARG_TEXT_PP(0));
    core::Uuid u{};
    core::TextError err;
    if (!core::ulid_to_uuid(value, &u, &err))
        report_bad_text("ULID", value, err,
                        "A ULID is 26 characters of Crockford's base32 (0-9 and A-Z without I, L, O, U; either "
                        "case) whose first is at most 7.");
    PG_RETURN_DATUM(uuid_datum(u));
}
}
