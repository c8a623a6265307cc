// addon.cpp: the Node-API binding of libsnowflake_ids (sdk/c/include/snowflake_ids.h),
// loaded by sdk/node/index.js, which holds the JavaScript API (options, errors' class,
// decode's epoch). Node-API only (node_api.h), so one build serves every Node.js
// version with that ABI.
//
// The event loop never waits here: sf_open + sf_wait_ready and sf_close run as
// async work on libuv's thread pool; the id path (nextId, nextIdString, nextIds)
// is one library call each, which waits at most for the clock tolerance or the
// next millisecond (the header's promise).
//
// Lifetime: a Native owns its sf_generator* until close() takes it (the pointer
// is cleared on the main thread first, so no call can reach a closing
// generator). The id path's functions carry the Native in their data rather
// than unwrapping `this` (a lookup that cost about a third of a call); the
// Native lives as long as the wrapper or any of them. A generator that is garbage-collected while open is closed on a
// detached thread; those still open when the environment ends (process exit,
// a worker thread's end) are closed by the cleanup hook, so that their lease
// ends and their mark is written.

#include "snowflake_ids.h"

// Node-API 8 (Node.js 12.22, 14.17, 15.12, 16 and later): BigInt, Date, instance data.
#define NAPI_VERSION 8
#include <node_api.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace {

// An error as the library reported it, copied out of the thread-local
// sf_last_error() of the thread that failed (a pool thread, for async work).
struct ErrorCopy {
    sf_code code = SF_OK;
    char sqlstate[6] = "00000";
    char message[256] = "";
    char detail[512] = "";
    char hint[256] = "";
};

ErrorCopy last_error(sf_code code, const char* fallback = nullptr) {
    ErrorCopy c;
    c.code = code;
    const sf_error* e = sf_last_error();
    if (e != nullptr && e->code == code) {
        std::memcpy(c.sqlstate, e->sqlstate, sizeof c.sqlstate);
        std::snprintf(c.message, sizeof c.message, "%s", e->message);
        std::snprintf(c.detail, sizeof c.detail, "%s", e->detail);
        std::snprintf(c.hint, sizeof c.hint, "%s", e->hint);
    } else {
        std::snprintf(c.sqlstate, sizeof c.sqlstate, "%s", sf_sqlstate(code));
        std::snprintf(c.message, sizeof c.message, "%s", fallback ? fallback : "snowflake_ids error");
    }
    c.sqlstate[5] = '\0';
    return c;
}

ErrorCopy closed_error() {
    ErrorCopy c;
    c.code = SF_ERR_CLOSED;
    std::snprintf(c.sqlstate, sizeof c.sqlstate, "%s", sf_sqlstate(SF_ERR_CLOSED));
    std::snprintf(c.message, sizeof c.message, "the generator is closed");
    std::snprintf(c.hint, sizeof c.hint, "Open a new generator with Generator.open().");
    return c;
}

// The name of each sf_code, as error.reason (55000 is both "closed" and "fleet").
const char* reason(sf_code code) {
    switch (code) {
        case SF_OK: return "OK";
        case SF_ERR_CLOCK_BEHIND: return "CLOCK_BEHIND";
        case SF_ERR_CLOCK_RANGE: return "CLOCK_RANGE";
        case SF_ERR_NO_LEASE: return "NO_LEASE";
        case SF_ERR_CLOCK_UNSYNC: return "CLOCK_UNSYNC";
        case SF_ERR_INVALID: return "INVALID";
        case SF_ERR_NOT_READY: return "NOT_READY";
        case SF_ERR_CLOSED: return "CLOSED";
        case SF_ERR_FLEET: return "FLEET";
        case SF_ERR_MARK_FILE: return "MARK_FILE";
        case SF_ERR_MARK_LOCKED: return "MARK_LOCKED";
        case SF_ERR_NO_MEMORY: return "NO_MEMORY";
    }
    return "UNKNOWN";
}

