// snowflake.zookeeper_hosts: a ZooKeeper connect string,
// "host:port[,host:port...][/chroot]", checked before the client sees it
// (the C client only says EINVAL). Pure, header-only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace snowflake::zk {

// An empty (or all-space) string means "not used". On false, *reason is a
// sentence.
inline bool check_hosts(std::string_view text, std::string* reason) {
    size_t b = 0, e = text.size();
    while (b < e && text[b] == ' ') b++;
    while (e > b && text[e - 1] == ' ') e--;
    text = text.substr(b, e - b);
    if (text.empty()) return true;
    std::string_view list = text;
    const size_t slash = text.find('/');
    if (slash != std::string_view::npos) {
        const std::string_view chroot = text.substr(slash);
        list = text.substr(0, slash);
        if (chroot.size() < 2 || chroot.back() == '/' || chroot.find("//") != std::string_view::npos ||
            chroot.find_first_of(" ,") != std::string_view::npos) {
            *reason = "The chroot suffix \"" + std::string(chroot) +
                      "\" is not an absolute znode path without a trailing slash.";
            return false;
        }
    }
    size_t count = 0;
    while (true) {
        const size_t comma = list.find(',');
        std::string_view entry = list.substr(0, comma);
        while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
        while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
        const size_t colon = entry.rfind(':');
        bool ok = colon != std::string_view::npos && colon > 0 && colon + 1 < entry.size() &&
                  colon + 6 >= entry.size();
        long port = 0;
        for (size_t i = colon + 1; ok && i < entry.size(); i++) {
            if (entry[i] < '0' || entry[i] > '9') ok = false;
            else port = port * 10 + (entry[i] - '0');
        }
        if (!ok || port < 1 || port > 65535 || entry.find(' ') != std::string_view::npos) {
            *reason = "\"" + std::string(entry) + "\" is not host:port with a port from 1 to 65535.";
            return false;
        }
        if (++count > 64) {
            *reason = "More than 64 servers are listed.";
            return false;
        }
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return true;
}

}  // namespace snowflake::zk
