/*
 * Storage faults for the fault suite (test/fault/run.sh, case 11), preloaded
 * into a test server with LD_PRELOAD.
 *
 * Only operations on the high-water mark's temporary file
 * (".../snowflake.mark.tmp") are touched; every other file works as usual.
 * What happens to them is read, at every such operation, from the file named
 * by SF_STORAGE_FAULT_FILE, so that a test changes it while the server runs:
 *
 *   none                nothing (also: a missing or unreadable file)
 *   fsync_delay_ms N    fsync() sleeps N ms, then works
 *   fsync_eio           fsync() fails with EIO
 *   write_enospc        write() fails with ENOSPC
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TARGET "/snowflake.mark.tmp"

static int is_target(int fd)
{
    char link[64], path[4096];
    ssize_t n;
    size_t tl = strlen(TARGET);

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof(path) - 1);
    if (n < (ssize_t) tl)
        return 0;
    path[n] = '\0';
    return strcmp(path + n - tl, TARGET) == 0;
}

/* The fault in force: its name into what (empty for none), and its number. */
static long read_fault(char *what, size_t len)
{
    const char *file = getenv("SF_STORAGE_FAULT_FILE");
    FILE *f;
    long arg = 0;
    char fmt[32];

    what[0] = '\0';
    if (file == NULL || (f = fopen(file, "r")) == NULL)
        return 0;
    snprintf(fmt, sizeof(fmt), "%%%zus %%ld", len - 1);
    if (fscanf(f, fmt, what, &arg) < 1)
        what[0] = '\0';
    fclose(f);
    return arg;
}

int fsync(int fd)
{
    static int (*real_fsync)(int);
    char what[32];
    long arg;

    if (real_fsync == NULL)
        real_fsync = (int (*)(int)) dlsym(RTLD_NEXT, "fsync");
    if (is_target(fd))
    {
        arg = read_fault(what, sizeof(what));
        if (strcmp(what, "fsync_eio") == 0)
        {
            errno = EIO;
            return -1;
        }
        if (strcmp(what, "fsync_delay_ms") == 0 && arg > 0)
        {
            struct timespec ts = {arg / 1000, (arg % 1000) * 1000000L};

            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
    }
    return real_fsync(fd);
}

ssize_t write(int fd, const void *buf, size_t count)
{
    static ssize_t (*real_write)(int, const void *, size_t);
    char what[32];

    if (real_write == NULL)
        real_write = (ssize_t (*)(int, const void *, size_t)) dlsym(RTLD_NEXT, "write");
    /* Regular files only: the mark is written with write(), the rest of the
     * server mostly with pwrite() and to sockets and pipes. */
    if (fd > 2 && is_target(fd))
    {
        read_fault(what, sizeof(what));
        if (strcmp(what, "write_enospc") == 0)
        {
            errno = ENOSPC;
            return -1;
        }
    }
    return real_write(fd, buf, count);
}