struct Native {
    sf_generator* gen = nullptr;
    napi_env env = nullptr;
    // The wrapper and the id path's functions (below) that point here: the
    // last one's finalizer frees the Native (finalizers run on the JS thread).
    int refs = 0;
};

void release(Native* n) {
    if (--n->refs == 0) delete n;
}

// Every open Native of every environment (the main thread's and workers'),
// for the cleanup hooks. Guarded by g_mu.
std::mutex g_mu;
std::set<Native*> g_open;

struct Instance {
    napi_ref error_class = nullptr;   // SnowflakeError, set by index.js
    napi_ref native_class = nullptr;  // NativeGenerator
};

Instance* instance(napi_env env) {
    void* data = nullptr;
    napi_get_instance_data(env, &data);
    return static_cast<Instance*>(data);
}

napi_value str(napi_env env, const char* s) {
    napi_value v;
    napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
    return v;
}

void set(napi_env env, napi_value obj, const char* key, napi_value v) {
    napi_set_named_property(env, obj, key, v);
}

napi_value null_value(napi_env env) {
    napi_value v;
    napi_get_null(env, &v);
    return v;
}

napi_value num(napi_env env, double d) {
    napi_value v;
    napi_create_double(env, d, &v);
    return v;
}

// A SnowflakeError (index.js) for e: code = the SQLSTATE, hint and detail
// (undefined when the library gave none), reason = the sf_code's name.
napi_value make_error(napi_env env, const ErrorCopy& e) {
    napi_value msg = str(env, e.message), err = nullptr, cls = nullptr;
    Instance* inst = instance(env);
    if (inst != nullptr && inst->error_class != nullptr &&
        napi_get_reference_value(env, inst->error_class, &cls) == napi_ok && cls != nullptr) {
        napi_new_instance(env, cls, 1, &msg, &err);
    }
    if (err == nullptr) napi_create_error(env, nullptr, msg, &err);
    set(env, err, "code", str(env, e.sqlstate));
    set(env, err, "sqlstate", str(env, e.sqlstate));
    set(env, err, "reason", str(env, reason(e.code)));
    if (e.detail[0] != '\0') set(env, err, "detail", str(env, e.detail));
    if (e.hint[0] != '\0') set(env, err, "hint", str(env, e.hint));
    return err;
}

napi_value throw_error(napi_env env, const ErrorCopy& e) {
    napi_throw(env, make_error(env, e));
    return nullptr;
}

napi_value throw_invalid(napi_env env, const char* message) {
    ErrorCopy e;
    e.code = SF_ERR_INVALID;
    std::snprintf(e.sqlstate, sizeof e.sqlstate, "%s", sf_sqlstate(SF_ERR_INVALID));
    std::snprintf(e.message, sizeof e.message, "%s", message);
    return throw_error(env, e);
}

void forget(Native* n) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_open.erase(n);
}

// The wrapper was garbage-collected: close a generator left open on a thread
// of its own (sf_close may take up to a second).
void finalize_native(napi_env, void* data, void*) {
    auto* n = static_cast<Native*>(data);
    forget(n);
    if (n->gen != nullptr) {
        sf_generator* gen = n->gen;
        n->gen = nullptr;
        std::thread([gen] { sf_close(gen); }).detach();
    }
    release(n);
}

void finalize_fn(napi_env, void* data, void*) { release(static_cast<Native*>(data)); }

// The environment ends: close what is still open, here and now.
void cleanup_hook(void* arg) {
    napi_env env = static_cast<napi_env>(arg);
    std::set<Native*> mine;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        for (Native* n : g_open)
            if (n->env == env) mine.insert(n);
        for (Native* n : mine) g_open.erase(n);
    }
    for (Native* n : mine) {
        sf_generator* gen = n->gen;
        n->gen = nullptr;
        sf_close(gen);
    }
}

Native* unwrap_this(napi_env env, napi_callback_info info, size_t* argc, napi_value* argv) {
    napi_value self;
    napi_get_cb_info(env, info, argc, argv, &self, nullptr);
    void* data = nullptr;
    if (napi_unwrap(env, self, &data) != napi_ok) {
        throw_invalid(env, "not a snowflake-ids generator");
        return nullptr;
    }
    return static_cast<Native*>(data);
}

