// native.cpp: the CPython binding of libsnowflake_ids (sdk/c/include/snowflake_ids.h),
// the module snowflake_ids._native. snowflake_ids/__init__.py holds the Python API
// around it: the error classes (registered here by _set_errors), decode's
// result and epochs, closing at exit.
//
// The GIL is released while the library may wait long (sf_wait_ready, sf_close);
// the id path (next_id, next_ids) keeps it: one library call, which waits at
// most for the clock tolerance or the next millisecond. Because every call
// that uses self->gen holds the GIL, close() can take the pointer (clearing
// self->gen under the GIL) before it releases the GIL for sf_close, and no
// other thread can be inside the library with it then.

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "snowflake_ids.h"

#include <chrono>
#include <cstdio>
#include <cstring>

namespace {

// code -> the error class (snowflake_ids.Error's subclasses), set by
// __init__.py through _set_errors; index = sf_code.
constexpr int kCodes = 12;
PyObject* g_errors[kCodes] = {};

PyObject* raise(sf_code code, const char* sqlstate, const char* message, const char* detail, const char* hint) {
    PyObject* cls = (code > 0 && code < kCodes && g_errors[code] != nullptr) ? g_errors[code] : PyExc_RuntimeError;
    PyObject* exc = PyObject_CallFunction(cls, "ssss", message, sqlstate, detail, hint);
    if (exc != nullptr) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return nullptr;
}

// The library's error for code, from this thread's sf_last_error() (call it
// on the thread that failed, before any other library call).
struct ErrorCopy {
    sf_code code = SF_OK;
    char sqlstate[6] = "00000";
    char message[512] = "";
    char detail[512] = "";
    char hint[256] = "";
};

ErrorCopy copy_error(sf_code code, const char* fallback = nullptr) {
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
        std::snprintf(c.message, sizeof c.message, "%s",
                      fallback && fallback[0] ? fallback : "snowflake_ids error");
    }
    c.sqlstate[5] = '\0';
    return c;
}

PyObject* raise_copy(const ErrorCopy& c) { return raise(c.code, c.sqlstate, c.message, c.detail, c.hint); }

PyObject* raise_last(sf_code code) { return raise_copy(copy_error(code)); }

PyObject* raise_closed() {
    return raise(SF_ERR_CLOSED, sf_sqlstate(SF_ERR_CLOSED), "the generator is closed", "",
                 "Make a new Generator.");
}

PyObject* raise_config(const char* message) {
    return raise(SF_ERR_INVALID, sf_sqlstate(SF_ERR_INVALID), message, "", "");
}

struct GeneratorObject {
    PyObject_HEAD sf_generator* gen;
    int busy;              // wait_ready calls using gen without the GIL
    sf_generator* orphan;  // closed while busy: the last waiter closes it
    PyObject* weakrefs;
};

// A keyword argument that is None or absent: nullptr.
const char* opt_str(PyObject* v, const char* name, bool* ok) {
    if (v == nullptr || v == Py_None) return nullptr;
    if (!PyUnicode_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str", name);
        *ok = false;
        return nullptr;
    }
    const char* s = PyUnicode_AsUTF8(v);
    if (s == nullptr) *ok = false;
    return s;
}

bool opt_int(PyObject* v, const char* name, int32_t* out) {
    if (v == nullptr || v == Py_None) return true;
    if (!PyLong_Check(v) || PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", name);
        return false;
    }
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) return false;
    if (x < INT32_MIN || x > INT32_MAX) {
        PyErr_Clear();
        raise_config("a setting is out of range");
        return false;
    }
    *out = static_cast<int32_t>(x);
    return true;
}

