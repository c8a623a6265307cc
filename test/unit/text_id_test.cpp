// Text forms of ids (core/text_id.hpp): base32 and base62 ids, ULID text,
// and TypeIDs against the TypeID specification's own vectors
// (test/vectors/typeid/), read from the repository's root.

#include "core/text_id.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace core = snowflake::core;

namespace {

core::Uuid uuid_of_hex(const std::string& text) {
    core::Uuid u{};
    std::string hex;
    for (char c : text)
        if (c != '-') hex += c;
    EXPECT_EQ(hex.size(), 32u) << text;
    for (size_t i = 0; i < 16 && 2 * i + 1 < hex.size(); i++)
        u.bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    return u;
}

std::string hex_of(const core::Uuid& u) {
    char s[40];
    const uint8_t* b = u.bytes;
    std::snprintf(s, sizeof s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                  b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return s;
}

// The entries of a vector file: each "- name:" starts one; fields are
// `key: "value"` lines (comment lines, starting with '#', are skipped).
struct Entry {
    std::string name, typeid_text, prefix, uuid;
};
std::vector<Entry> read_vectors(const char* path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path << " not found: run the unit tests from the repository's root";
    std::vector<Entry> out;
    std::string line;
    auto value = [](const std::string& l) {
        const size_t a = l.find('"'), b = l.rfind('"');
        return a == std::string::npos || b <= a ? std::string() : l.substr(a + 1, b - a - 1);
    };
    while (std::getline(in, line)) {
        const size_t first = line.find_first_not_of(' ');
        if (first == std::string::npos || line[first] == '#') continue;
        const std::string l = line.substr(first);
        if (l.rfind("- name:", 0) == 0) {
            out.push_back(Entry{});
            out.back().name = l.substr(8);
        } else if (!out.empty() && l.rfind("typeid:", 0) == 0) {
            out.back().typeid_text = value(l);
        } else if (!out.empty() && l.rfind("prefix:", 0) == 0) {
            out.back().prefix = value(l);
        } else if (!out.empty() && l.rfind("uuid:", 0) == 0) {
            out.back().uuid = value(l);
        }
    }
    return out;
}

}  // namespace

TEST(TextId, TypeidSpecValidVectorsDecodeAndEncodeBack) {
    const auto vectors = read_vectors("test/vectors/typeid/valid.yml");
    ASSERT_GE(vectors.size(), 9u);
    for (const Entry& e : vectors) {
        std::string prefix;
        core::Uuid u{};
        core::TextError err;
        ASSERT_TRUE(core::decode_typeid(e.typeid_text, &prefix, &u, &err)) << e.name << ": " << err.sentence;
        EXPECT_EQ(prefix, e.prefix) << e.name;
        EXPECT_EQ(hex_of(u), e.uuid) << e.name;
        EXPECT_EQ(core::encode_typeid(e.prefix, uuid_of_hex(e.uuid)), e.typeid_text) << e.name;
    }
}

TEST(TextId, TypeidSpecInvalidVectorsAreRefused) {
    const auto vectors = read_vectors("test/vectors/typeid/invalid.yml");
    ASSERT_GE(vectors.size(), 20u);
    for (const Entry& e : vectors) {
        std::string prefix = "untouched";
        core::Uuid u{};
        core::TextError err;
        EXPECT_FALSE(core::decode_typeid(e.typeid_text, &prefix, &u, &err)) << e.name << ": " << e.typeid_text;
        EXPECT_STRNE(err.sentence, "") << e.name;
        EXPECT_EQ(prefix, "untouched") << e.name;
    }
}

TEST(TextId, TypeidPrefixRules) {
    core::TextError err;
    EXPECT_TRUE(core::check_typeid_prefix("", &err));
    EXPECT_TRUE(core::check_typeid_prefix("user", &err));
    EXPECT_TRUE(core::check_typeid_prefix("my__type", &err));
    EXPECT_TRUE(core::check_typeid_prefix(std::string(63, 'a'), &err));
    EXPECT_FALSE(core::check_typeid_prefix(std::string(64, 'a'), &err));
    EXPECT_FALSE(core::check_typeid_prefix("_user", &err));
    EXPECT_EQ(err.at, 0);
    EXPECT_FALSE(core::check_typeid_prefix("user_", &err));
    EXPECT_EQ(err.at, 4);
    EXPECT_FALSE(core::check_typeid_prefix("User", &err));
    EXPECT_FALSE(core::check_typeid_prefix("user1", &err));
    EXPECT_EQ(err.at, 4);
}

TEST(TextId, IdsRoundTripAndSortAsTheirValues) {
    std::mt19937_64 rng(30033);
    const core::TextFormat formats[] = {core::TextFormat::Decimal, core::TextFormat::Base32,
                                        core::TextFormat::Base62};
    std::vector<int64_t> ids = {0, 1, 31, 32, 61, 62, INT64_MAX, INT64_MAX - 1, int64_t{1} << 62};
    for (int i = 0; i < 20000; i++) ids.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)));
    for (core::TextFormat f : formats) {
        for (size_t i = 0; i < ids.size(); i++) {
            const std::string s = core::encode_id(ids[i], f);
            int64_t back = -1;
            core::TextError err;
            ASSERT_TRUE(core::decode_id(s, f, &back, &err))
                << core::text_format_name(f) << " " << s << ": " << err.sentence;
            ASSERT_EQ(back, ids[i]) << s;
            if (f == core::TextFormat::Decimal || i == 0) continue;
            // Fixed width: byte order is value order.
            const std::string prev = core::encode_id(ids[i - 1], f);
            EXPECT_EQ(s.size(), prev.size());
            EXPECT_EQ(ids[i - 1] < ids[i], prev < s) << prev << " " << s;
        }
    }
    EXPECT_EQ(core::encode_id(INT64_MAX, core::TextFormat::Base62), "AzL8n0Y58m7");
    EXPECT_EQ(core::encode_id(INT64_MAX, core::TextFormat::Base32), "7ZZZZZZZZZZZZ");
    EXPECT_EQ(core::encode_id(0, core::TextFormat::Base32), "0000000000000");
    EXPECT_EQ(core::encode_id(-1, core::TextFormat::Base32), "");
    char buf[core::kMaxIdTextChars];
    EXPECT_EQ(core::write_id_text(buf, sizeof(buf), INT64_MAX, core::TextFormat::Decimal), 19u);
    EXPECT_EQ(std::string(buf, 19), "9223372036854775807");
    EXPECT_EQ(core::write_id_text(buf, sizeof(buf), 0, core::TextFormat::Decimal), 1u);
    EXPECT_EQ(core::write_id_text(buf, sizeof(buf), -1, core::TextFormat::Base62), 0u);
    EXPECT_EQ(core::write_id_text(buf, sizeof(buf) - 1, 5, core::TextFormat::Base62), 0u)
        << "room for any id, or none";
}

