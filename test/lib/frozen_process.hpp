// Stops a process (SIGSTOP) for a scope and always resumes it (SIGCONT): a
// frozen server (etcd, ZooKeeper), whose port still accepts connections but never answers.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace snowflake::test {

// True once every thread of pid is seen stopped. SIGSTOP is delivered
// asynchronously: a thread running on another core could still answer a
// request right after kill() returned.
inline bool all_threads_stopped(pid_t pid, long max_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    while (std::chrono::steady_clock::now() < end) {
        bool all = true;
        int seen = 0;
        if (DIR* d = opendir(tasks.c_str())) {
            while (dirent* e = readdir(d)) {
                if (e->d_name[0] == '.') continue;
                std::ifstream stat(tasks + "/" + e->d_name + "/stat");
                std::string line;
                std::getline(stat, line);
                const size_t paren = line.rfind(')');
                if (paren == std::string::npos || paren + 2 >= line.size()) continue;
                seen++;
                const char state = line[paren + 2];
                if (state != 'T' && state != 't') all = false;
            }
            closedir(d);
        }
        if (all && seen > 0) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

// The pid of the test's etcd, from SNOWFLAKE_TEST_ETCD_PID (0 if unset).
inline pid_t test_etcd_pid() {
    const char* v = std::getenv("SNOWFLAKE_TEST_ETCD_PID");
    return v != nullptr ? static_cast<pid_t>(std::atoi(v)) : 0;
}

class Frozen {
public:
    explicit Frozen(pid_t pid = test_etcd_pid()) : pid_(pid) {
        ok_ = pid_ > 0 && kill(pid_, SIGSTOP) == 0 && all_threads_stopped(pid_, 2000);
    }
    ~Frozen() { thaw(); }
    Frozen(const Frozen&) = delete;
    Frozen& operator=(const Frozen&) = delete;

    bool ok() const { return ok_; }
    void thaw() {
        if (pid_ > 0) kill(pid_, SIGCONT);
        pid_ = 0;
    }

private:
    pid_t pid_;
    bool ok_ = false;
};

}  // namespace snowflake::test
