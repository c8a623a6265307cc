#include "uuid.hpp"

namespace snowflake::core {

int64_t ascending_ticks(UuidClock& clock, int64_t now_ticks) noexcept {
    int64_t t = now_ticks;
    if (t <= clock.last_ticks) t = clock.last_ticks + 1;
    clock.last_ticks = t;
    return t;
}

Uuid build_uuidv7(int64_t ticks, const uint8_t* random) noexcept {
    Uuid u{};
    const auto t = static_cast<uint64_t>(ticks);
    const uint64_t ms = t >> kUuidFractionBits;
    const auto frac = static_cast<uint32_t>(t & ((1u << kUuidFractionBits) - 1));
    for (int i = 0; i < 6; i++) u.bytes[i] = static_cast<uint8_t>(ms >> (8 * (5 - i)));
    u.bytes[6] = static_cast<uint8_t>(0x70 | (frac >> 8));
    u.bytes[7] = static_cast<uint8_t>(frac & 0xFF);
    u.bytes[8] = static_cast<uint8_t>(0x80 | (random[0] & 0x3F));
    for (int i = 9; i < 16; i++) u.bytes[i] = random[i - 8];
    return u;
}

Uuid uuidv7_floor(int64_t ms) noexcept {
    Uuid u{};
    const auto m = static_cast<uint64_t>(ms);
    for (int i = 0; i < 6; i++) u.bytes[i] = static_cast<uint8_t>(m >> (8 * (5 - i)));
    u.bytes[6] = 0x70;
    u.bytes[8] = 0x80;
    return u;
}

int64_t uuid_ms(const Uuid& u) noexcept {
    uint64_t ms = 0;
    for (int i = 0; i < 6; i++) ms = (ms << 8) | u.bytes[i];
    return static_cast<int64_t>(ms);
}

}  // namespace snowflake::core