// ---- open: sf_open and sf_wait_ready on the thread pool ----

struct OpenWork {
    napi_async_work work = nullptr;
    napi_deferred deferred = nullptr;
    std::string etcd, zk, prefix, epoch, mark, layout;
    bool has_etcd = false, has_zk = false, has_prefix = false, has_epoch = false, has_mark = false,
         has_layout = false;
    int32_t worker_id = -1, worker_id_min = -1, worker_id_max = -1, lease_ttl_ms = -1, tolerance_ms = -1;
    int32_t clock_backwards = -1, timeout_ms = 30000;
    sf_generator* gen = nullptr;
    sf_code rc = SF_OK;
    ErrorCopy err;
};

void open_execute(napi_env, void* data) {
    auto* w = static_cast<OpenWork*>(data);
    sf_config cfg;
    sf_config_init(&cfg);
    if (w->has_etcd) cfg.etcd_endpoints = w->etcd.c_str();
    if (w->has_zk) cfg.zookeeper_hosts = w->zk.c_str();
    if (w->has_prefix) cfg.lease_prefix = w->prefix.c_str();
    if (w->has_epoch) cfg.epoch = w->epoch.c_str();
    if (w->has_mark) cfg.mark_file = w->mark.c_str();
    if (w->has_layout) cfg.layout = w->layout.c_str();
    if (w->worker_id >= -1) cfg.worker_id = w->worker_id;
    if (w->worker_id_min >= 0) cfg.worker_id_min = w->worker_id_min;
    if (w->worker_id_max >= 0) cfg.worker_id_max = w->worker_id_max;
    if (w->lease_ttl_ms >= 0) cfg.lease_ttl_ms = w->lease_ttl_ms;
    if (w->tolerance_ms >= 0) cfg.clock_tolerance_ms = w->tolerance_ms;
    if (w->clock_backwards >= 0) cfg.clock_backwards = static_cast<sf_clock_backwards>(w->clock_backwards);
    cfg.runtime = "node";
    char msg[512] = "";
    w->rc = sf_open(&cfg, &w->gen, msg, sizeof msg);
    if (w->rc != SF_OK) {
        w->err = last_error(w->rc, msg);
        w->gen = nullptr;
        return;
    }
    w->rc = sf_wait_ready(w->gen, w->timeout_ms);
    if (w->rc != SF_OK) {
        w->err = last_error(w->rc);
        sf_close(w->gen);
        w->gen = nullptr;
    }
}

void open_complete(napi_env env, napi_status, void* data) {
    auto* w = static_cast<OpenWork*>(data);
    if (w->rc != SF_OK) {
        napi_reject_deferred(env, w->deferred, make_error(env, w->err));
    } else {
        auto* n = new Native;
        n->gen = w->gen;
        n->env = env;
        napi_value cls, obj, ext;
        napi_get_reference_value(env, instance(env)->native_class, &cls);
        napi_create_external(env, n, nullptr, nullptr, &ext);
        napi_new_instance(env, cls, 1, &ext, &obj);
        {
            std::lock_guard<std::mutex> lock(g_mu);
            g_open.insert(n);
        }
        napi_resolve_deferred(env, w->deferred, obj);
    }
    napi_delete_async_work(env, w->work);
    delete w;
}

bool get_string(napi_env env, napi_value obj, const char* key, std::string* out, bool* has) {
    napi_value v;
    napi_valuetype t;
    if (napi_get_named_property(env, obj, key, &v) != napi_ok || napi_typeof(env, v, &t) != napi_ok) return false;
    if (t == napi_undefined || t == napi_null) return true;
    if (t != napi_string) return false;
    size_t len = 0;
    napi_get_value_string_utf8(env, v, nullptr, 0, &len);
    out->resize(len);
    napi_get_value_string_utf8(env, v, &(*out)[0], len + 1, &len);
    *has = true;
    return true;
}

