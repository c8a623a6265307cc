// sf_decode, sf_decode_layout and sf_parse_epoch: an id's fields (under
// twitter's layout or the one given) and an epoch's text, as the SQL
// decoders give them (core/layout.hpp, core/epoch.hpp).

#include "error.hpp"
#include "layout.hpp"

#include "core/epoch.hpp"
#include "core/id_layout.hpp"
#include "core/layout.hpp"
#include "core/time.hpp"

#include <cstdio>
#include <string>

using namespace snowflake;

sf_code sf_decode(int64_t id, int64_t epoch_unix_ms, sf_decoded* out) {
    return sf_decode_layout(id, epoch_unix_ms, nullptr, out);
}

sf_code sf_decode_layout(int64_t id, int64_t epoch_unix_ms, const char* layout, sf_decoded* out) {
    if (out == nullptr)
        return sdk::fail(SF_ERR_INVALID, "sf_decode needs a place for the fields", nullptr,
                         "Pass a pointer to an sf_decoded.");
    if (!core::valid_id(id))
        return sdk::fail_detail(SF_ERR_INVALID, "a snowflake id is never negative",
                                "Pass an id that a generator issued.", "The id is %lld.",
                                static_cast<long long>(id));
    core::Geometry g{};
    const sf_code c = sdk::read_layout(layout, "layout", &g);
    if (c != SF_OK) return c;
    if (!core::id_in(g, id)) {
        const std::string name = core::geometry_text(g);
        char message[160];
        snprintf(message, sizeof message, "the id does not fit layout '%s'", name.c_str());
        return sdk::fail_detail(SF_ERR_INVALID, message,
                                "Decode it under the layout of the generator or node that issued it.",
                                "The id is %lld; ids of '%s' lie below 2^%d.", static_cast<long long>(id),
                                name.c_str(), g.time_shift + g.time_bits);
    }
    const core::Fields f = core::decompose(g, id);
    out->ms_since_epoch = f.ms;
    out->unix_ms = f.ms + epoch_unix_ms;
    out->worker_id = f.worker;
    out->sequence = f.sequence;
    return sdk::ok();
}

sf_code sf_parse_epoch(const char* text, int64_t* epoch_unix_ms) {
    if (text == nullptr || epoch_unix_ms == nullptr)
        return sdk::fail(
            SF_ERR_INVALID, "sf_parse_epoch needs a text and a place for the result", nullptr,
            "Pass the epoch's text, such as \"2025-01-01 00:00:00+00\", and a pointer to an int64_t.");
    int64_t us = 0;
    const core::EpochParse p = core::parse_epoch(text, &us);
    if (p != core::EpochParse::Ok)
        return sdk::fail_detail(
            SF_ERR_INVALID, "epoch is invalid",
            "Give a timestamp with an explicit UTC offset, such as \"2025-01-01 00:00:00+00\".", "\"%s\": %s.",
            text, core::epoch_parse_text(p));
    *epoch_unix_ms = core::floor_div(us, 1000);
    return sdk::ok();
}
