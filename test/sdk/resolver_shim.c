/* An LD_PRELOAD shim of getaddrinfo() for the fork gate's test
 * (test/sdk/fork_gate_test.cpp, built and preloaded by test/sdk_c.sh).
 *
 * Like glibc's resolver, every call takes a lock of the process's (here the
 * shim's own mutex) for its duration: a fork() while a thread is inside
 * leaves the child's copy locked for good, and the child's first lookup
 * hangs, as glibc's __check_pf did. With SF_RESOLVER_SHIM_DIR set:
 *
 *   DIR/hold exists   the next call takes the lock, creates DIR/entered and
 *                     waits inside until DIR/hold is removed, or at most the
 *                     milliseconds written in DIR/hold (5000 if none), then
 *                     resolves and lets the lock go
 *
 * The name "forkgate.invalid" resolves as 127.0.0.1 (libcurl resolves no
 * numeric address and not "localhost" through getaddrinfo). Without
 * SF_RESOLVER_SHIM_DIR every call only takes the lock and resolves. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Looked up by the test: the shim is preloaded. */
int sf_resolver_shim_loaded = 1;

typedef int (*gai_fn)(const char*, const char*, const struct addrinfo*, struct addrinfo**);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int exists(const char* path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static long hold_limit_ms(const char* path) {
    long ms = 5000;
    FILE* f = fopen(path, "r");
    if (f != NULL) {
        long v = 0;
        if (fscanf(f, "%ld", &v) == 1 && v > 0) ms = v;
        fclose(f);
    }
    return ms;
}

int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints, struct addrinfo** res) {
    static gai_fn real = NULL;
    if (real == NULL) real = (gai_fn)dlsym(RTLD_NEXT, "getaddrinfo");
    if (node != NULL && strcmp(node, "forkgate.invalid") == 0) node = "127.0.0.1";
    const char* dir = getenv("SF_RESOLVER_SHIM_DIR");
    pthread_mutex_lock(&lock);
    if (dir != NULL) {
        char hold[4096], entered[4096];
        snprintf(hold, sizeof hold, "%s/hold", dir);
        snprintf(entered, sizeof entered, "%s/entered", dir);
        if (exists(hold)) {
            const long limit = hold_limit_ms(hold);
            FILE* f = fopen(entered, "w");
            if (f != NULL) fclose(f);
            const struct timespec tick = {0, 2 * 1000 * 1000};
            for (long waited = 0; exists(hold) && waited < limit; waited += 2) nanosleep(&tick, NULL);
        }
    }
    const int rc = real(node, service, hints, res);
    pthread_mutex_unlock(&lock);
    return rc;
}