// Generator(etcd_endpoints=, zookeeper_hosts=, worker_id=, worker_id_min=,
// worker_id_max=, lease_ttl_ms=, lease_prefix=, epoch=, clock_tolerance_ms=,
// clock_backwards=, mark_file=, timeout_ms=, layout=): the normalized form that
// _generator.py's Generator passes (lists joined, seconds in ms, ranges split).
int gen_init(GeneratorObject* self, PyObject* args, PyObject* kwargs) {
    static const char* kw[] = {"etcd_endpoints",
                               "zookeeper_hosts",
                               "worker_id",
                               "worker_id_min",
                               "worker_id_max",
                               "lease_ttl_ms",
                               "lease_prefix",
                               "epoch",
                               "clock_tolerance_ms",
                               "clock_backwards",
                               "mark_file",
                               "timeout_ms",
                               "layout",
                               nullptr};
    PyObject *etcd = nullptr, *zk = nullptr, *wid = nullptr, *wmin = nullptr, *wmax = nullptr, *ttl = nullptr,
             *prefix = nullptr, *epoch = nullptr, *tol = nullptr, *back = nullptr, *mark = nullptr,
             *timeout = nullptr, *layout = nullptr;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOOOOOOOOOOO", const_cast<char**>(kw), &etcd, &zk, &wid,
                                     &wmin, &wmax, &ttl, &prefix, &epoch, &tol, &back, &mark, &timeout, &layout))
        return -1;
    if (self->gen != nullptr) {
        raise_config("the generator is open already");
        return -1;
    }
    sf_config cfg;
    sf_config_init(&cfg);
    bool ok = true;
    cfg.etcd_endpoints = opt_str(etcd, "etcd_endpoints", &ok);
    if (ok) cfg.zookeeper_hosts = opt_str(zk, "zookeeper_hosts", &ok);
    if (ok) cfg.lease_prefix = opt_str(prefix, "lease_prefix", &ok);
    if (ok) cfg.epoch = opt_str(epoch, "epoch", &ok);
    if (ok) cfg.mark_file = opt_str(mark, "mark_file", &ok);
    if (ok) cfg.layout = opt_str(layout, "layout", &ok);
    int32_t back_v = static_cast<int32_t>(cfg.clock_backwards), timeout_ms = 30000;
    ok = ok && opt_int(wid, "worker_id", &cfg.worker_id) && opt_int(wmin, "worker_id_min", &cfg.worker_id_min) &&
         opt_int(wmax, "worker_id_max", &cfg.worker_id_max) && opt_int(ttl, "lease_ttl_ms", &cfg.lease_ttl_ms) &&
         opt_int(tol, "clock_tolerance_ms", &cfg.clock_tolerance_ms) &&
         opt_int(back, "clock_backwards", &back_v) && opt_int(timeout, "timeout_ms", &timeout_ms);
    if (!ok) return -1;
    cfg.clock_backwards = static_cast<sf_clock_backwards>(back_v);
    cfg.runtime = "python";

    sf_generator* gen = nullptr;
    sf_code rc;
    char msg[512] = "";
    ErrorCopy err;
    // The strings cfg points into belong to the keyword arguments, which the
    // call holds: they outlive the wait without the GIL.
    Py_BEGIN_ALLOW_THREADS rc = sf_open(&cfg, &gen, msg, sizeof msg);
    if (rc != SF_OK) {
        err = copy_error(rc, msg);
        gen = nullptr;
    } else {
        rc = sf_wait_ready(gen, timeout_ms);
        if (rc != SF_OK) {
            err = copy_error(rc);
            sf_close(gen);
            gen = nullptr;
        }
    }
    Py_END_ALLOW_THREADS if (rc != SF_OK) {
        raise_copy(err);
        return -1;
    }
    self->gen = gen;
    return 0;
}

// Takes the generator out of self (under the GIL) and closes it without the GIL.
PyObject* gen_close(GeneratorObject* self, PyObject*) {
    sf_generator* gen = self->gen;
    self->gen = nullptr;
    if (gen == nullptr) Py_RETURN_NONE;
    if (self->busy > 0) {  // a wait_ready is inside the library with it
        self->orphan = gen;
        Py_RETURN_NONE;
    }
    sf_code rc;
    ErrorCopy err;
    Py_BEGIN_ALLOW_THREADS rc = sf_close(gen);
    if (rc != SF_OK) err = copy_error(rc);
    Py_END_ALLOW_THREADS if (rc != SF_OK) return raise_copy(err);
    Py_RETURN_NONE;
}

void gen_dealloc(GeneratorObject* self) {
    if (self->weakrefs != nullptr) PyObject_ClearWeakRefs(reinterpret_cast<PyObject*>(self));
    if (self->gen != nullptr) {
        sf_generator* gen = self->gen;
        self->gen = nullptr;
        Py_BEGIN_ALLOW_THREADS sf_close(gen);
        Py_END_ALLOW_THREADS
    }
    Py_TYPE(self)->tp_free(reinterpret_cast<PyObject*>(self));
}