TEST(TextId, Base32DecodesLenientlyAsCrockfordSays) {
    int64_t v = -1;
    core::TextError err;
    const std::string canonical = core::encode_id(1783709124982341632, core::TextFormat::Base32);
    std::string lower = canonical;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ASSERT_TRUE(core::decode_id(lower, core::TextFormat::Base32, &v, &err)) << err.sentence;
    EXPECT_EQ(v, 1783709124982341632);
    ASSERT_TRUE(core::decode_id("000-0000-0000-1I", core::TextFormat::Base32, &v, &err)) << err.sentence;
    EXPECT_EQ(v, 33);  // "1I": I reads as 1
    ASSERT_TRUE(core::decode_id("00000000000LO", core::TextFormat::Base32, &v, &err));
    EXPECT_EQ(v, 32);  // L as 1, O as 0
    EXPECT_FALSE(core::decode_id("0000000000U00", core::TextFormat::Base32, &v, &err));
    EXPECT_EQ(err.at, 10);
    EXPECT_FALSE(core::decode_id("800000000000", core::TextFormat::Base32, &v, &err));    // 12 characters
    EXPECT_FALSE(core::decode_id("8000000000000", core::TextFormat::Base32, &v, &err));   // above 2^63 - 1
    EXPECT_FALSE(core::decode_id("00000000000000", core::TextFormat::Base32, &v, &err));  // 14
    EXPECT_FALSE(core::decode_id("", core::TextFormat::Base32, &v, &err));
}

