// A misbehaving stand-in for etcd's gateway, on a loopback port, built on
// libmicrohttpd: it answers every POST with the status and body it was told
// to, optionally after a delay. For tests of the client's handling of bad
// answers; the real etcd covers the good ones.
#pragma once

#include "loopback.hpp"

#include <microhttpd.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace snowflake::test {

class FakeGateway {
public:
    FakeGateway() {
        daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                                   nullptr, nullptr, &FakeGateway::handle, this,
                                   MHD_OPTION_SOCK_ADDR, loopback_any_port(), MHD_OPTION_END);
        port_ = bound_port(daemon_);
    }
    ~FakeGateway() {
        if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
    }
    FakeGateway(const FakeGateway&) = delete;
    FakeGateway& operator=(const FakeGateway&) = delete;

    bool running() const { return daemon_ != nullptr && port_ != 0; }
    std::string endpoint() const { return loopback_endpoint(port_); }

    void answer(unsigned int status, std::string body, int delay_ms = 0) {
        std::lock_guard<std::mutex> g(mu_);
        status_ = status;
        body_ = std::move(body);
        delay_ms_ = delay_ms;
    }
    int requests() {
        std::lock_guard<std::mutex> g(mu_);
        return requests_;
    }

private:
    static MHD_Result handle(void* cls, struct MHD_Connection* conn, const char*, const char*,
                             const char*, const char*, size_t* upload_data_size, void** con_cls) {
        auto* self = static_cast<FakeGateway*>(cls);
        static int first_call_marker;
        if (*con_cls == nullptr) {  // headers only: ask for the body
            *con_cls = &first_call_marker;
            return MHD_YES;
        }
        if (*upload_data_size != 0) {  // the body, ignored
            *upload_data_size = 0;
            return MHD_YES;
        }
        unsigned int status;
        std::string body;
        int delay_ms;
        {
            std::lock_guard<std::mutex> g(self->mu_);
            self->requests_++;
            status = self->status_;
            body = self->body_;
            delay_ms = self->delay_ms_;
        }
        if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        struct MHD_Response* r =
            MHD_create_response_from_buffer(body.size(), body.data(), MHD_RESPMEM_MUST_COPY);
        MHD_add_response_header(r, "Content-Type", "application/json");
        const MHD_Result ret = MHD_queue_response(conn, status, r);
        MHD_destroy_response(r);
        return ret;
    }

    struct MHD_Daemon* daemon_ = nullptr;
    uint16_t port_ = 0;
    std::mutex mu_;
    unsigned int status_ = 200;
    std::string body_ = "{}";
    int delay_ms_ = 0;
    int requests_ = 0;
};

}  // namespace snowflake::test
