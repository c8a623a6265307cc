// Calling from C++ into PostgreSQL code that may raise an error (ereport):
// the one place where the glue catches such an error instead of letting it
// propagate, and turns it into plain data (CaughtError).
//
// The rule it serves (CONTRIBUTING.md, "The C++/PostgreSQL boundary"): no
// ereport(ERROR) jumps over a live C++ object with a destructor. The
// function called must keep only plain data in its frames; the wrapper
// itself keeps none, and the callable it is given must be trivially
// destructible (a lambda capturing by reference is), which is checked.
// Include it after the C++ standard headers, like every glue header.
#pragma once

#include "pg_headers.hpp"  // with <type_traits>

namespace snowflake::pg {

// An error caught by call_catching_error(), copied out of PostgreSQL's
// error state: the SQLSTATE and the texts, each possibly truncated.
struct CaughtError {
    char code[6];
    char message[512];
    char detail[512];
    char hint[512];
};

// Copies the current error into *out and clears PostgreSQL's error state;
// in a background worker it also releases what the raised error may have
// left held (a condition-variable sleep, LWLocks). Called in PG_CATCH with
// the memory context the try began in.
//
// For code with nothing of its own at stake: the postmaster, a background
// worker holding no lock, a backend about to report a FATAL. Not for a
// caller that holds an LWLock, is in a critical section or holds off
// interrupts, nor for one in a transaction that must go on as if nothing
// happened (there is no subtransaction: catching does not roll back).
void capture_error(MemoryContext cxt, CaughtError* out);

// Runs fn(): true, or false with the error it raised in *err (and
// PostgreSQL's error state cleared). fn keeps only plain data in scope.
template <typename F>
bool call_catching_error(F&& fn, CaughtError* err) {
    static_assert(std::is_trivially_destructible_v<std::remove_reference_t<F>>,
                  "an error may jump over the callable: it must have no destructor");
    volatile bool ok = true;
    const MemoryContext cxt = CurrentMemoryContext;
    PG_TRY();
    {
        fn();
    }
    PG_CATCH();
    {
        capture_error(cxt, err);
        ok = false;
    }
    PG_END_TRY();
    return ok;
}

}  // namespace snowflake::pg