bool get_int(napi_env env, napi_value obj, const char* key, int32_t* out) {
    napi_value v;
    napi_valuetype t;
    if (napi_get_named_property(env, obj, key, &v) != napi_ok || napi_typeof(env, v, &t) != napi_ok) return false;
    if (t == napi_undefined || t == napi_null) return true;
    if (t != napi_number) return false;
    return napi_get_value_int32(env, v, out) == napi_ok;
}

// open(options): options already checked and normalized by index.js (strings,
// integers in milliseconds, clockBackwards 0/1). A promise of a NativeGenerator.
napi_value open_generator(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
    if (argc < 1) return throw_invalid(env, "open needs an options object");
    auto* w = new OpenWork;
    napi_value o = argv[0];
    bool ok = get_string(env, o, "etcdEndpoints", &w->etcd, &w->has_etcd) &&
              get_string(env, o, "zookeeperHosts", &w->zk, &w->has_zk) &&
              get_string(env, o, "leasePrefix", &w->prefix, &w->has_prefix) &&
              get_string(env, o, "epoch", &w->epoch, &w->has_epoch) &&
              get_string(env, o, "markFile", &w->mark, &w->has_mark) &&
              get_string(env, o, "layout", &w->layout, &w->has_layout) &&
              get_int(env, o, "workerId", &w->worker_id) && get_int(env, o, "workerIdMin", &w->worker_id_min) &&
              get_int(env, o, "workerIdMax", &w->worker_id_max) &&
              get_int(env, o, "leaseTtlMs", &w->lease_ttl_ms) &&
              get_int(env, o, "clockToleranceMs", &w->tolerance_ms) &&
              get_int(env, o, "clockBackwards", &w->clock_backwards) &&
              get_int(env, o, "timeoutMs", &w->timeout_ms);
    if (!ok) {
        delete w;
        return throw_invalid(env, "invalid generator options");
    }
    napi_value promise, name;
    napi_create_promise(env, &w->deferred, &promise);
    napi_create_string_utf8(env, "snowflake_ids.open", NAPI_AUTO_LENGTH, &name);
    napi_create_async_work(env, nullptr, name, open_execute, open_complete, w, &w->work);
    napi_queue_async_work(env, w->work);
    return promise;
}

// ---- close: sf_close on the thread pool ----

struct CloseWork {
    napi_async_work work = nullptr;
    napi_deferred deferred = nullptr;
    sf_generator* gen = nullptr;
    sf_code rc = SF_OK;
    ErrorCopy err;
};

void close_execute(napi_env, void* data) {
    auto* w = static_cast<CloseWork*>(data);
    w->rc = sf_close(w->gen);
    if (w->rc != SF_OK) w->err = last_error(w->rc);
}

void close_complete(napi_env env, napi_status, void* data) {
    auto* w = static_cast<CloseWork*>(data);
    if (w->rc != SF_OK) {
        napi_reject_deferred(env, w->deferred, make_error(env, w->err));
    } else {
        napi_value u;
        napi_get_undefined(env, &u);
        napi_resolve_deferred(env, w->deferred, u);
    }
    napi_delete_async_work(env, w->work);
    delete w;
}

napi_value gen_close(napi_env env, napi_callback_info info) {
    size_t argc = 0;
    Native* n = unwrap_this(env, info, &argc, nullptr);
    if (n == nullptr) return nullptr;
    auto* w = new CloseWork;
    napi_value promise, name;
    napi_create_promise(env, &w->deferred, &promise);
    w->gen = n->gen;
    n->gen = nullptr;  // from now on every call on n fails as closed
    forget(n);
    if (w->gen == nullptr) {  // closed already: close() is idempotent
        napi_value u;
        napi_get_undefined(env, &u);
        napi_resolve_deferred(env, w->deferred, u);
        delete w;
        return promise;
    }
    napi_create_string_utf8(env, "snowflake_ids.close", NAPI_AUTO_LENGTH, &name);
    napi_create_async_work(env, nullptr, name, close_execute, close_complete, w, &w->work);
    napi_queue_async_work(env, w->work);
    return promise;
}

