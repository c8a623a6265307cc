/*
 * Preloaded into every server of the nemesis suite (test/nemesis/run.sh):
 * stops one backend in the middle of an id call, for a given time, on
 * request.
 *
 * The id path reads the generator's position, then the wall clock
 * (CLOCK_REALTIME), then swaps the position (src/pg/nextval.cpp). A backend
 * stalled at that clock read has read the state its id will be composed
 * from, worker id included: if the node's lease changes hands during the
 * stall, only the fencing of the id path (the swap must fail) keeps the
 * backend from issuing an id under the old worker id.
 *
 * Requests come through the file $SF_STALL_FILE (64 bytes, text, written in
 * place by the suite: never truncated, since it is mapped):
 *     "<pid> <milliseconds> <generation>"
 * The backend <pid> stalls once per generation, at its next CLOCK_REALTIME
 * read made from snowflake.so's code (the return address tells), sleeping
 * <milliseconds> of real time (a raw system call: libfaketime, preloaded
 * after this, does not see it), then reads the clock and goes on. It writes
 * a line to the server log before and after. Every other process, and every
 * other clock read, is left alone; an unarmed file ("0 0 0") costs one load
 * per clock read.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

#define STALL_FILE_SIZE 64

static const volatile char *stall_map;
static int stall_map_tried;
static long stall_done_generation = -1;

static const volatile char *stall_request(void)
{
    if (!stall_map_tried)
    {
        const char *path = getenv("SF_STALL_FILE");

        stall_map_tried = 1;
        if (path != NULL)
        {
            int fd = open(path, O_RDONLY);

            if (fd >= 0)
            {
                void *p = mmap(NULL, STALL_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);

                if (p != MAP_FAILED)
                    stall_map = p;
                close(fd);
            }
        }
    }
    return stall_map;
}

/* True if the code at ADDR belongs to the snowflake extension. */
static int from_snowflake(void *addr)
{
    Dl_info info;

    if (dladdr(addr, &info) == 0 || info.dli_fname == NULL)
        return 0;
    return strstr(info.dli_fname, "snowflake") != NULL;
}

static void stall_if_asked(void *caller)
{
    const volatile char *m = stall_request();
    char buf[STALL_FILE_SIZE + 1];
    long pid = 0, ms = 0, generation = 0;
    struct timespec ts;
    int i;

    if (m == NULL || m[0] == '0' || m[0] == '\0')
        return;
    for (i = 0; i < STALL_FILE_SIZE; i++)
        buf[i] = m[i];
    buf[STALL_FILE_SIZE] = '\0';
    if (sscanf(buf, "%ld %ld %ld", &pid, &ms, &generation) != 3)
        return;
    if (pid != (long) getpid() || generation == stall_done_generation || ms <= 0)
        return;
    if (!from_snowflake(caller))
        return;
    stall_done_generation = generation;
    fprintf(stderr, "nemesis stall shim: pid %ld stalls for %ld ms in an id call (generation %ld)\n",
            pid, ms, generation);
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, &ts) != 0 && errno == EINTR)
        ;
    fprintf(stderr, "nemesis stall shim: pid %ld resumes (generation %ld)\n", pid, generation);
}

int clock_gettime(clockid_t clk, struct timespec *tp)
{
    static clock_gettime_fn next;

    if (clk == CLOCK_REALTIME)
        stall_if_asked(__builtin_return_address(0));
    if (next == NULL)
        next = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
    return next(clk, tp);
}
