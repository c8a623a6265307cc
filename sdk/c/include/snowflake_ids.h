/* snowflake_ids.h: the embedded generator of snowflake ids, for an
 * application's own process. The same ids, the same registry (etcd or
 * ZooKeeper, the keys under the same prefix) and the same guarantees as a
 * PostgreSQL node running the snowflake extension: no id is ever issued
 * twice, by this process, another one, or a database node.
 *
 *   sf_config cfg;
 *   sf_config_init(&cfg);
 *   cfg.etcd_endpoints = "http://127.0.0.1:2379";
 *   sf_generator* gen;
 *   char err[512];
 *   if (sf_open(&cfg, &gen, err, sizeof err) != SF_OK) { fprintf(stderr, "%s\n", err); exit(1); }
 *   if (sf_wait_ready(gen, 10000) != SF_OK) { ... sf_last_error()->message ... }
 *   int64_t id;
 *   if (sf_next_id(gen, &id) == SF_OK) printf("%lld\n", (long long)id);
 *   sf_close(gen);
 *
 * Layouts: twitter's by default (41-bit milliseconds, 10-bit worker id,
 * 12-bit sequence); sf_config.layout gives another, as the extension's
 * snowflake.layout ("js-safe": every id below 2^53). Every process and node
 * of a fleet uses the same one.
 *
 * Threads: every function may be called from any thread; sf_next_id and
 * sf_next_ids are lock-free on their common path (the same compare-and-swap
 * protocol as the extension's). Leasing runs in one background thread that
 * sf_open starts; the id path never does I/O: without a lease it fails at
 * once with SF003, and waits at most for the clock tolerance or the next
 * millisecond (with SF_CLOCK_FAILOVER, a clock stepped back waits for a
 * backup worker id at most SF_BACKUP_WAIT_MS).
 *
 * Fork: a child of fork() never issues under its parent's worker id, and
 * never renews or releases its parent's lease. Its first call starts a lease
 * of its own (that call fails with SF003, sf_wait_ready waits for it); a
 * static worker id cannot follow a fork (SF003 in the child, whose hint says
 * so). fork() may wait for the background thread's coordinator call under
 * way (a fork gate, so that the child never inherits a lock held inside name
 * resolution or the client library): at most one turn of the lease, a few
 * calls each within the coordinator timeout (1 s; 3 s for a new ZooKeeper
 * session), plus the system resolver's own timeouts for a name.
 *
 * Errors: every function returns SF_OK (0) or an sf_code; the thread's
 * sf_last_error() then holds the SQLSTATE (the same codes as the SQL
 * functions': SF001 clock behind, SF003 no lease, ...), a message and a hint
 * that says what to do.
 *
 * Link with -lsnowflake_ids (pkg-config snowflake_ids). No PostgreSQL in it. */
#ifndef SNOWFLAKE_IDS_H
#define SNOWFLAKE_IDS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SF_IDS_VERSION "1.3.0"

typedef enum sf_code {
    SF_OK = 0,
    SF_ERR_CLOCK_BEHIND = 1, /* SF001: the clock stepped back past the tolerance */
    SF_ERR_CLOCK_RANGE = 2,  /* SF002: the clock is outside the layout's range from the epoch */
    SF_ERR_NO_LEASE = 3,     /* SF003: no worker id is held now (or its reservation could not be extended) */
    SF_ERR_CLOCK_UNSYNC = 4, /* SF004: reserved (max clock error), not raised by this version */
    SF_ERR_INVALID = 5,      /* 22023: a setting or an argument is invalid */
    SF_ERR_NOT_READY = 6,    /* 57014: sf_wait_ready's timeout passed before a worker id was held */
    SF_ERR_CLOSED = 7,       /* 55000: the generator is closed (or closing) */
    SF_ERR_FLEET = 8,        /* 55000: the fleet under the prefix has another epoch or layout */
    SF_ERR_MARK_FILE = 9,    /* 58030: the mark file could not be read, written or synced */
    SF_ERR_MARK_LOCKED = 10, /* 55006: another process holds the mark file */
    SF_ERR_NO_MEMORY = 11    /* 53200 */
} sf_code;

/* A clock step back within clock_tolerance_ms is waited out inside the
 * call. Beyond it: */
