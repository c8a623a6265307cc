// A loopback port nothing listens on, for tests of clients that must fail
// promptly (etcd's gateway client, ZooKeeper's coordinator).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace snowflake::test {

// Bound, then closed: "127.0.0.1:PORT" (port 1 if no port could be bound).
inline std::string dead_loopback_address() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        close(fd);
        return "127.0.0.1:1";
    }
    close(fd);
    return "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
}

}  // namespace snowflake::test