// wait_ready(timeout_ms=30000): waits without the GIL, in slices of at most
// 100 ms; self->busy tells close() that a wait is using the generator, and
// close() then leaves it in self->orphan for the waiter to close when its
// slice ends (so no thread frees it while another is inside the library).
PyObject* gen_wait_ready(GeneratorObject* self, PyObject* args) {
    int timeout_ms = 30000;
    if (!PyArg_ParseTuple(args, "|i", &timeout_ms)) return nullptr;
    if (self->gen == nullptr) return raise_closed();
    sf_generator* gen = self->gen;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        int32_t slice = left <= 0 ? 0 : static_cast<int32_t>(left);
        bool last = slice <= 100;
        if (!last) slice = 100;
        sf_code rc;
        ErrorCopy err;
        self->busy++;
        Py_BEGIN_ALLOW_THREADS rc = sf_wait_ready(gen, slice);
        if (rc != SF_OK) err = copy_error(rc);
        Py_END_ALLOW_THREADS self->busy--;
        if (self->orphan != nullptr && self->busy == 0) {  // closed while we waited
            sf_generator* orphan = self->orphan;
            self->orphan = nullptr;
            Py_BEGIN_ALLOW_THREADS sf_close(orphan);
            Py_END_ALLOW_THREADS return raise_closed();
        }
        if (self->gen == nullptr) return raise_closed();
        if (rc == SF_OK) Py_RETURN_NONE;
        if (rc != SF_ERR_NOT_READY || last) return raise_copy(err);
        if (PyErr_CheckSignals() < 0) return nullptr;  // Ctrl-C ends the wait
    }
}

PyObject* gen_next_id(GeneratorObject* self, PyObject*) {
    if (self->gen == nullptr) return raise_closed();
    int64_t id;
    sf_code rc = sf_next_id(self->gen, &id);
    if (rc != SF_OK) return raise_last(rc);
    return PyLong_FromLongLong(id);
}

