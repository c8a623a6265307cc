// The calling thread's last error (error.hpp) and the SQLSTATE of each code.

#include "error.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace snowflake::sdk {

namespace {

thread_local sf_error t_error = {SF_OK, "00000", "", "", ""};

void copy(char* dst, size_t cap, const char* src) noexcept { snprintf(dst, cap, "%s", src != nullptr ? src : ""); }

void set(sf_code code, const char* message, const char* hint) noexcept {
    t_error.code = code;
    copy(t_error.sqlstate, sizeof t_error.sqlstate, sf_sqlstate(code));
    copy(t_error.message, sizeof t_error.message, message);
    copy(t_error.hint, sizeof t_error.hint, hint);
}

}  // namespace

sf_code fail(sf_code code, const char* message, const char* detail, const char* hint) noexcept {
    set(code, message, hint);
    copy(t_error.detail, sizeof t_error.detail, detail);
    return code;
}

sf_code fail_detail(sf_code code, const char* message, const char* hint, const char* detail_fmt, ...) noexcept {
    set(code, message, hint);
    va_list ap;
    va_start(ap, detail_fmt);
    vsnprintf(t_error.detail, sizeof t_error.detail, detail_fmt, ap);
    va_end(ap);
    return code;
}

sf_code ok() noexcept {
    if (t_error.code != SF_OK) fail(SF_OK, "", "", "");
    return SF_OK;
}

void format_error(const sf_error& e, char* buf, size_t len) noexcept {
    if (buf == nullptr || len == 0) return;
    snprintf(buf, len, "%s: %s%s%s%s%s", e.sqlstate, e.message, e.detail[0] != '\0' ? ". " : "", e.detail,
             e.hint[0] != '\0' ? " " : "", e.hint);
}

const sf_error& last_error() noexcept { return t_error; }

}  // namespace snowflake::sdk

const sf_error* sf_last_error(void) { return &snowflake::sdk::last_error(); }

const char* sf_sqlstate(sf_code code) {
    switch (code) {
        case SF_OK: return "00000";
        case SF_ERR_CLOCK_BEHIND: return "SF001";
        case SF_ERR_CLOCK_RANGE: return "SF002";
        case SF_ERR_NO_LEASE: return "SF003";
        case SF_ERR_CLOCK_UNSYNC: return "SF004";
        case SF_ERR_INVALID: return "22023";
        case SF_ERR_NOT_READY: return "57014";
        case SF_ERR_CLOSED: return "55000";
        case SF_ERR_FLEET: return "55000";
        case SF_ERR_MARK_FILE: return "58030";
        case SF_ERR_MARK_LOCKED: return "55006";
        case SF_ERR_NO_MEMORY: return "53200";
    }
    return "XX000";
}
