#include "wal_record.hpp"

#include "layout.hpp"
#include "mark.hpp"  // mark_layout_code
#include "promotion.hpp"

#include <algorithm>
#include <cstring>

namespace snowflake::core {

namespace {

// Native byte order, as the struct PostgreSQL's WAL held before (1.1, 1.2).
template <typename T>
void put(uint8_t* p, T v) noexcept {
    std::memcpy(p, &v, sizeof(v));
}
template <typename T>
T get(const uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

}  // namespace

size_t encode_reservation(const WalReservation& r, uint8_t out[kReserveRecordSizeLayout]) noexcept {
    put<int64_t>(out, r.until_ms);
    put<int64_t>(out + 8, r.epoch_unix_us);
    put<int32_t>(out + 16, r.window_ms);
    put<int32_t>(out + 20, r.worker_id);
    if (r.layout == 0) return kReserveRecordSize;
    put<uint32_t>(out + 24, r.layout);
    put<uint32_t>(out + 28, 0);
    return kReserveRecordSizeLayout;
}

bool decode_reservation(const uint8_t* data, size_t len, WalReservation* out) noexcept {
    WalReservation r;
    if (len == kReserveRecordSizeLayout) {
        Geometry g{};
        r.layout = get<uint32_t>(data + 24);
        if (r.layout == 0 || !geometry_of_mark_code(r.layout, &g) || get<uint32_t>(data + 28) != 0) return false;
    }
    if (len == kReserveRecordSize || len == kReserveRecordSizeLayout) {
        r.until_ms = get<int64_t>(data);
        r.epoch_known = true;
        r.epoch_unix_us = get<int64_t>(data + 8);
        r.window_ms = get<int32_t>(data + 16);
        r.worker_id = get<int32_t>(data + 20);
    } else if (len == kReserveRecordSize12) {
        r.until_ms = get<int64_t>(data);
        r.window_ms = get<int32_t>(data + 8);
        r.worker_id = get<int32_t>(data + 12);
    } else {
        return false;
    }
    *out = r;
    return true;
}

ReplayedReservation read_reservation(const WalReservation& r, int64_t reader_epoch_unix_us) noexcept {
    ReplayedReservation out;
    if (!r.epoch_known) {
        out.until_ms = unix_ms_to_id_ms(r.until_ms, reader_epoch_unix_us);
        out.epoch = RecordEpoch::Unknown;
        return out;
    }
    out.until_ms = std::clamp<int64_t>(r.until_ms, -1, kMaxMs);
    out.epoch = r.epoch_unix_us == reader_epoch_unix_us ? RecordEpoch::Same : RecordEpoch::Differs;
    return out;
}

}  // namespace snowflake::core
