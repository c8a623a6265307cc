/* bench/sdk_c_bench.c: libsnowflake_ids's id path in one thread, a static
 * worker id with its mark file in a temporary directory.
 *
 *   make build/sdk_c_bench && build/sdk_c_bench [seconds]
 *
 * Prints (1) ns per sf_next_id below the cap: bursts of 1000 ids (a quarter
 * of a millisecond's 4096), each timed on its own, the clock left to move
 * on between them, so that no call waits for the next millisecond; and
 * (2) a tight loop's ids per second, against the cap of 4,096,000 (4096 ids
 * per millisecond). Figures, not a test: nothing here passes or fails.
 *
 * Beside (1), the median burst's ns per id (a burst that lost the CPU to
 * another process is an outlier, not the call's cost); beside (2), every id
 * compared with the one before (one thread: strictly ascending ids cannot
 * repeat, so 'not above the one before' counts any duplicate), the most ids
 * in one millisecond (id >> 22), the overflow waits, and the time the loop
 * spent on a CPU and waiting for one (/proc/self/schedstat: a millisecond
 * spent waiting is a millisecond's ids lost). bench/sdk.sh reads
 * these lines. */
#define _GNU_SOURCE
#include <snowflake_ids.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This thread's time on a CPU and waiting for one (ns), from
 * /proc/self/schedstat; -1 where there is none. */
static void sched_ns(long long* on_cpu, long long* waiting) {
    *on_cpu = *waiting = -1;
    FILE* f = fopen("/proc/self/schedstat", "r");
    if (f) {
        if (fscanf(f, "%lld %lld", on_cpu, waiting) != 2) *on_cpu = *waiting = -1;
        fclose(f);
    }
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static void wait_next_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    const long ms = ts.tv_nsec / 1000000;
    do {
        clock_gettime(CLOCK_REALTIME, &ts);
    } while (ts.tv_nsec / 1000000 == ms);
}

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    char dir[] = "/tmp/sdk-c-bench.XXXXXX";
    if (mkdtemp(dir) == NULL) return 1;
    char mark[64];
    snprintf(mark, sizeof mark, "%s/mark", dir);
    sf_config cfg;
    sf_config_init(&cfg);
    cfg.worker_id = 1;
    cfg.mark_file = mark;
    sf_generator* gen;
    char err[512];
    if (sf_open(&cfg, &gen, err, sizeof err) != SF_OK || sf_wait_ready(gen, 10000) != SF_OK) {
        fprintf(stderr, "sdk_c_bench: %s\n", err);
        return 1;
    }
    int64_t id = 0;
    /* (1) Below the cap. */
    const int bursts = 2000, per_burst = 1000;
    double busy = 0;
    static double burst_s[2000];
    for (int b = 0; b < bursts; b++) {
        wait_next_ms();
        const double t0 = now_s();
        for (int i = 0; i < per_burst; i++)
            if (sf_next_id(gen, &id) != SF_OK) {
                fprintf(stderr, "sdk_c_bench: %s\n", sf_last_error()->message);
                return 1;
            }
        burst_s[b] = now_s() - t0;
        busy += burst_s[b];
    }
    qsort(burst_s, bursts, sizeof burst_s[0], cmp_double);
    printf("below the cap: %.1f ns per sf_next_id (%d bursts of %d ids)\n",
           busy * 1e9 / (bursts * (double)per_burst), bursts, per_burst);
    printf("below the cap, median burst: %.1f ns per sf_next_id\n", burst_s[bursts / 2] * 1e9 / per_burst);
    sf_stats st;
    sf_status(gen, &st);
    const int64_t waits0 = st.overflow_waits;
    /* (2) A tight loop, at the cap. */
    long n = 0, not_above = 0, run = 0, busiest = 0;
    int64_t prev = id;
    long long cpu0, wait0, cpu1, wait1;
    sched_ns(&cpu0, &wait0);
    const double start = now_s();
    double t = start;
    while (t - start < seconds) {
        for (int i = 0; i < 10000; i++) {
            if (sf_next_id(gen, &id) != SF_OK) {
                fprintf(stderr, "sdk_c_bench: %s\n", sf_last_error()->message);
                return 1;
            }
            if (id <= prev) not_above++;
            run = (id >> 22 == prev >> 22) ? run + 1 : 1;
            if (run > busiest) busiest = run;
            prev = id;
        }
        n += 10000;
        t = now_s();
    }
    sched_ns(&cpu1, &wait1);
    const double rate = (double)n / (t - start);
    printf("tight loop: %.0f ids/s, %.2f%% of the cap of 4096000 (%ld ids in %.2f s)\n", rate, rate / 40960.0, n,
           t - start);
    sf_status(gen, &st);
    printf("tight loop ids: %ld not above the one before, busiest millisecond %ld ids, %lld overflow waits\n",
           not_above, busiest, (long long)(st.overflow_waits - waits0));
    if (cpu0 >= 0 && cpu1 >= 0)
        printf("tight loop scheduling: %.1f ms on a CPU, %.1f ms waiting for one\n", (cpu1 - cpu0) / 1e6,
               (wait1 - wait0) / 1e6);
    sf_close(gen);
    unlink(mark);
    rmdir(dir);
    return 0;
}
