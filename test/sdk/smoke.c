/* test/sdk/smoke.c: the C library from C, linked with the shared library
 * (build/sdk/libsnowflake_ids.so.1) as an application links it: the header
 * compiles as C11, a static worker id issues increasing ids that decode to
 * it, a child of fork() gets SF003 (and never an id), the parent goes on,
 * and sf_close leaves the exact mark. test/sdk_c.sh runs it; it prints one
 * line per check and exits 1 if any failed.
 *
 *   build/sdk_c_smoke DIR     (DIR: a writable directory for the mark file) */
#define _GNU_SOURCE
#include <snowflake_ids.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed = 0;

static void check(int ok, const char* what) {
    printf("%s - %s\n", ok ? "ok" : "not ok", what);
    if (!ok) {
        const sf_error* e = sf_last_error();
        printf("#   last error: %s %s / %s / %s\n", e->sqlstate, e->message, e->detail, e->hint);
        failed = 1;
    }
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char mark[4096];
    snprintf(mark, sizeof mark, "%s/smoke.mark", argv[1]);
    sf_config cfg;
    sf_config_init(&cfg);
    cfg.worker_id = 42;
    cfg.mark_file = mark;
    cfg.runtime = "c";
    sf_generator* gen = NULL;
    char err[512];
    check(sf_open(&cfg, &gen, err, sizeof err) == SF_OK, "a static worker id with a mark file opens");
    if (gen == NULL) return 1;
    check(sf_wait_ready(gen, 5000) == SF_OK, "it is ready");
    int64_t prev = -1, id = 0;
    int increasing = 1;
    for (int i = 0; i < 100000; i++) {
        if (sf_next_id(gen, &id) != SF_OK || id <= prev) increasing = 0;
        prev = id;
    }
    check(increasing, "100000 ids increase");
    sf_decoded d;
    check(sf_decode(id, 1735689600000, &d) == SF_OK && d.worker_id == 42, "they decode to worker id 42");

    int fds[2];
    if (pipe(fds) != 0) return 1;
    const pid_t pid = fork();
    if (pid == 0) {
        int64_t child_id = -1;
        const sf_code c = sf_next_id(gen, &child_id);
        char answer[16];
        snprintf(answer, sizeof answer, "%s", c == SF_ERR_NO_LEASE ? sf_last_error()->sqlstate : "issued");
        if (write(fds[1], answer, sizeof answer) != (ssize_t)sizeof answer) _exit(1);
        sf_close(gen);
        _exit(0);
    }
    close(fds[1]);
    char answer[16] = "";
    const ssize_t n = read(fds[0], answer, sizeof answer);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    check(n == (ssize_t)sizeof answer && strcmp(answer, "SF003") == 0, "a fork child gets SF003, not an id");
    int64_t after = 0;
    check(sf_next_id(gen, &after) == SF_OK && after > id, "the parent goes on after the child's exit");
    check(sf_close(gen) == SF_OK, "sf_close succeeds");

    FILE* f = fopen(mark, "rb");
    unsigned char buf[32];
    const size_t got = f != NULL ? fread(buf, 1, sizeof buf, f) : 0;
    if (f != NULL) fclose(f);
    int64_t ms = 0;
    for (int i = 7; i >= 0; i--) ms = (ms << 8) | buf[8 + i];
    check(got == 32 && (buf[16] & 1) && ms == (after >> 22), "the mark file holds the exact last millisecond");
    return failed;
}
