// Parsing of snowflake.etcd_endpoints; see endpoints.hpp.
#include "endpoints.hpp"

#include "ascii.hpp"
#include "decimal.hpp"

#include <cstdint>
#include <utility>

namespace snowflake::core {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

bool host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
}

bool ipv6_char(char c) {
    return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' ||
           c == '.';
}

// Checks one trimmed entry; on success appends its normal form.
bool parse_endpoint(std::string_view e, std::string* normal, std::string* why) {
    constexpr std::string_view scheme = "http://";
    if (e.substr(0, 8) == "https://") {
        *why = "only http:// endpoints are supported";
        return false;
    }
    if (e.size() < scheme.size() || e.substr(0, scheme.size()) != scheme) {
        *why = "it does not start with http://";
        return false;
    }
    std::string_view rest = e.substr(scheme.size());
    if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    std::string_view host;
    if (!rest.empty() && rest[0] == '[') {
        const size_t close = rest.find(']');
        if (close == std::string_view::npos || close == 1) {
            *why = "its IPv6 address is not closed by \"]\"";
            return false;
        }
        host = rest.substr(0, close + 1);
        for (char c : host.substr(1, host.size() - 2)) {
            if (!ipv6_char(c)) {
                *why = "its IPv6 address contains a character that is not a hex digit, \":\" or \".\"";
                return false;
            }
        }
        rest.remove_prefix(close + 1);
    } else {
        const size_t colon = rest.find(':');
        host = rest.substr(0, colon == std::string_view::npos ? rest.size() : colon);
        if (host.empty()) {
            *why = "it has no host";
            return false;
        }
        for (char c : host) {
            if (!host_char(c)) {
                *why = "its host may contain only letters, digits, \"-\" and \".\"";
                return false;
            }
        }
        if (host.size() > 253 || host[0] == '-' || host[0] == '.') {
            *why = "its host is not a valid host name";
            return false;
        }
        rest.remove_prefix(host.size());
    }
    if (rest.empty() || rest[0] != ':') {
        *why = "it has no port (write http://host:port)";
        return false;
    }
    rest.remove_prefix(1);
    int64_t port = 0;
    if (rest.find('/') != std::string_view::npos) {
        *why = "it has a path; give only http://host:port";
        return false;
    }
    if (!parse_i64(rest, &port) || port < 1 || port > 65535) {
        *why = "its port is not a number from 1 to 65535";
        return false;
    }
    *normal = std::string(scheme) + std::string(host) + ":" + std::to_string(port);
    return true;
}

}  // namespace

bool parse_endpoints(std::string_view text, std::vector<std::string>* out,
                     std::string* reason) noexcept {
    std::vector<std::string> result;
    size_t start = 0;
    size_t index = 0;
    bool all_space = true;
    for (char c : text) {
        if (!is_space(c)) all_space = false;
    }
    if (all_space) {
        if (out != nullptr) out->clear();
        return true;
    }
    while (start <= text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view e = text.substr(start, end - start);
        start = end + 1;
        index++;
        while (!e.empty() && is_space(e.front())) e.remove_prefix(1);
        while (!e.empty() && is_space(e.back())) e.remove_suffix(1);
        std::string why;
        std::string normal;
        if (e.empty()) {
            why = "it is empty";
        } else if (parse_endpoint(e, &normal, &why)) {
            if (result.size() == kMaxEndpoints) {
                if (reason != nullptr) {
                    *reason = "At most " + std::to_string(kMaxEndpoints) + " endpoints may be given.";
                }
                return false;
            }
            result.push_back(std::move(normal));
            if (end == text.size()) break;
            continue;
        }
        if (reason != nullptr) {
            *reason = "Endpoint " + std::to_string(index) + " (\"" + printable(e, 80) + "\") is invalid: " +
                      why + ".";
        }
        return false;
    }
    if (out != nullptr) *out = std::move(result);
    return true;
}

}  // namespace snowflake::core