// ---- the id path ----

napi_value gen_next_id(napi_env env, napi_callback_info info) {
    size_t argc = 0;
    void* data;
    napi_get_cb_info(env, info, &argc, nullptr, nullptr, &data);
    auto* n = static_cast<Native*>(data);
    if (n->gen == nullptr) return throw_error(env, closed_error());
    int64_t id;
    sf_code rc = sf_next_id(n->gen, &id);
    if (rc != SF_OK) return throw_error(env, last_error(rc));
    napi_value v;
    napi_create_bigint_int64(env, id, &v);
    return v;
}

napi_value gen_next_id_string(napi_env env, napi_callback_info info) {
    size_t argc = 0;
    void* data;
    napi_get_cb_info(env, info, &argc, nullptr, nullptr, &data);
    auto* n = static_cast<Native*>(data);
    if (n->gen == nullptr) return throw_error(env, closed_error());
    int64_t id;
    sf_code rc = sf_next_id(n->gen, &id);
    if (rc != SF_OK) return throw_error(env, last_error(rc));
    char buf[24];
    int len = std::snprintf(buf, sizeof buf, "%" PRId64, id);
    napi_value v;
    napi_create_string_latin1(env, buf, static_cast<size_t>(len), &v);
    return v;
}

// nextIds(n): the ids are written by the library straight into the
// BigInt64Array's memory.
napi_value gen_next_ids(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    void* self;
    napi_get_cb_info(env, info, &argc, argv, nullptr, &self);
    auto* n = static_cast<Native*>(self);
    if (n->gen == nullptr) return throw_error(env, closed_error());
    double want = 0;
    if (argc < 1 || napi_get_value_double(env, argv[0], &want) != napi_ok || !(want >= 1 && want <= 1000000) ||
        want != static_cast<double>(static_cast<int32_t>(want)))
        return throw_invalid(env, "nextIds(n) takes an integer n from 1 to 1000000");
    int32_t count = static_cast<int32_t>(want);
    napi_value ab, arr;
    void* data = nullptr;
    if (napi_create_arraybuffer(env, static_cast<size_t>(count) * 8, &data, &ab) != napi_ok) return nullptr;
    int32_t got = 0;
    sf_code rc = sf_next_ids(n->gen, static_cast<int64_t*>(data), count, &got);
    if (rc != SF_OK) return throw_error(env, last_error(rc));
    napi_create_typedarray(env, napi_bigint64_array, static_cast<size_t>(count), ab, 0, &arr);
    return arr;
}

const char* state_name(sf_lease_state s) {
    switch (s) {
        case SF_STATE_STATIC: return "static";
        case SF_STATE_ACQUIRING: return "acquiring";
        case SF_STATE_HELD: return "held";
        case SF_STATE_EXPIRED: return "expired";
        case SF_STATE_CLOSED: return "closed";
    }
    return "unknown";
}

// -1 (none) as null.
napi_value num_or_null(napi_env env, int64_t v) {
    return v < 0 ? null_value(env) : num(env, static_cast<double>(v));
}