typedef enum sf_clock_backwards {
    SF_CLOCK_REFUSE = 0, /* SF001 until the clock passes the last id */
    /* Leased ids only (sf_open refuses it with a static worker_id): the call
     * asks the background thread for a backup worker id, a second id leased
     * in the same lease, and waits for it at most SF_BACKUP_WAIT_MS (or
     * clock_tolerance_ms if longer); ids go on under it, above its mark,
     * until the clock passes the last id of the own worker id (and the
     * backup was held 2 s), then under the own id again. No backup taken in
     * time: SF001, whose detail and hint say why. Ids stay unique, but those
     * of a failover sort before the ids issued before the step. */
    SF_CLOCK_FAILOVER = 1
} sf_clock_backwards;

/* The longest a call whose clock stepped back waits for a backup worker id
 * (SF_CLOCK_FAILOVER): a failover is a few round trips to the coordinator. */
#define SF_BACKUP_WAIT_MS 1000

typedef struct sf_config {
    /* Where worker ids are leased: one of the two, or neither with a static
     * worker_id and a mark_file. etcd: "http://host:port[,...]" (the
     * extension's snowflake.etcd_endpoints); ZooKeeper: "host:port[,...]". */
    const char* etcd_endpoints;
    const char* zookeeper_hosts;
    /* -1 (the default): lease any free id in [worker_id_min, worker_id_max];
     * 0 to the layout's largest worker id (1023 for twitter, 63 for js-safe):
     * exactly this id (leased when a coordinator is set, else static). */
    int32_t worker_id;
    /* The range a leased id is chosen from, within the layout's worker ids
     * and 0..1023 (a lease holds ids up to 1023 in every layout, as the
     * nodes' snowflake.lease_worker_ids; a higher id of a wider worker field
     * is for a static worker_id). -1 (the default of each): the upper half of
     * those, 512..1023 for twitter (and wider layouts), 32..63 for js-safe
     * (W < 10 worker bits: 2^(W-1) to 2^W - 1), so that application processes
     * leave the lower half to the database nodes (set
     * snowflake.lease_worker_ids = '0-511' on them, '0-31' under js-safe, to
     * confine them there). */
    int32_t worker_id_min;
    int32_t worker_id_max;
    const char* lease_prefix;  /* default "/snowflake", as snowflake.lease_prefix */
    int32_t lease_ttl_ms;      /* default 30000 (5000..300000), as snowflake.lease_ttl */
    /* The epoch, as snowflake.epoch: ISO 8601 with an explicit offset;
     * NULL: "2025-01-01 00:00:00+00". Compared with the fleet's at each lease. */
    const char* epoch;
    int32_t clock_tolerance_ms; /* default 5 (0..10000), as snowflake.clock_tolerance_ms */
    sf_clock_backwards clock_backwards;
    /* The reserve-ahead high-water mark of a static worker id (required
     * then; locked with flock for the generator's life); ignored when leased. */
    const char* mark_file;
    /* Recorded in the worker key's identity: "c", "node", "python". */
    const char* runtime;
    /* The bit layout of the ids, the text the extension's snowflake.layout
     * takes: NULL or "" (the default): "twitter" (41-bit milliseconds, 10-bit
     * worker id, 12-bit sequence); "js-safe" (41/6/6: every id below 2^53, 64
     * worker ids, 64 ids a millisecond); or the fields from the top bit down,
     * "time T, worker W, sequence S" (1 ms units, at most 41 bits of time).
     * Every process and node of a fleet uses the same: the fleet's key in the
     * coordinator records it (a generator of another layout does not lease:
     * SF_ERR_FLEET), and so does the mark file of a static worker id (a mark
     * of another layout: sf_open refuses it, SF_ERR_INVALID). */
    const char* layout;
} sf_config;

/* Fills *cfg with the defaults above. Call it first: later versions add fields. */
void sf_config_init(sf_config* cfg);

typedef struct sf_generator sf_generator;

typedef struct sf_error {
    sf_code code;
    char sqlstate[6];   /* "SF003", "22023", ... ("00000" for SF_OK) */
    char message[256];  /* "no worker id lease is held" */
    char detail[512];   /* what the lease is doing, the distance of a clock step, ... ("" if none) */
    char hint[256];     /* what to do ("" if none) */
} sf_error;