// next_ids(n): a list of n ints. The ids go through a buffer on the stack,
// 1024 at a time (each batch ascending and above the previous one).
PyObject* gen_next_ids(GeneratorObject* self, PyObject* arg) {
    if (self->gen == nullptr) return raise_closed();
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return nullptr;
    if (n < 1 || n > 1000000) return raise_config("next_ids(n) takes n from 1 to 1000000");
    PyObject* list = PyList_New(n);
    if (list == nullptr) return nullptr;
    int64_t buf[1024];
    long done = 0;
    while (done < n) {
        int32_t want = static_cast<int32_t>(n - done < 1024 ? n - done : 1024), got = 0;
        sf_code rc = sf_next_ids(self->gen, buf, want, &got);
        if (rc != SF_OK) {
            Py_DECREF(list);  // the list's empty slots are NULL: list_dealloc skips them
            return raise_last(rc);
        }
        for (int32_t i = 0; i < got; i++) {
            PyObject* v = PyLong_FromLongLong(buf[i]);
            if (v == nullptr) {
                Py_DECREF(list);
                return nullptr;
            }
            PyList_SET_ITEM(list, done + i, v);
        }
        done += got;
    }
    return list;
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

// -1 (none) as None.
PyObject* int_or_none(int64_t v) {
    if (v < 0) Py_RETURN_NONE;
    return PyLong_FromLongLong(v);
}

PyObject* gen_stats(GeneratorObject* self, PyObject*) {
    if (self->gen == nullptr) return raise_closed();
    sf_stats s;
    sf_code rc = sf_status(self->gen, &s);
    if (rc != SF_OK) return raise_last(rc);
    s.last_error[sizeof s.last_error - 1] = '\0';
    PyObject* last = s.last_error[0] ? PyUnicode_FromString(s.last_error) : (Py_INCREF(Py_None), Py_None);
    s.layout[sizeof s.layout - 1] = '\0';
    return Py_BuildValue("{s:s,s:N,s:N,s:s,s:L,s:N,s:N,s:L,s:L,s:L,s:L,s:L,s:i,s:N,s:s}", "state",
                         state_name(s.state), "worker_id", int_or_none(s.worker_id), "backup_worker_id",
                         int_or_none(s.backup_worker_id), "coordinator", s.coordinator ? s.coordinator : "",
                         "ids_issued", static_cast<long long>(s.ids_issued), "lease_ms_left",
                         int_or_none(s.lease_ms_left), "reserved_until_unix_ms",
                         int_or_none(s.reserved_until_unix_ms), "clock_backwards_events",
                         static_cast<long long>(s.clock_backwards_events), "clock_backwards_errors",
                         static_cast<long long>(s.clock_backwards_errors), "overflow_waits",
                         static_cast<long long>(s.overflow_waits), "lease_acquisitions",
                         static_cast<long long>(s.lease_acquisitions), "lease_failures",
                         static_cast<long long>(s.lease_failures), "pid", static_cast<int>(s.pid), "last_error",
                         last, "layout", s.layout);
}

PyObject* gen_closed(GeneratorObject* self, void*) { return PyBool_FromLong(self->gen == nullptr); }

PyMethodDef gen_methods[] = {
    {"next_id", reinterpret_cast<PyCFunction>(gen_next_id), METH_NOARGS, "next_id() -> int: one id."},
    {"next_ids", reinterpret_cast<PyCFunction>(gen_next_ids), METH_O,
     "next_ids(n) -> list of n ids (1 <= n <= 1000000), ascending."},
    {"stats", reinterpret_cast<PyCFunction>(gen_stats), METH_NOARGS, "stats() -> dict: the generator's state."},
    {"close", reinterpret_cast<PyCFunction>(gen_close), METH_NOARGS,
     "close(): ends the lease (or writes the mark file) and frees the generator; idempotent."},
    {"wait_ready", reinterpret_cast<PyCFunction>(gen_wait_ready), METH_VARARGS,
     "wait_ready(timeout_ms=30000): waits until a worker id is held (after a fork)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef gen_getset[] = {{"closed", reinterpret_cast<getter>(gen_closed), nullptr, "True once closed.",
                             nullptr},
                            {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject GeneratorType = {PyVarObject_HEAD_INIT(nullptr, 0)};

// _decode(id, epoch_unix_ms, layout=None) -> (unix_ms, ms_since_epoch, worker_id, sequence)
// (layout None: twitter, sf_decode_layout's NULL)
PyObject* mod_decode(PyObject*, PyObject* args) {
    long long id, epoch;
    const char* layout = nullptr;
    if (!PyArg_ParseTuple(args, "LL|z", &id, &epoch, &layout)) return nullptr;
    sf_decoded d;
    sf_code rc = sf_decode_layout(id, epoch, layout, &d);
    if (rc != SF_OK) return raise_last(rc);
    return Py_BuildValue("(LLii)", static_cast<long long>(d.unix_ms), static_cast<long long>(d.ms_since_epoch),
                         d.worker_id, d.sequence);
}

// _parse_epoch(text) -> Unix milliseconds
PyObject* mod_parse_epoch(PyObject*, PyObject* args) {
    const char* text;
    if (!PyArg_ParseTuple(args, "s", &text)) return nullptr;
    int64_t ms;
    sf_code rc = sf_parse_epoch(text, &ms);
    if (rc != SF_OK) return raise_last(rc);
    return PyLong_FromLongLong(ms);
}

// _set_errors({code: class}): the classes errors are raised as.
PyObject* mod_set_errors(PyObject*, PyObject* mapping) {
    if (!PyDict_Check(mapping)) {
        PyErr_SetString(PyExc_TypeError, "a dict");
        return nullptr;
    }
    for (int code = 1; code < kCodes; code++) {
        PyObject* key = PyLong_FromLong(code);
        if (key == nullptr) return nullptr;
        PyObject* cls = PyDict_GetItemWithError(mapping, key);  // borrowed
        Py_DECREF(key);
        if (cls == nullptr) {
            if (PyErr_Occurred()) return nullptr;
            continue;
        }
        Py_INCREF(cls);
        Py_XSETREF(g_errors[code], cls);
    }
    Py_RETURN_NONE;
}

PyObject* mod_sqlstate(PyObject*, PyObject* arg) {
    long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred()) return nullptr;
    return PyUnicode_FromString(sf_sqlstate(static_cast<sf_code>(code)));
}

PyMethodDef mod_methods[] = {{"_decode", mod_decode, METH_VARARGS, nullptr},
                             {"_parse_epoch", mod_parse_epoch, METH_VARARGS, nullptr},
                             {"_set_errors", mod_set_errors, METH_O, nullptr},
                             {"_sqlstate", mod_sqlstate, METH_O, nullptr},
                             {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "snowflake_ids._native", "The C binding of libsnowflake_ids.", -1,
                      mod_methods};

}  // namespace

PyMODINIT_FUNC PyInit__native(void) {
    GeneratorType.tp_name = "snowflake_ids._native.Generator";
    GeneratorType.tp_basicsize = sizeof(GeneratorObject);
    GeneratorType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
    GeneratorType.tp_doc = "The generator of libsnowflake_ids (use snowflake_ids.Generator).";
    GeneratorType.tp_new = PyType_GenericNew;
    GeneratorType.tp_init = reinterpret_cast<initproc>(gen_init);
    GeneratorType.tp_dealloc = reinterpret_cast<destructor>(gen_dealloc);
    GeneratorType.tp_methods = gen_methods;
    GeneratorType.tp_getset = gen_getset;
    GeneratorType.tp_weaklistoffset = offsetof(GeneratorObject, weakrefs);
    if (PyType_Ready(&GeneratorType) < 0) return nullptr;
    PyObject* m = PyModule_Create(&module);
    if (m == nullptr) return nullptr;
    Py_INCREF(&GeneratorType);
    if (PyModule_AddObject(m, "Generator", reinterpret_cast<PyObject*>(&GeneratorType)) < 0) {
        Py_DECREF(&GeneratorType);
        Py_DECREF(m);
        return nullptr;
    }
    PyModule_AddStringConstant(m, "version", SF_IDS_VERSION);
    return m;
}
