// The high-water mark: persisted so that a restarted or crashed server never
// issues an id at or below one it may have issued before.
//
// - At server start the postmaster reads $PGDATA/snowflake.mark and starts
//   the generator as if every millisecond up to the mark were used up.
//   Missing: normal on first start. Unreadable or corrupt: ids are refused.
// - While ids are issued, the mark is kept ahead of the clock: a reservation
//   of kReserveWindowMs is written durably before any id in it is issued,
//   renewed by a background worker when half of it is left, so the id path
//   itself does no I/O in steady state. When no reservation covers the
//   clock (idle server, first id after start), the backend that needs one
//   writes it itself.
// - At a clean shutdown the postmaster writes the exact last millisecond, so
//   a clean restart does not wait. After a crash, ids resume once the clock
//   passes the last reservation: at most kReserveWindowMs after the crash
//   with a correct clock.
// - Writes are atomic and durable: temp file, fsync, rename, fsync of the
//   data directory. The file carries a CRC-32C.
// Nothing here raises an error while a lock is held: file operations report
// errno to the caller, which releases its locks before reporting.

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "snowflake.hpp"

extern "C" {
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "common/file_perm.h"
#include "storage/fd.h"

PGDLLEXPORT void snowflake_mark_worker_main(Datum arg);
}

namespace core = snowflake::core;

namespace sf {
namespace {

constexpr const char* kMarkTempFile = "snowflake.mark.tmp";

int write_mark_files(const uint8_t* buf, const char** step);

// Writes the mark durably. Returns 0 or an errno, *step naming the step.
int write_mark(const core::Mark& mark, const char** step) {
    uint8_t buf[core::kMarkSize];
    core::encode_mark(mark, buf);

    // Two short-lived descriptors outside fd.c's pool: account for them.
    *step = "reserve a file descriptor for";
    if (!AcquireExternalFD()) return EMFILE;
    const int err = write_mark_files(buf, step);
    ReleaseExternalFD();
    return err;
}

int write_mark_files(const uint8_t* buf, const char** step) {
    *step = "open";
    int fd = open(kMarkTempFile, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);
    if (fd < 0) return errno;
    *step = "write";
    ssize_t n = write(fd, buf, core::kMarkSize);
    if (n != static_cast<ssize_t>(core::kMarkSize)) {
        int err = n < 0 ? errno : ENOSPC;
        close(fd);
        return err;
    }
    *step = "fsync";
    if (pg_fsync(fd) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    *step = "close";
    if (close(fd) != 0) return errno;
    *step = "rename";
    if (rename(kMarkTempFile, kMarkFile) != 0) return errno;
    *step = "fsync of the data directory";
    int dirfd = open(".", O_RDONLY | PG_BINARY);
    if (dirfd < 0) return errno;
    if (pg_fsync(dirfd) != 0) {
        int err = errno;
        close(dirfd);
        return err;
    }
    close(dirfd);
    return 0;
}

// Records why the mark is unusable; err is the OS error for I/O failures.
void set_problem(SharedState* s, int err, const char* sentence) {
    snprintf(s->mark_problem, sizeof(s->mark_problem), "%s", sentence);
    s->mark_errno = err;
    s->mark_status = kMarkCorrupt;
}

void mark_shutdown(int code, Datum) {
    // Only a clean postmaster exit knows that no backend can still issue ids.
    if (code != 0 || shared == nullptr || shared->mark_status == kMarkCorrupt) return;
    core::Mark mark;
    mark.ms = core::packed_ms(pg_atomic_read_u64(&shared->position));
    mark.clean = true;
    if (mark.ms < 0) return;  // nothing issued and no mark: nothing to keep
    const char* step = "";
    if (int err = write_mark(mark, &step)) {
        errno = err;
        ereport(LOG, (errcode_for_file_access(),
                      errmsg("could not write snowflake high-water mark file \"%s\" at shutdown (%s): %m",
                             kMarkFile, step),
                      errdetail("At the next start, ids wait for the clock to pass the last reservation.")));
    }
}

// Renews the reservation while ids are being issued in it.
void renew_if_active() {
    if (worker_id < 0 || shared->mark_status == kMarkCorrupt) return;
    const int64_t now = now_ms(epoch_unix_us());
    const auto reserved = static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms));
    const int64_t last = core::packed_ms(pg_atomic_read_u64(&shared->position));
    if (now < 0 || now > core::kMaxMs) return;
    // Active: ids were issued since start, recently by the clock, inside the
    // current reservation. Judging by the clock keeps a clock that jumps
    // ahead for a moment, with no id issued at the jumped time, from moving
    // the durable mark there: after a crash, ids would be refused until then.
    // A backend that does issue at a jumped time writes its own reservation.
    const bool active = last > shared->slow.floor_ms && now - last <= kReserveWindowMs &&
                        last > reserved - kReserveWindowMs;
    if (!active || reserved - now >= kReserveWindowMs / 2) return;
    const char* step = "";
    if (int err = reserve_until(now + kReserveWindowMs / 2, now + kReserveWindowMs, &step)) {
        errno = err;
        ereport(LOG, (errcode_for_file_access(),
                      errmsg("could not write snowflake high-water mark file \"%s\" (%s): %m", kMarkFile,
                             step),
                      errdetail("Backends write the mark themselves when the reservation runs out.")));
    }
}

}  // namespace

