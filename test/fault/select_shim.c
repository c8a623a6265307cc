/*
 * Preloaded before libfaketime by the suites (test/lib/faketime.sh).
 *
 * libfaketime wraps select() and sets a thread-local "do not fake" flag for
 * the duration of the real call. PostgreSQL 15's postmaster waits in select()
 * with signals unblocked and starts background workers (and other auxiliary
 * processes) from its signal handlers, that is, inside that window: the child
 * inherits the flag and reads the real clock forever. The snowflake mark
 * worker would then not see the moved clock while backends do.
 *
 * This select() calls the C library's directly, so libfaketime's wrapper is
 * never entered; with plain offsets (no speed-up) it has nothing to adjust.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/select.h>

typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);

int select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
           struct timeval *timeout)
{
    static select_fn real_select;

    if (real_select == NULL)
    {
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

        if (libc != NULL)
            real_select = (select_fn) dlsym(libc, "select");
        if (real_select == NULL)
            real_select = (select_fn) dlsym(RTLD_NEXT, "select");
    }
    return real_select(nfds, readfds, writefds, exceptfds, timeout);
}