napi_value gen_stats(napi_env env, napi_callback_info info) {
    size_t argc = 0;
    Native* n = unwrap_this(env, info, &argc, nullptr);
    if (n == nullptr) return nullptr;
    if (n->gen == nullptr) return throw_error(env, closed_error());
    sf_stats s;
    sf_code rc = sf_status(n->gen, &s);
    if (rc != SF_OK) return throw_error(env, last_error(rc));
    napi_value o;
    napi_create_object(env, &o);
    set(env, o, "state", str(env, state_name(s.state)));
    set(env, o, "workerId", num_or_null(env, s.worker_id));
    set(env, o, "backupWorkerId", num_or_null(env, s.backup_worker_id));
    set(env, o, "coordinator", str(env, s.coordinator ? s.coordinator : ""));
    set(env, o, "idsIssued", num(env, static_cast<double>(s.ids_issued)));
    set(env, o, "leaseMsLeft", num_or_null(env, s.lease_ms_left));
    set(env, o, "reservedUntilUnixMs", num_or_null(env, s.reserved_until_unix_ms));
    set(env, o, "clockBackwardsEvents", num(env, static_cast<double>(s.clock_backwards_events)));
    set(env, o, "clockBackwardsErrors", num(env, static_cast<double>(s.clock_backwards_errors)));
    set(env, o, "overflowWaits", num(env, static_cast<double>(s.overflow_waits)));
    set(env, o, "leaseAcquisitions", num(env, static_cast<double>(s.lease_acquisitions)));
    set(env, o, "leaseFailures", num(env, static_cast<double>(s.lease_failures)));
    set(env, o, "pid", num(env, s.pid));
    s.last_error[sizeof s.last_error - 1] = '\0';
    set(env, o, "lastError", s.last_error[0] ? str(env, s.last_error) : null_value(env));
    s.layout[sizeof s.layout - 1] = '\0';
    set(env, o, "layout", str(env, s.layout));
    return o;
}

napi_value gen_closed(napi_env env, napi_callback_info info) {
    size_t argc = 0;
    Native* n = unwrap_this(env, info, &argc, nullptr);
    if (n == nullptr) return nullptr;
    napi_value v;
    napi_get_boolean(env, n->gen == nullptr, &v);
    return v;
}

// The NativeGenerator constructor: only open_complete calls it, with the
// Native in an external.
napi_value native_ctor(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], self;
    napi_get_cb_info(env, info, &argc, argv, &self, nullptr);
    void* data = nullptr;
    napi_valuetype t = napi_undefined;
    if (argc == 1) napi_typeof(env, argv[0], &t);
    if (t != napi_external || napi_get_value_external(env, argv[0], &data) != napi_ok)
        return throw_invalid(env, "use Generator.open() to make a generator");
    auto* n = static_cast<Native*>(data);
    n->refs = 1;
    napi_wrap(env, self, n, finalize_native, nullptr, nullptr);
    // The id path as functions of this generator, their Native in their data:
    // a call needs no napi_unwrap (index.js makes them the Generator's own).
    static const struct {
        const char* name;
        napi_callback cb;
    } fns[] = {{"nextId", gen_next_id}, {"nextIdString", gen_next_id_string}, {"nextIds", gen_next_ids}};
    for (const auto& f : fns) {
        napi_value fn;
        napi_create_function(env, f.name, NAPI_AUTO_LENGTH, f.cb, n, &fn);
        n->refs++;
        napi_add_finalizer(env, fn, n, finalize_fn, nullptr, nullptr);
        napi_property_descriptor d = {f.name, nullptr, nullptr, nullptr, nullptr, fn, napi_default, nullptr};
        napi_define_properties(env, self, 1, &d);
    }
    return self;
}

// ---- decode ----

// decode(id: bigint, epochUnixMs: number, layout?: string) -> { timestamp, msSinceEpoch, workerId, sequence }
// (layout undefined: twitter, sf_decode_layout's NULL)
napi_value decode(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
    std::string layout;
    bool has_layout = false;
    napi_valuetype lt = napi_undefined;
    if (argc >= 3) napi_typeof(env, argv[2], &lt);
    if (lt == napi_string) {
        size_t len = 0;
        napi_get_value_string_utf8(env, argv[2], nullptr, 0, &len);
        layout.resize(len);
        napi_get_value_string_utf8(env, argv[2], &layout[0], len + 1, &len);
        has_layout = true;
    } else if (lt != napi_undefined && lt != napi_null) {
        return throw_invalid(env, "a layout is a string");
    }
    int64_t id = 0, epoch = 0;
    bool lossless = true;
    double epoch_d = 0;
    if (argc < 2 || napi_get_value_bigint_int64(env, argv[0], &id, &lossless) != napi_ok || !lossless)
        return throw_invalid(env, "an id is a bigint from 0 to 2^63-1");
    if (napi_get_value_double(env, argv[1], &epoch_d) != napi_ok) return throw_invalid(env, "invalid epoch");
    epoch = static_cast<int64_t>(epoch_d);
    sf_decoded d;
    sf_code rc = sf_decode_layout(id, epoch, has_layout ? layout.c_str() : nullptr, &d);
    if (rc != SF_OK) return throw_error(env, last_error(rc));
    napi_value o, date;
    napi_create_object(env, &o);
    napi_create_date(env, static_cast<double>(d.unix_ms), &date);
    set(env, o, "timestamp", date);
    set(env, o, "msSinceEpoch", num(env, static_cast<double>(d.ms_since_epoch)));
    set(env, o, "workerId", num(env, d.worker_id));
    set(env, o, "sequence", num(env, d.sequence));
    return o;
}

