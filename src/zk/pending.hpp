// One request of the ZooKeeper coordinator (coordinator.hpp) in flight,
// and the completions the client runs for it. Included by coordinator.cpp
// only.
#pragma once

#include "coordinator.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <zookeeper/zookeeper.h>

namespace snowflake::zk {

// A request in flight. Owned by the waiting call while it waits; a call that
// gives up (timeout, abort) marks it abandoned and its completion frees it
// (the client runs every completion once, with ZCLOSING at the latest when
// the handle is closed).
struct ZkCoordinator::Pending {
    bool done = false;
    bool abandoned = false;
    int rc = ZOK;
    bool has_value = false;
    std::string value;
    bool has_stat = false;
    struct Stat stat {};
    std::vector<std::string> children;
    // multi: its ops, their results, what the create and setData ops fill
    // in (the client may use any of them until the completion has run).
    zoo_op_t ops[2] = {};
    zoo_op_result_t results[2] = {};
    struct Stat set_stat {};
    struct Stat stamp_stat {};
    char created_path[512] = {};
    std::string paths[2];
    std::string data;
    std::string stamp;  // the worker node's data, set again to stamp it
};

// Completions: record the answer, or free an abandoned request.
inline bool finish(const void* data, int rc, ZkCoordinator::Pending** out) {
    auto* p = static_cast<ZkCoordinator::Pending*>(const_cast<void*>(data));
    if (p->abandoned) {
        delete p;
        return false;
    }
    p->done = true;
    p->rc = rc;
    *out = p;
    return true;
}

inline void on_void(int rc, const void* data) {
    ZkCoordinator::Pending* p;
    (void)finish(data, rc, &p);
}

inline void on_string(int rc, const char*, const void* data) {
    ZkCoordinator::Pending* p;
    (void)finish(data, rc, &p);
}

inline void on_data(int rc, const char* value, int len, const struct Stat* stat, const void* data) {
    ZkCoordinator::Pending* p;
    if (!finish(data, rc, &p)) return;
    if (rc == ZOK) {
        if (value != nullptr && len > 0) p->value.assign(value, static_cast<size_t>(len));
        p->has_value = true;
        if (stat != nullptr) {
            p->stat = *stat;
            p->has_stat = true;
        }
    }
}

inline void on_stat(int rc, const struct Stat* stat, const void* data) {
    ZkCoordinator::Pending* p;
    if (!finish(data, rc, &p)) return;
    if (rc == ZOK && stat != nullptr) {
        p->stat = *stat;
        p->has_stat = true;
    }
}

inline void on_children(int rc, const struct String_vector* names, const void* data) {
    ZkCoordinator::Pending* p;
    if (!finish(data, rc, &p)) return;
    if (rc == ZOK && names != nullptr)
        for (int32_t i = 0; i < names->count; i++) p->children.emplace_back(names->data[i]);
}

}  // namespace snowflake::zk
