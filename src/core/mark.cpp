#include "mark.hpp"

#include "layout.hpp"
#include "reservation.hpp"

namespace snowflake::core {

namespace {

constexpr uint8_t kMagic[8] = {'S', 'F', 'M', 'A', 'R', 'K', '0', '1'};

void put_u32(uint8_t* p, uint32_t v) noexcept {
    for (int i = 0; i < 4; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) noexcept {
    for (int i = 0; i < 8; i++) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) noexcept {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
uint64_t get_u64(const uint8_t* p) noexcept {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

}  // namespace

uint32_t crc32c(const uint8_t* data, size_t len) noexcept {
    // Bitwise, reflected polynomial 0x82F63B78: the mark is 24 bytes, read
    // once at start and written a few times a second at most.
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc ^= data[i];
        for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
}

void encode_mark(const Mark& mark, uint8_t out[kMarkSize]) noexcept {
    for (size_t i = 0; i < kMarkSize; i++) out[i] = 0;
    for (int i = 0; i < 8; i++) out[i] = kMagic[i];
    put_u64(out + 8, static_cast<uint64_t>(mark.ms));
    put_u32(out + 16, (mark.clean ? 1u : 0u) | (mark.layout << 8));
    const int64_t window = mark.window_ms < 0 ? 0 : mark.window_ms > kMaxWindowMs ? kMaxWindowMs : mark.window_ms;
    put_u32(out + 20, static_cast<uint32_t>(window));
    put_u32(out + 24, crc32c(out, 24));
}

MarkDecode decode_mark(const uint8_t* data, size_t len, Mark* out) noexcept {
    if (len != kMarkSize) return MarkDecode::WrongSize;
    for (int i = 0; i < 8; i++)
        if (data[i] != kMagic[i]) return MarkDecode::BadMagic;
    if (get_u32(data + 24) != crc32c(data, 24)) return MarkDecode::BadChecksum;
    const auto ms = static_cast<int64_t>(get_u64(data + 8));
    const uint32_t flags = get_u32(data + 16);
    const uint32_t window = get_u32(data + 20);
    Geometry g{};
    if (ms < -1 || ms > kMaxMs || (flags & 0xFEu) != 0 || !geometry_of_mark_code(flags >> 8, &g) ||
        window > kMaxWindowMs || get_u32(data + 28) != 0)
        return MarkDecode::BadValue;
    out->layout = flags >> 8;
    out->ms = ms;
    out->clean = (flags & 1u) != 0;
    out->window_ms = window == 0 ? kMinWindowMs : window;
    return MarkDecode::Ok;
}

uint32_t mark_layout_code(const Geometry& g) noexcept {
    if (g == kTwitter) return 0;
    return (1u << 18) | static_cast<uint32_t>(g.time_bits) << 12 | static_cast<uint32_t>(g.worker_bits) << 6 |
           static_cast<uint32_t>(g.sequence_bits);
}

bool geometry_of_mark_code(uint32_t code, Geometry* out) noexcept {
    if (code == 0) {
        *out = kTwitter;
        return true;
    }
    if ((code >> 18) != 1) return false;
    const auto t = static_cast<int32_t>((code >> 12) & 63u), w = static_cast<int32_t>((code >> 6) & 63u),
               s = static_cast<int32_t>(code & 63u);
    if (!geometry_valid(t, w, s)) return false;
    *out = geometry_of(t, w, s);
    return mark_layout_code(*out) == code;  // one code per layout: twitter is 0 only
}

MissingMark judge_missing_mark(bool marker_present, bool leasing) noexcept {
    if (!marker_present) return MissingMark::FirstStart;
    return leasing ? MissingMark::CoveredByCoordinator : MissingMark::Lost;
}

const char* mark_decode_text(MarkDecode d) noexcept {
    switch (d) {
        case MarkDecode::Ok: return "valid";
        case MarkDecode::WrongSize: return "the file does not have the size of a mark";
        case MarkDecode::BadMagic: return "the file does not start with the mark's magic bytes";
        case MarkDecode::BadChecksum: return "the checksum does not match the contents";
        case MarkDecode::BadValue: return "a field holds a value out of its range";
    }
    return "unknown";
}

}  // namespace snowflake::core