TEST(TextId, Base62AndDecimalRefuseWhatIsNotAnId) {
    int64_t v = -1;
    core::TextError err;
    EXPECT_FALSE(core::decode_id("AzL8n0Y58m8", core::TextFormat::Base62, &v, &err));  // 2^63
    EXPECT_FALSE(core::decode_id("zzzzzzzzzzz", core::TextFormat::Base62, &v, &err));
    EXPECT_FALSE(core::decode_id("AzL8n0Y58m", core::TextFormat::Base62, &v, &err));
    EXPECT_FALSE(core::decode_id("AzL8n0Y58-7", core::TextFormat::Base62, &v, &err));
    EXPECT_EQ(err.at, 9);
    EXPECT_FALSE(core::decode_id("9223372036854775808", core::TextFormat::Decimal, &v, &err));
    EXPECT_FALSE(core::decode_id("-1", core::TextFormat::Decimal, &v, &err));
    EXPECT_FALSE(core::decode_id(" 1", core::TextFormat::Decimal, &v, &err));
    EXPECT_FALSE(core::decode_id("99999999999999999999", core::TextFormat::Decimal, &v, &err));
    EXPECT_EQ(v, -1);  // nothing written on a refusal
    ASSERT_TRUE(core::decode_id("9223372036854775807", core::TextFormat::Decimal, &v, &err));
    EXPECT_EQ(v, INT64_MAX);
}

TEST(TextId, UlidTextOfAUuidAndBack) {
    // The ULID specification's layout: 48 bits of milliseconds are the first
    // 10 characters; 2^48 - 1 ms is "7ZZZZZZZZZ".
    core::Uuid u{};
    for (int i = 0; i < 6; i++) u.bytes[i] = 0xff;
    const std::string s = core::uuid_to_ulid(u);
    EXPECT_EQ(s.substr(0, 10), "7ZZZZZZZZZ");
    EXPECT_EQ(s.size(), 26u);
    core::Uuid back{};
    core::TextError err;
    ASSERT_TRUE(core::ulid_to_uuid(s, &back, &err));
    EXPECT_EQ(hex_of(back), hex_of(u));
    // Milliseconds 1 is "0000000001" then the random part.
    core::Uuid one{};
    one.bytes[5] = 1;
    EXPECT_EQ(core::uuid_to_ulid(one), "00000000010000000000000000");
    EXPECT_EQ(core::uuid_to_ulid(uuid_of_hex("01890a5d-ac96-774b-bcce-b302099a8057")).substr(0, 10),
              core::uuid_to_ulid(uuid_of_hex("01890a5d-ac96-0000-0000-000000000000")).substr(0, 10));
    std::string lower = s;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ASSERT_TRUE(core::ulid_to_uuid(lower, &back, &err));
    EXPECT_EQ(hex_of(back), hex_of(u));
    EXPECT_FALSE(core::ulid_to_uuid("8ZZZZZZZZZZZZZZZZZZZZZZZZZ", &back, &err));
    EXPECT_FALSE(core::ulid_to_uuid("7ZZZZZZZZZZZZZZZZZZZZZZZZ", &back, &err));
    EXPECT_FALSE(core::ulid_to_uuid("7ZZZZZZZZZZZZZZZZZZZZZZZZU", &back, &err));
    EXPECT_EQ(err.at, 25);
}

TEST(TextId, RandomUuidsRoundTripAsTypeidsAndUlids) {
    std::mt19937_64 rng(33);
    for (int i = 0; i < 5000; i++) {
        core::Uuid u{};
        for (uint8_t& b : u.bytes) b = static_cast<uint8_t>(rng());
        std::string prefix;
        core::Uuid back{};
        core::TextError err;
        const std::string t = core::encode_typeid("order", u);
        ASSERT_TRUE(core::decode_typeid(t, &prefix, &back, &err)) << t << ": " << err.sentence;
        EXPECT_EQ(prefix, "order");
        EXPECT_EQ(hex_of(back), hex_of(u));
        ASSERT_TRUE(core::ulid_to_uuid(core::uuid_to_ulid(u), &back, &err));
        EXPECT_EQ(hex_of(back), hex_of(u));
    }
}

TEST(TextId, FormatsAreNamedExactly) {
    core::TextFormat f;
    EXPECT_TRUE(core::parse_text_format("base32", &f));
    EXPECT_EQ(f, core::TextFormat::Base32);
    EXPECT_TRUE(core::parse_text_format("base62", &f));
    EXPECT_TRUE(core::parse_text_format("decimal", &f));
    EXPECT_FALSE(core::parse_text_format("Base32", &f));
    EXPECT_FALSE(core::parse_text_format("crockford", &f));
    EXPECT_FALSE(core::parse_text_format("", &f));
}
