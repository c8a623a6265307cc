// A proxy in front of the real etcd, on a loopback port, built on
// libmicrohttpd (the server side) and libcurl (the client side): it forwards
// every POST to etcd and returns etcd's answer. Armed (hold_next), it takes
// the next request to a given path whose body contains a given text, forwards
// it to etcd at once, so that etcd applies it, and holds etcd's answer back
// until release() (or the proxy's end): the caller's own timeout runs out
// first, and it sees a write that timed out but was applied. For tests of
// the lease driver's handling of lost answers. Cut (cut()), it answers
// every request 502 without forwarding it: a partition from etcd.
#pragma once

#include "loopback.hpp"

#include <curl/curl.h>
#include <microhttpd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

namespace snowflake::test {

class DelayProxy {
public:
    // etcd_endpoint: the real etcd, e.g. "http://127.0.0.1:2379".
    explicit DelayProxy(std::string etcd_endpoint) : upstream_(std::move(etcd_endpoint)) {
        daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
                                   nullptr, nullptr, &DelayProxy::handle, this,
                                   MHD_OPTION_SOCK_ADDR, loopback_any_port(),
                                   MHD_OPTION_NOTIFY_COMPLETED, &DelayProxy::completed, this,
                                   MHD_OPTION_END);
        port_ = bound_port(daemon_);
    }
    // Releases a held answer, then stops the daemon, which waits for every
    // connection's thread (a forward to etcd takes at most kForwardTimeoutMs).
    ~DelayProxy() {
        {
            std::lock_guard<std::mutex> g(mu_);
            stopping_ = true;
        }
        cv_.notify_all();
        if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
    }
    DelayProxy(const DelayProxy&) = delete;
    DelayProxy& operator=(const DelayProxy&) = delete;

    bool running() const { return daemon_ != nullptr && port_ != 0; }
    std::string endpoint() const { return loopback_endpoint(port_); }

    // Arms the proxy for the next request to path whose body contains
    // body_contains: forwarded at once, its answer held until release().
    void hold_next(std::string path, std::string body_contains) {
        std::lock_guard<std::mutex> g(mu_);
        armed_ = true;
        hold_path_ = std::move(path);
        hold_contains_ = std::move(body_contains);
    }
    // Lets a held answer go (to a caller that has given up on it by then).
    void release() {
        {
            std::lock_guard<std::mutex> g(mu_);
            released_ = true;
        }
        cv_.notify_all();
    }
    // How many requests were held (0 or 1 per hold_next()).
    int held() {
        std::lock_guard<std::mutex> g(mu_);
        return held_;
    }
    // The held request's body, and etcd's answer to it ("" until etcd
    // answered; HTTP status 0 if the forward failed).
    std::string held_request() {
        std::lock_guard<std::mutex> g(mu_);
        return held_request_;
    }
    bool held_answered() {
        std::lock_guard<std::mutex> g(mu_);
        return held_answered_;
    }
    long held_status() {
        std::lock_guard<std::mutex> g(mu_);
        return held_status_;
    }
    std::string held_answer() {
        std::lock_guard<std::mutex> g(mu_);
        return held_answer_;
    }
    int requests() {
        std::lock_guard<std::mutex> g(mu_);
        return requests_;
    }
    // Cut (a partition between the caller and etcd): every request is
    // answered 502 at once, none reaches etcd, until cut(false).
    void cut(bool on) {
        std::lock_guard<std::mutex> g(mu_);
        cut_ = on;
    }

private:
    static constexpr long kForwardTimeoutMs = 10000;

    static size_t on_write(char* data, size_t size, size_t n, void* out) {
        static_cast<std::string*>(out)->append(data, size * n);
        return size * n;
    }

    // POSTs body to etcd; returns the HTTP status (0: no answer) and body.
    long forward(const std::string& path, const std::string& body, std::string* answer) {
        CURL* easy = curl_easy_init();
        if (easy == nullptr) return 0;
        const std::string url = upstream_ + path;
        struct curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
        curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
        curl_easy_setopt(easy, CURLOPT_PROXY, "");
        curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, kForwardTimeoutMs);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &DelayProxy::on_write);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, answer);
        long status = 0;
        if (curl_easy_perform(easy) == CURLE_OK) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(headers);
        curl_easy_cleanup(easy);
        return status;
    }

    static MHD_Result handle(void* cls, struct MHD_Connection* conn, const char* url, const char* method,
                             const char*, const char* upload_data, size_t* upload_data_size, void** con_cls) {
        auto* self = static_cast<DelayProxy*>(cls);
        if (*con_cls == nullptr) {  // headers only: ask for the body
            *con_cls = new std::string;
            return MHD_YES;
        }
        auto* body = static_cast<std::string*>(*con_cls);
        if (*upload_data_size != 0) {
            body->append(upload_data, *upload_data_size);
            *upload_data_size = 0;
            return MHD_YES;
        }
        const std::string path = url != nullptr ? url : "";
        bool hold = false;
        bool cut = false;
        {
            std::lock_guard<std::mutex> g(self->mu_);
            self->requests_++;
            cut = self->cut_;
            if (self->armed_ && std::strcmp(method, "POST") == 0 && path == self->hold_path_ &&
                body->find(self->hold_contains_) != std::string::npos) {
                self->armed_ = false;
                self->released_ = false;
                self->held_++;
                self->held_request_ = *body;
                self->held_answered_ = false;
                self->held_answer_.clear();
                self->held_status_ = 0;
                hold = true;
            }
        }
        std::string answer;
        long status = cut ? 0 : self->forward(path, *body, &answer);
        if (hold) {
            std::unique_lock<std::mutex> g(self->mu_);
            self->held_answered_ = true;
            self->held_status_ = status;
            self->held_answer_ = answer;
            // Bounded, so that a test that forgets release() still ends.
            self->cv_.wait_for(g, std::chrono::seconds(60),
                               [self] { return self->released_ || self->stopping_; });
        }
        if (status == 0) {
            status = MHD_HTTP_BAD_GATEWAY;
            answer = cut ? "{\"error\":\"proxy: cut from etcd\"}" : "{\"error\":\"proxy: no answer from etcd\"}";
        }
        struct MHD_Response* r =
            MHD_create_response_from_buffer(answer.size(), answer.data(), MHD_RESPMEM_MUST_COPY);
        MHD_add_response_header(r, "Content-Type", "application/json");
        const MHD_Result ret = MHD_queue_response(conn, static_cast<unsigned int>(status), r);
        MHD_destroy_response(r);
        return ret;
    }

    static void completed(void*, struct MHD_Connection*, void** con_cls, enum MHD_RequestTerminationCode) {
        delete static_cast<std::string*>(*con_cls);
        *con_cls = nullptr;
    }

    std::string upstream_;
    struct MHD_Daemon* daemon_ = nullptr;
    uint16_t port_ = 0;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    bool armed_ = false;
    bool released_ = false;
    std::string hold_path_;
    std::string hold_contains_;
    int held_ = 0;
    std::string held_request_;
    bool held_answered_ = false;
    long held_status_ = 0;
    std::string held_answer_;
    int requests_ = 0;
    bool cut_ = false;
};

}  // namespace snowflake::test
