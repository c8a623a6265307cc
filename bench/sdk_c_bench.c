/* bench/sdk_c_bench.c: the C library's sf_next_id, measured the way
 * bench/sdk/compare.js and bench/sdk/compare.py measure the bindings and the
 * baselines (bench/sdk.sh runs all of them in one run). Prints; asserts
 * nothing.
 *
 *   sdk_c_bench MARK_FILE WORKER_ID BATCH ROUNDS SECONDS
 *
 * A static worker id and its mark file (no coordinator). Two figures:
 *
 *   below the cap: ROUNDS timed batches of BATCH calls, each batch started
 *   at a new millisecond (of the realtime clock, as the generator's), so
 *   that no call waits for the next millisecond: ns per id is the call's
 *   own cost, not the cap's 244 ns;
 *
 *   tight loop: sf_next_id as fast as it returns for SECONDS, every id
 *   stored; ids/s over the run (the cap is 4,096,000), then the ids are
 *   checked: strictly ascending means no duplicate; otherwise they are sorted
 *   and the repeats counted; and the most ids that share one millisecond
 *   field (id >> 22).
 *
 * Output: one "c<TAB>KEY<TAB>VALUE" line per figure (bench/sdk/report.py).
 * Built by bench/sdk.sh against build/sdk/libsnowflake_ids.a (as the
 * bindings link it), or by 'make build/sdk_c_bench' against the shared
 * library. */
#define _POSIX_C_SOURCE 200809L
#include <snowflake_ids.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t ns_of(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int64_t realtime_ms(void) { return ns_of(CLOCK_REALTIME) / 1000000; }

static void fail(const char* what) {
    const sf_error* e = sf_last_error();
    fprintf(stderr, "sdk_c_bench: %s: %s %s (%s)\n", what, e->sqlstate, e->message, e->hint);
    exit(1);
}

static int cmp_i64(const void* a, const void* b) {
    int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: sdk_c_bench MARK_FILE WORKER_ID BATCH ROUNDS SECONDS\n");
        return 2;
    }
    const char* mark = argv[1];
    int worker = atoi(argv[2]);
    long batch = atol(argv[3]), rounds = atol(argv[4]);
    double seconds = atof(argv[5]);

    sf_config cfg;
    sf_config_init(&cfg);
    cfg.worker_id = worker;
    cfg.mark_file = mark;
    cfg.runtime = "c";
    char err[512];
    sf_generator* g;
    if (sf_open(&cfg, &g, err, sizeof err) != SF_OK) {
        fprintf(stderr, "sdk_c_bench: sf_open: %s\n", err);
        return 1;
    }
    if (sf_wait_ready(g, 10000) != SF_OK) fail("sf_wait_ready");

    int64_t id;
    volatile int64_t sink = 0; /* keeps the loop's calls */
    sf_stats st;

    /* Below the cap: a warm-up pass, then the timed one. The median batch is
     * the figure (a batch that lost the CPU to another process is an
     * outlier, not the call's cost); the mean is printed beside it. */
    double ns_per_id = 0, ns_mean = 0;
    int64_t* batch_ns = malloc((size_t)rounds * sizeof *batch_ns);
    if (!batch_ns) {
        fprintf(stderr, "sdk_c_bench: out of memory\n");
        return 1;
    }
    for (int pass = 0; pass < 2; pass++) {
        int64_t total = 0;
        for (long r = 0; r < rounds; r++) {
            int64_t ms = realtime_ms();
            while (realtime_ms() == ms) {
            }
            int64_t t0 = ns_of(CLOCK_MONOTONIC);
            for (long i = 0; i < batch; i++) {
                if (sf_next_id(g, &id) != SF_OK) fail("sf_next_id");
                sink ^= id;
            }
            batch_ns[r] = ns_of(CLOCK_MONOTONIC) - t0;
            total += batch_ns[r];
        }
        qsort(batch_ns, (size_t)rounds, sizeof *batch_ns, cmp_i64);
        ns_per_id = (double)batch_ns[rounds / 2] / (double)batch;
        ns_mean = (double)total / ((double)batch * (double)rounds);
    }
    free(batch_ns);
    if (sf_status(g, &st) != SF_OK) fail("sf_status");
    int64_t waits_below = st.overflow_waits;

    /* Tight loop, every id kept. */
    size_t cap = (size_t)(seconds * 8192000.0) + 65536; /* twice the cap's ids */
    int64_t* ids = malloc(cap * sizeof *ids);
    if (!ids) {
        fprintf(stderr, "sdk_c_bench: out of memory\n");
        return 1;
    }
    memset(ids, 0, cap * sizeof *ids); /* touch the pages before the clock starts */
    size_t n = 0;
    int64_t t0 = ns_of(CLOCK_MONOTONIC), end = t0 + (int64_t)(seconds * 1e9), t1;
    for (;;) {
        for (int i = 0; i < 1024 && n < cap; i++)
            if (sf_next_id(g, &ids[n++]) != SF_OK) fail("sf_next_id");
        t1 = ns_of(CLOCK_MONOTONIC);
        if (t1 >= end || n >= cap) break;
    }
    if (sf_status(g, &st) != SF_OK) fail("sf_status");
    int64_t waits_tight = st.overflow_waits - waits_below;

    /* Duplicates: strictly ascending, or sort and count. */
    size_t dups = 0, dup_values = 0;
    int ascending = 1;
    for (size_t i = 1; i < n; i++)
        if (ids[i] <= ids[i - 1]) { ascending = 0; break; }
    if (!ascending) {
        qsort(ids, n, sizeof *ids, cmp_i64);
        for (size_t i = 1; i < n; i++)
            if (ids[i] == ids[i - 1]) {
                dups++;
                if (i == 1 || ids[i - 1] != ids[i - 2]) dup_values++;
            }
    }
    /* The most ids that share one millisecond field (id >> 22). */
    size_t max_ms = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        run = (i > 0 && ids[i] >> 22 == ids[i - 1] >> 22) ? run + 1 : 1;
        if (run > max_ms) max_ms = run;
    }
    double secs = (double)(t1 - t0) / 1e9;

    printf("c\tversion\tlibsnowflake_ids %s (sf_next_id)\n", SF_IDS_VERSION);
    printf("c\tns_below_cap\t%.2f\n", ns_per_id);
    printf("c\tns_below_cap_mean\t%.2f\n", ns_mean);
    printf("c\tbatch\t%ld\nc\trounds\t%ld\n", batch, rounds);
    printf("c\toverflow_waits_below_cap\t%lld\n", (long long)waits_below);
    printf("c\tids\t%zu\nc\tseconds\t%.4f\nc\tids_per_s\t%.0f\n", n, secs, (double)n / secs);
    printf("c\tdups\t%zu\nc\tdup_values\t%zu\n", dups, dup_values);
    printf("c\tmax_ids_one_ms\t%zu\n", max_ms);
    printf("c\tascending\t%s\n", ascending ? "yes" : "no");
    printf("c\toverflow_waits\t%lld\n", (long long)waits_tight);
    free(ids);
    if (sf_close(g) != SF_OK) fail("sf_close");
    return 0;
}