void load_mark(SharedState* s) {
    s->mark_status = kMarkNone;
    s->mark_problem[0] = '\0';
    int64_t floor = -1;

    bool clean = false;
    char sentence[sizeof(s->mark_problem)];
    int fd = open(kMarkFile, O_RDONLY | PG_BINARY);
    if (fd < 0) {
        if (errno != ENOENT) {
            const int err = errno;
            snprintf(sentence, sizeof(sentence), "The file could not be opened at server start: %s.",
                     strerror(err));
            set_problem(s, err, sentence);
        }
    } else {
        uint8_t buf[core::kMarkSize + 1];
        ssize_t n = read(fd, buf, sizeof(buf));
        const int err = errno;
        close(fd);
        core::Mark mark;
        if (n < 0) {
            snprintf(sentence, sizeof(sentence), "The file could not be read at server start: %s.",
                     strerror(err));
            set_problem(s, err, sentence);
        } else {
            const core::MarkDecode d = core::decode_mark(buf, static_cast<size_t>(n), &mark);
            if (d != core::MarkDecode::Ok) {
                snprintf(sentence, sizeof(sentence), "At server start, %s.", core::mark_decode_text(d));
                set_problem(s, 0, sentence);
            } else {
                s->mark_status = kMarkOk;
                floor = mark.ms;
                clean = mark.clean;
            }
        }
    }
    if (s->mark_status == kMarkCorrupt)
        ereport(LOG, (errcode(ERRCODE_DATA_CORRUPTED),
                      errmsg("snowflake high-water mark file \"%s\" is unusable", kMarkFile),
                      errdetail("%s", s->mark_problem),
                      errhint("snowflake_nextval() refuses ids until it is repaired; see the "
                              "operations guide.")));

    pg_atomic_write_u64(&s->position, core::pack_position(floor, core::kMaxSequence));
    // After a crash the mark is the last reservation, up to a window ahead of
    // the clock: waiting it out is expected, not a clock problem.
    s->slow = core::state_after(floor, clean ? 0 : kReserveWindowMs);
    s->slow.reserved_until_ms = floor;
    pg_atomic_write_u64(&s->reserved_until_ms, static_cast<uint64>(floor));
}

void register_mark_shutdown() { on_shmem_exit(mark_shutdown, 0); }

int reserve_until(int64_t needed_ms, int64_t new_until_ms, const char** step) {
    int err = 0;
    if (new_until_ms > core::kMaxMs) new_until_ms = core::kMaxMs;
    LWLockAcquire(shared->mark_lock, LW_EXCLUSIVE);
    if (static_cast<int64_t>(pg_atomic_read_u64(&shared->reserved_until_ms)) < needed_ms) {
        core::Mark mark;
        mark.ms = new_until_ms;
        err = write_mark(mark, step);
        if (err == 0) {
            // On disk first, then published.
            LWLockAcquire(shared->lock, LW_EXCLUSIVE);
            core::extend_reservation(shared->slow, new_until_ms);
            pg_atomic_write_u64(&shared->reserved_until_ms,
                                static_cast<uint64>(shared->slow.reserved_until_ms));
            LWLockRelease(shared->lock);
        }
    }
    LWLockRelease(shared->mark_lock);
    return err;
}

void register_mark_worker() {
    BackgroundWorker worker;
    std::memset(&worker, 0, sizeof(worker));
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    worker.bgw_restart_time = 1;
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "snowflake");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "snowflake_mark_worker_main");
    snprintf(worker.bgw_name, BGW_MAXLEN, "snowflake high-water mark");
    snprintf(worker.bgw_type, BGW_MAXLEN, "snowflake high-water mark");
    RegisterBackgroundWorker(&worker);
}

}  // namespace sf

extern "C" void snowflake_mark_worker_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();

    while (!ShutdownRequestPending) {
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, sf::kRenewTickMs,
                        PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        sf::renew_if_active();
    }
    // Exit code 1: the postmaster starts the worker again after
    // bgw_restart_time, unless the server is shutting down. (Code 0 would
    // unregister it for good, and backends would write every reservation.)
    proc_exit(1);
}
