// What the C library's tests share: a temporary directory, the mark file's
// fields read back as bytes (its format: src/core/mark.hpp), and the
// configuration of a static worker id; the coordinators test/sdk_c.sh
// started for the leased tests.
#pragma once

#include "snowflake_ids.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sdk_test {

// A directory removed with the test's end.
class TempDir {
public:
    TempDir() {
        char tmpl[] = "/tmp/snowflake-sdk-test.XXXXXX";
        const char* d = mkdtemp(tmpl);
        path_ = d != nullptr ? d : "";
    }
    ~TempDir() {
        if (!path_.empty()) (void)std::system(("rm -rf '" + path_ + "'").c_str());
    }
    std::string file(const char* name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// The mark file's millisecond, whether it is exact (written at close), and
// the layout it records (flag bits 8-26: 0 for twitter, else
// 1 << 18 | time << 12 | worker << 6 | sequence).
struct MarkBytes {
    bool read = false;
    int64_t ms = 0;
    bool exact = false;
    uint32_t layout = 0;
    std::string raw;
};
inline MarkBytes read_mark(const std::string& path) {
    MarkBytes m;
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return m;
    char buf[64];
    const ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n != 32 || memcmp(buf, "SFMARK01", 8) != 0) return m;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--) u = (u << 8) | static_cast<unsigned char>(buf[8 + i]);
    m.ms = static_cast<int64_t>(u);
    m.exact = (static_cast<unsigned char>(buf[16]) & 1) != 0;
    uint32_t flags = 0;
    for (int i = 3; i >= 0; i--) flags = (flags << 8) | static_cast<unsigned char>(buf[16 + i]);
    m.layout = flags >> 8;
    m.raw.assign(buf, 32);
    m.read = true;
    return m;
}

inline sf_config static_config(const std::string& mark, int32_t worker = 7) {
    sf_config cfg;
    sf_config_init(&cfg);
    cfg.worker_id = worker;
    cfg.mark_file = mark.c_str();
    return cfg;
}

// The millisecond since the default epoch of an id.
inline int64_t id_ms(int64_t id) { return id >> 22; }

inline std::string last_error_text() {
    const sf_error* e = sf_last_error();
    return std::string(e->sqlstate) + " " + e->message + " / " + e->detail + " / " + e->hint;
}

// The coordinators a leased test runs against: those test/sdk_c.sh started
// (SNOWFLAKE_TEST_ETCD, SNOWFLAKE_TEST_ZK).
enum class Backend { Etcd, ZooKeeper };

inline std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

inline std::vector<Backend> started_backends() {
    std::vector<Backend> b;
    if (!env("SNOWFLAKE_TEST_ETCD").empty()) b.push_back(Backend::Etcd);
    if (!env("SNOWFLAKE_TEST_ZK").empty()) b.push_back(Backend::ZooKeeper);
    return b;
}

// Generous bounds for a condition (a lease taken), never a duration asserted.
constexpr int32_t kReadyMs = 20000;

}  // namespace sdk_test