/* The calling thread's last error (set by every function that failed). */
const sf_error* sf_last_error(void);
/* The SQLSTATE of a code ("SF001", ...). */
const char* sf_sqlstate(sf_code code);

/* Checks cfg and starts the generator: with a coordinator, the background
 * thread that leases a worker id (ids fail with SF003 until one is held:
 * sf_wait_ready); with a static worker id, reads and locks the mark file.
 * On failure *out is NULL, and err (if not NULL) holds the message and hint. */
sf_code sf_open(const sf_config* cfg, sf_generator** out, char* err, size_t errlen);

/* Waits until a worker id is held and ids can be issued, at most timeout_ms
 * (SF_ERR_NOT_READY then, with what the lease is doing); at once for a
 * static worker id. Ends early with SF_ERR_CLOSED when the generator is
 * closed, and with the lease's refusal when it cannot succeed (a fleet of
 * another epoch or layout). */
sf_code sf_wait_ready(sf_generator* gen, int32_t timeout_ms);

/* One id. */
sf_code sf_next_id(sf_generator* gen, int64_t* out);
/* Up to n (1..1000000) ids into out, *got of them (ascending, all issued
 * before the call returns); on an error after some ids, *got says how many
 * are valid and the code is the error's. */
sf_code sf_next_ids(sf_generator* gen, int64_t* out, int32_t n, int32_t* got);

typedef struct sf_decoded {
    int64_t unix_ms;         /* the id's instant, Unix milliseconds */
    int64_t ms_since_epoch;
    int32_t worker_id;
    int32_t sequence;
} sf_decoded;

/* The fields of a twitter-layout id (>= 0) under an epoch in Unix milliseconds. */
sf_code sf_decode(int64_t id, int64_t epoch_unix_ms, sf_decoded* out);
/* The same under a layout, the text sf_config.layout takes (NULL or "":
 * twitter). SF_ERR_INVALID for a layout sf_open would refuse, or an id the
 * layout cannot hold (2^53 or more under js-safe). */
sf_code sf_decode_layout(int64_t id, int64_t epoch_unix_ms, const char* layout, sf_decoded* out);
/* An epoch's text (as sf_config.epoch) in Unix milliseconds. */
sf_code sf_parse_epoch(const char* text, int64_t* epoch_unix_ms);

typedef enum sf_lease_state {
    SF_STATE_STATIC = 0,     /* a static worker id: no lease */
    SF_STATE_ACQUIRING = 1,  /* leasing, no id held yet (or again) */
    SF_STATE_HELD = 2,       /* an id is held: ids are issued */
    SF_STATE_EXPIRED = 3,    /* the lease ended (its deadline passed, or it was lost) */
    SF_STATE_CLOSED = 4
} sf_lease_state;

typedef struct sf_stats {
    sf_lease_state state;
    int32_t worker_id;             /* the id held (its own), -1 none */
    int32_t backup_worker_id;      /* clock failover: the backup id ids are issued under now, -1 none */
    const char* coordinator;       /* "etcd", "zookeeper" or "static" (static storage) */
    int64_t ids_issued;
    int64_t lease_ms_left;         /* until the lease's deadline, -1 none */
    int64_t reserved_until_unix_ms;/* ids may be issued up to this millisecond, -1 none */
    int64_t clock_backwards_events;
    int64_t clock_backwards_errors;
    int64_t overflow_waits;        /* calls that waited for the next millisecond */
    int64_t lease_acquisitions;
    int64_t lease_failures;
    int32_t pid;                   /* the process that holds the lease (changes after a fork) */
    char last_error[256];          /* the lease's last error ("" if none) */
    /* The generator's layout: "twitter", "js-safe", or the widths as
     * "time 40, worker 12, sequence 11, unit 1ms" for a split no profile names. */
    char layout[64];
} sf_stats;

sf_code sf_status(sf_generator* gen, sf_stats* out);

/* Stops ids, writes the exact mark (the coordinator's, or the mark file)
 * and ends the lease at once, so that the next holder need not wait a TTL;
 * then frees gen. Within about one second whatever the coordinator does.
 * NULL is allowed. In a fork child that never leased, frees only. */
sf_code sf_close(sf_generator* gen);

#ifdef __cplusplus
}
#endif

#endif /* SNOWFLAKE_IDS_H */