// parseEpoch(text) -> Unix milliseconds
napi_value parse_epoch(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
    std::string text;
    bool has = false;
    size_t len = 0;
    napi_valuetype t = napi_undefined;
    if (argc == 1) napi_typeof(env, argv[0], &t);
    if (t != napi_string) return throw_invalid(env, "an epoch is a string (ISO 8601 with an offset)");
    napi_get_value_string_utf8(env, argv[0], nullptr, 0, &len);
    text.resize(len);
    napi_get_value_string_utf8(env, argv[0], &text[0], len + 1, &len);
    has = true;
    int64_t ms = 0;
    sf_code rc = sf_parse_epoch(has ? text.c_str() : nullptr, &ms);
    if (rc != SF_OK) return throw_error(env, last_error(rc));
    return num(env, static_cast<double>(ms));
}

// setErrorClass(SnowflakeError): the class errors are made of.
napi_value set_error_class(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
    Instance* inst = instance(env);
    if (argc == 1) {
        if (inst->error_class != nullptr) napi_delete_reference(env, inst->error_class);
        napi_create_reference(env, argv[0], 1, &inst->error_class);
    }
    return nullptr;
}

// sqlstate(code) -> the SQLSTATE of an sf_code (for index.js's own checks).
napi_value sqlstate(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
    int32_t code = 0;
    if (argc < 1 || napi_get_value_int32(env, argv[0], &code) != napi_ok) return throw_invalid(env, "a code");
    return str(env, sf_sqlstate(static_cast<sf_code>(code)));
}

void finalize_instance(napi_env env, void* data, void*) {
    auto* inst = static_cast<Instance*>(data);
    if (inst->error_class != nullptr) napi_delete_reference(env, inst->error_class);
    if (inst->native_class != nullptr) napi_delete_reference(env, inst->native_class);
    delete inst;
}

napi_value init(napi_env env, napi_value exports) {
    auto* inst = new Instance;
    napi_set_instance_data(env, inst, finalize_instance, nullptr);
    napi_add_env_cleanup_hook(env, cleanup_hook, env);

    napi_property_descriptor methods[] = {
        {"stats", nullptr, gen_stats, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"close", nullptr, gen_close, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"closed", nullptr, nullptr, gen_closed, nullptr, nullptr, napi_default, nullptr},
    };
    napi_value cls;
    napi_define_class(env, "NativeGenerator", NAPI_AUTO_LENGTH, native_ctor, nullptr,
                      sizeof methods / sizeof methods[0], methods, &cls);
    napi_create_reference(env, cls, 1, &inst->native_class);

    napi_property_descriptor fns[] = {
        {"open", nullptr, open_generator, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"decode", nullptr, decode, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"parseEpoch", nullptr, parse_epoch, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"setErrorClass", nullptr, set_error_class, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"sqlstate", nullptr, sqlstate, nullptr, nullptr, nullptr, napi_default, nullptr},
        {"NativeGenerator", nullptr, nullptr, nullptr, nullptr, cls, napi_default, nullptr},
        {"version", nullptr, nullptr, nullptr, nullptr, str(env, SF_IDS_VERSION), napi_default, nullptr},
    };
    napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns);
    return exports;
}

}  // namespace

NAPI_MODULE(snowflake_ids, init)
