// The high-water mark file: persisted so that a restarted or crashed server
// never issues an id at or below one it may have issued before.
//
// - At server start the postmaster reads $PGDATA/snowflake.mark and starts
//   the generator as if every millisecond up to the mark were used up.
//   Missing: a first start, or a lost file if the marker snowflake.walmark
//   is there (wal.cpp's init_wal_mark, core::judge_missing_mark). Unreadable
//   or corrupt: ids are refused.
// - While the server runs, the mark worker (mark_worker.cpp) keeps a reservation
//   ahead of the clock and is the only process that writes the file; ids are
//   issued only inside the reservation on disk (and logged in the WAL,
//   wal.cpp). During recovery (a standby) the startup process writes it
//   instead, as it replays the primary's reservations; the mark worker does
//   not run then.
// - At a clean shutdown the postmaster writes the exact last millisecond, so
//   a clean restart does not wait. After a crash, ids wait until the clock
//   passes the last reservation: at most its lead (recorded in the file; up
//   to 1.5 windows, core::reservation_lead) after the crash with a correct
//   clock.
// - Writes are atomic and durable: temp file, fsync, rename, fsync of the
//   data directory. The file carries a CRC-32C.
// - The file records the layout of the ids it bounds (snowflake.layout): a
//   mark of another layout stops the server at start (layout_glue.cpp),
//   unless snowflake.accept_layout_change is on.
// Nothing here raises an error: file operations report errno to the caller.

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "../core/generator.hpp"
#include "../core/position.hpp"
#include "../core/lease.hpp"
#include "../core/mark.hpp"
#include "../core/reservation.hpp"
#include "../core/stats_snapshot.hpp"
#include "guc.hpp"
#include "layout_glue.hpp"
#include "mark_file.hpp"
#include "reservation_limit.hpp"
#include "shared_state.hpp"
#include "shmem.hpp"
#include "wal.hpp"

extern "C" {
#include "common/file_perm.h"
#include "storage/fd.h"
#include "storage/ipc.h"
}

namespace core = snowflake::core;

namespace snowflake::pg {
namespace {

constexpr const char* kMarkTempFile = "snowflake.mark.tmp";

// Writes the encoded mark: temp file, fsync, rename, fsync of the directory.
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

// on_shmem_exit of the postmaster: the exact mark at a clean stop.
void mark_shutdown(int code, Datum) {
    // Only a clean postmaster exit knows that no backend can still issue ids.
    if (code != 0 || shared == nullptr || shared->mark_status == kMarkCorrupt) return;
    core::Mark mark;
    // The highest millisecond of either generator (snowflake.http_worker_id):
    // the mark bounds every id of this node, whatever its worker id.
    mark.ms = issued_ms();
    // On (or after) a backup worker id the position may be below the own
    // id's ids (shared_state.hpp, own_high_ms).
    if (shared->lease.own_high_ms > mark.ms) mark.ms = shared->lease.own_high_ms;
    if (mark.ms < 0) return;  // nothing issued and no mark: nothing to keep
    if (mark.ms == shared->loaded.ms) {
        // Nothing issued since start: the mark loaded at start is still what
        // is known, of the same kind (after a crash, a reservation whose ids
        // the next start must wait out, not an exact last millisecond).
        mark = shared->loaded;
    } else {
        mark.clean = true;
    }
    const char* step = "";
    if (int err = write_mark(mark, &step)) {
        errno = err;
        ereport(LOG, (errcode_for_file_access(),
                      errmsg("could not write snowflake high-water mark file \"%s\" at shutdown (%s): %m",
                             kMarkFile, step),
                      errdetail("At the next start, ids wait for the clock to pass the last reservation.")));
    }
}

}  // namespace

// Writes the mark durably (mark_file.hpp), recording snowflake.layout.
int write_mark(const core::Mark& given, const char** step) {
    core::Mark mark = given;
    mark.layout = core::mark_layout_code(node_geometry());
    uint8_t buf[core::kMarkSize];
    core::encode_mark(mark, buf);

    // Two short-lived descriptors outside fd.c's pool: account for them.
    *step = "reserve a file descriptor for";
    if (!AcquireExternalFD()) return EMFILE;
    const int err = write_mark_files(buf, step);
    ReleaseExternalFD();
    return err;
}

// Reads the mark and starts the generator above it (mark_file.hpp).
void load_mark(SharedState* s) {
    s->mark_status = kMarkNone;
    s->mark_problem[0] = '\0';
    s->loaded = core::Mark{};
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
                note_mark_layout(mark);  // reported after the lock (shmem.cpp)
                s->mark_status = kMarkOk;
                s->loaded = mark;
            }
        }
    }
    if (s->mark_status == kMarkCorrupt)
        ereport(LOG, (errcode(ERRCODE_DATA_CORRUPTED),
                      errmsg("snowflake high-water mark file \"%s\" is unusable", kMarkFile),
                      errdetail("%s", s->mark_problem),
                      errhint("snowflake_nextval() refuses ids until it is repaired; see the "
                              "operations guide.")));

    // After a crash the mark is the last reservation, up to its recorded
    // lead ahead of the clock: waiting it out is expected, not a clock problem.
    const core::Mark& m = s->loaded;
    const core::GeneratorState start =
        core::state_after(m.ms, m.clean ? 0 : std::max<int64_t>(m.window_ms, core::kMinWindowMs));
    // Every word in use (both generators' with snowflake.http_worker_id)
    // raised to "the mark used up", its worker id and a leased node's fence
    // kept (core/position.hpp); the postmaster is alone here (s is shared),
    // and sets the floor itself below, whether a word moved or not.
    (void)raise_floor_locked(start.last_ms, start.floor_grace_ms, kFloorMarkFile);
    s->floor_ms = start.floor_ms;
    s->floor_grace_ms = start.floor_grace_ms;
    pg_atomic_write_u64(&s->local_reserved_ms, static_cast<uint64>(m.ms));
    publish_reservation_locked();  // the postmaster, alone: no lock needed yet
    init_wal_mark(s);
}

// Arranges for mark_shutdown() at the postmaster's exit.
void register_mark_shutdown() { on_shmem_exit(mark_shutdown, 0); }

}  // namespace snowflake::pg
