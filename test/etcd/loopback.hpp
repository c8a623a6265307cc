// Loopback test servers on libmicrohttpd (fake_gateway.hpp, delay_proxy.hpp):
// the address they bind, the port the kernel gave them and their endpoint.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace snowflake::test {

// 127.0.0.1 with port 0 (the kernel picks one), for MHD_OPTION_SOCK_ADDR.
inline const struct sockaddr* loopback_any_port() {
    static struct sockaddr_in sa = [] {
        struct sockaddr_in s;
        std::memset(&s, 0, sizeof s);
        s.sin_family = AF_INET;
        s.sin_port = 0;
        s.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return s;
    }();
    return reinterpret_cast<const struct sockaddr*>(&sa);
}

// The port a started daemon listens on; 0 if it did not start.
inline uint16_t bound_port(MHD_Daemon* daemon) {
    if (daemon == nullptr) return 0;
    const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != nullptr ? info->port : 0;
}

// The endpoint URL of a server on that port.
inline std::string loopback_endpoint(uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

}  // namespace snowflake::test
