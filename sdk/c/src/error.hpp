// The C API's errors: the calling thread's sf_error (sf_last_error()), set
// by every function that fails, with the SQLSTATE of its code, a short
// message, the facts (detail) and what to do (hint).
#pragma once

#include "api.hpp"

namespace snowflake::sdk {

// Sets the thread's error and returns its code. detail and hint may be null.
// message, detail and hint are printf formats only through fail_f().
sf_code fail(sf_code code, const char* message, const char* detail, const char* hint) noexcept;
// The same with a formatted detail.
sf_code fail_detail(sf_code code, const char* message, const char* hint, const char* detail_fmt, ...) noexcept
    __attribute__((format(printf, 4, 5)));
// SF_OK: clears the thread's error.
sf_code ok() noexcept;
// "message: detail hint" into buf (sf_open's err argument).
void format_error(const sf_error& e, char* buf, size_t len) noexcept;
const sf_error& last_error() noexcept;

}  // namespace snowflake::sdk
