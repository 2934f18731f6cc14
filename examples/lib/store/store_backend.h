/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_BACKEND_H
#define SDLIVE_EXAMPLE_STORE_BACKEND_H

/* The seam between the store's logic, written once (store_*.c), and a
 * backend (sqlite_*.c, pg_*.c). A backend gives the SQL text of every
 * statement the logic names (enum store_stmt), runs it with the driver
 * calls below, and implements what has no common shape: opening and
 * identity, release announcements, the batched job path where it has its
 * own. The public entry points validate every argument (non-NULL, names at
 * most STORE_NAME_MAX, ttl > 0 ...) before anything reaches a backend.
 * Each backend embeds struct store first in its own handle. */

#include "store.h"

#include <stdarg.h>
#include <stdatomic.h>

/* The statements of the shared logic; each backend has one SQL text and
 * one parameter list (struct store_sql) per entry. */
enum store_stmt {
        STMT_META,            /* key, value of 'schema' and 'store_id' */
        STMT_FENCE,           /* a row while the fence holds */
        STMT_FENCE_TOKEN,     /* lease, token, identity -> a row when the token is at
                               * least the lease's mark, which it raises */
        STMT_TOKEN_MARK,      /* lease -> the highest token recorded */
        STMT_LOG,             /* write_log row: lease, holder, generation, what */
        STMT_LEASE_ACQUIRE,   /* name, holder, ttl -> generation, no row when held */
        STMT_LEASE_REFRESH,   /* name, holder, generation, ttl -> rows changed */
        STMT_LEASE_RELEASE,   /* name, holder, generation -> rows changed */
        STMT_LEASE_READ,      /* name -> holder, generation, held, remaining */
        STMT_LOG_SUMMARY,     /* lease -> entries, generations, overlaps */
        STMT_SEED_BLOBS,      /* count */
        STMT_SEED_ARTIFACTS,  /* count */
        STMT_SEED_NODES,      /* count */
        STMT_BLOBS_LIST,      /* after, max -> id, refcount, deleted */
        STMT_ARTIFACTS_LIST,  /* after name (NULL: first), after version, max */
        STMT_NODES_LIST,      /* after, max -> name, checkin, since, missing */
        STMT_BLOB_DELETE,     /* id */
        STMT_ARTIFACT_PRUNE,  /* name, version */
        STMT_NODE_MISSING,    /* name */
        STMT_NODE_CHECKIN,    /* name */
        STMT_RUN_BEGIN,       /* total -> id */
        STMT_RUN_NEXT,        /* run -> total, next job number */
        STMT_RUN_FILL,        /* run, first, end */
        STMT_JOB_CLAIM,       /* run (0: any), worker -> STORE_JOB_COLUMNS */
        STMT_JOBS_REQUEUE,    /* worker (NULL: every worker) */
        STMT_JOB_REQUEUE,     /* run, job, attempt -> rows changed */
        STMT_JOB_LOCK,        /* run, job -> STORE_JOB_COLUMNS, row locked */
        STMT_JOB_DONE,        /* run, job, outcome */
        STMT_JOB_EXECUTED,    /* run, job */
        STMT_RUN_COUNT,       /* run */
        STMT_RUNS_SUMMARY,    /* max -> struct store_run_summary columns */
        STMT_JOB_OLDEST,      /* -> STORE_JOB_COLUMNS, claimed */
        STMT_JOB_READ,        /* run, job -> STORE_JOB_COLUMNS */
        STMT_RUN_READ,        /* run -> struct store_run columns */
        STMT_RUNS_UNFINISHED, /* max -> id */
        STMT_RESULT_READ,     /* run, job, token -> done, attempt, token matches */
        STMT_CLAIM_NEXT,      /* worker, token -> run, job, attempt */
        STMT_N
};

/* What a backend names STMT_* by. types has one letter per parameter, in
 * order: 'i' int64_t, 't' const char * (NULL is SQL NULL), 'b' a
 * FRAME_TOKEN_SIZE byte token (const uint8_t *), all taken from the
 * caller's arguments; and letters the backend fills in itself (SQLite:
 * 'L' the lease clock, 'W' the wall clock, 'B' this host's boot id).
 * PostgreSQL's SQL reads its clock itself and uses 'i' and 't' only. A
 * backend with its own jobs_batch leaves STMT_RESULT_READ and
 * STMT_CLAIM_NEXT out (text NULL). */
struct store_sql {
        const char *text;
        const char *types;
};

/* The rows of one statement while they are read; res and row belong to
 * the backend. */
struct store_rows {
        struct store *s;
        const char *what;
        void *res;
        int row, n;
};

struct store_backend {
        const char *name;
        const struct store_sql *sql; /* STMT_N entries */

        /* Driver calls. */
        /* Connects when the handle has no usable connection. */
        int (*connect)(struct store *s);
        /* Runs sql[id] with the caller's parameters; rows stay readable
         * until end(). */
        int (*query)(struct store *s, enum store_stmt id, const char *what, struct store_rows *rows, va_list ap);
        /* Moves to the next row: 1 a row, 0 no more, < 0 error. */
        int (*next)(struct store_rows *rows);
        int64_t (*int_at)(const struct store_rows *rows, int col);
        /* "" or NULL for SQL NULL. */
        const char *(*text_at)(const struct store_rows *rows, int col);
        bool (*bool_at)(const struct store_rows *rows, int col);
        void (*end)(struct store_rows *rows);
        /* Runs sql[id] to the end: the rows it changed (PostgreSQL: or returned). */
        int (*exec)(struct store *s, enum store_stmt id, const char *what, va_list ap);
        int (*begin)(struct store *s);
        int (*commit)(struct store *s);
        /* Ends a failed transaction, keeps the message of r, returns r. */
        int (*abort)(struct store *s, int r);
        /* Inside a write transaction: 0 while the store open is the one the
         * handle is bound to, else -ESTALE. NULL: STMT_FENCE checks it. */
        int (*still_bound)(struct store *s);
        /* Announces a committed release. NULL: STMT_LEASE_RELEASE does. */
        void (*announce_release)(struct store *s);
        /* After an acquisition: the term starts from the store as it is
         * now (what still_bound() compares with). NULL: nothing to do. */
        int (*adopt_store)(struct store *s);
        /* 0 when a commit the store acknowledges survives the store's own
         * failover (PostgreSQL: its standbys, pg_standbys.c), else a
         * negative errno with the reason; looked up again at most every
         * max_age_usec. Called before every acquisition and refresh.
         * NULL: nothing can fail over. */
        int (*check_durability)(struct store *s, uint64_t max_age_usec);
        /* A single statement that reads before it writes takes the write
         * lock first (BEGIN ... COMMIT around it). */
        bool lock_single_writes;

        /* Opening, identity and connection. */
        void (*close)(struct store *s);
        int (*reconnect)(struct store *s);
        int (*set_lock_timeout)(struct store *s, uint64_t usec);
        /* 0 while the handle still reaches the store incarnation it is bound
         * to, else -ESTALE (deleted, replaced, dropped) with a message. */
        int (*same_store)(struct store *s);
        /* Rebinds the handle to whatever store is at its URL now, when that
         * is not the one it is bound to (never creating one). */
        int (*follow_store)(struct store *s);
        const char *(*identity)(const struct store *s);
        /* STMT_LEASE_REFRESH itself checks the bound identity (one round
         * trip, not same_store()'s and then the statement's); same_store()
         * then only says why a refresh changed nothing. */
        bool refresh_checks_identity;
        /* Answers awaited from a server so far. NULL: none (in-process). */
        uint64_t (*round_trips)(const struct store *s);

        /* Release announcements (store.h, store_lease_listen()). */
        int (*lease_listen)(struct store *s, int *ret_fd);
        int (*lease_notified)(struct store *s);
        int (*lease_unlisten)(struct store *s);

        /* The batched job path; NULL: statement by statement
         * (store_batch.c) with STMT_RESULT_READ and STMT_CLAIM_NEXT. Called
         * with a checked list of parts (b, b->next, ...) whose counters are
         * zero and tokens drawn; it writes every output into its part. */
        int (*jobs_batch)(struct store *s, const struct store_fence *f, struct store_job_batch *b);
        /* store_jobs_unsettled(); NULL: a backend whose COMMIT always
         * answers (in-process), 0. */
        size_t (*jobs_unsettled)(const struct store *s);
        /* A list of inventory writes in one fenced transaction; NULL:
         * statement by statement (store_inventory.c). Called connected,
         * with a checked list of 1 to STORE_INVENTORY_WRITES_MAX items whose
         * `changed` is false and what[i] their write-log text; it sets
         * `changed` and returns how many changed, as store_inventory_write. */
        int (*inventory_write)(struct store *s, const struct store_fence *f, struct store_inventory_write *w,
                               size_t n, const char *const *what);
};

struct store {
        const struct store_backend *backend;
        char errmsg[512];
        /* The deadline for acting of the fenced call in progress (its
         * fence's act_until_usec), NULL in any other call: set by
         * store_check_fence(), cleared by store_begin_call(). A backend
         * waits for the store's answer no longer than it. */
        const _Atomic uint64_t *act_until;
        /* The caller's wait hook (store_set_wait_hook), fn NULL: none; when
         * it was set or last ran (CLOCK_MONOTONIC). */
        struct store_wait_hook wait_hook;
        uint64_t wait_hook_ran_usec;
};

/* For a backend inside a wait: runs the wait hook if one is set and its
 * interval has passed since it last ran. */
void store_waiting(struct store *s);
/* How long a backend may block at once inside a wait: the hook's
 * interval, or UINT64_MAX without a hook. */
uint64_t store_wait_slice(const struct store *s);

/* The backend constructors are in store_open.h. */

/* The schema version both backends create and accept. */
#define STORE_SCHEMA_VERSION "1"

/* The columns STMT_JOB_* return, in this order, read by store_job_from_row(). */
#define STORE_JOB_COLUMNS "run, job, status, attempt, worker, outcome, executions"

/* Fills id with a new random store identity (STORE_ID_MAX hex digits). */
int store_new_identity(char id[STORE_ID_MAX + 1]);

/* Records a formatted message on s and returns r (a negative errno). */
int store_fail(struct store *s, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int store_vfail(struct store *s, int r, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Copies a text column into a STORE_NAME_MAX buffer, "" for NULL. */
void store_copy_name(char dst[STORE_NAME_MAX + 1], const char *src);

/* Driver calls by statement (store_sql.c). store_query() leaves rows
 * open for store_rows_next() and friends until store_rows_end(); the
 * others return what the backend's exec returns. */
int store_query(struct store *s, struct store_rows *rows, enum store_stmt id, const char *what, ...);
int store_exec(struct store *s, enum store_stmt id, const char *what, ...);
int store_rows_next(struct store_rows *rows);
int64_t store_rows_int(const struct store_rows *rows, int col);
const char *store_rows_text(const struct store_rows *rows, int col);
bool store_rows_bool(const struct store_rows *rows, int col);
void store_rows_end(struct store_rows *rows);
/* Runs a query that returns at most one row: 1 with the row open (end it),
 * 0 none (ended), < 0 error (ended). */
int store_query_row(struct store *s, struct store_rows *rows, enum store_stmt id, const char *what, ...);

/* Fills an item (of a list) from the current row: every field. */
typedef void (*store_row_fn)(const struct store_rows *rows, void *item);
/* Checks that out has room for 1 to INT32_MAX items, connects, runs a
 * query and fills up to max items of size bytes at out, one per row, with
 * fill, each zeroed first. Returns how many; on failure what out holds
 * means nothing. */
int store_read_rows(struct store *s, void *out, size_t size, size_t max, store_row_fn fill,
                    enum store_stmt id, const char *what, ...);

/* The fence and write log (store_fence.c). */
/* Begins a write transaction that holds only while f is the live lease of
 * the store incarnation that issued it (f->store_id, or the one the handle
 * is bound to) and its deadline for acting has not passed; -ESTALE
 * otherwise, with nothing left open. With f->by_token the lease check is
 * the token check instead: f->generation at least the highest token
 * recorded for f->lease, raised to it in the same transaction, in the
 * incarnation the handle is bound to (a store deleted, replaced or put
 * back from a copy has lost its marks). */
int store_fence_begin(struct store *s, const struct store_fence *f);
/* The identity a fence is checked against: f->store_id, or for a fence
 * by token or without one the identity the handle is bound to. */
const char *store_fence_identity(struct store *s, const struct store_fence *f);
/* Records why f was refused and returns -ESTALE: for a fence by token,
 * mark is the highest token the store has recorded for f->lease (0:
 * unknown). */
int store_fence_refused(struct store *s, const struct store_fence *f, int64_t mark);
/* 0 while f's deadline for acting (store_fence.act_until_usec) has not
 * passed, else -ESTALE with a message. */
int store_fence_in_time(struct store *s, const struct store_fence *f);
/* The earlier of deadline and f's deadline for acting (CLOCK_MONOTONIC). */
uint64_t store_fence_wait_until(const struct store_fence *f, uint64_t deadline);
/* Logs the write described by `what` under f and commits, unless f's
 * deadline for acting has passed (-ESTALE); on failure the transaction is
 * rolled back. */
int store_fence_commit(struct store *s, const struct store_fence *f, const char *what);
/* One fenced statement, logged as `what`: returns the rows it changed. */
int store_fenced_exec(struct store *s, const struct store_fence *f, const char *what, enum store_stmt id, ...);

/* The write-log text of an inventory write ("mark blob 7 deleted"). */
#define STORE_INVENTORY_WHAT_MAX 128
void store_inventory_what(const struct store_inventory_write *w, char what[STORE_INVENTORY_WHAT_MAX]);

/* Schema version and identity (store.c). */
/* Reads the schema version (must be STORE_SCHEMA_VERSION) and the store's
 * identity into id ("" for a store made before identities). `where` names
 * the store in messages. */
int store_meta_read(struct store *s, char id[STORE_ID_MAX + 1], const char *where);
/* -ESTALE with a message unless current is the bound identity. */
int store_identity_check(struct store *s, const char *current, const char *bound, const char *where);

/* The job state machine (store_jobs.c). */
/* Fills a struct store_job from the STORE_JOB_COLUMNS of the current row. */
void store_job_from_row(const struct store_rows *rows, struct store_job *j);
/* What a RESULT of attempt `attempt` finds on a job whose current attempt
 * is `current`: -EINVAL never assigned, STORE_RECORD_STALE_ATTEMPT,
 * -EPERM a token that is not the assignment's (unless tokens are not
 * checked), STORE_RECORD_DUPLICATE already done, STORE_RECORD_COUNTED. */
int store_record_verdict(uint32_t attempt, uint32_t current, bool token_ok, bool done);

/* The write-log overlap check, one SQL text for both dialects once
 * placeholders are spelled: "$1" (PostgreSQL) is "?1" in SQLite. */
#define STORE_LOG_SUMMARY_SQL(P1)                                                        \
        "WITH g AS (SELECT generation, count(DISTINCT holder) AS holders,"              \
        "  min(id) AS first_id, max(id) AS last_id, min(at) AS first_at,"               \
        "  max(at) AS last_at, count(*) AS n"                                          \
        "  FROM write_log WHERE lease = " P1 " GROUP BY generation),"                   \
        " o AS (SELECT holders, first_id, first_at, n,"                                 \
        "  lag(last_id) OVER (ORDER BY generation) AS prev_last_id,"                    \
        "  lag(last_at) OVER (ORDER BY generation) AS prev_last_at FROM g)"             \
        " SELECT coalesce(sum(n), 0), count(*), coalesce(sum(CASE WHEN holders > 1"     \
        "  OR prev_last_id > first_id OR prev_last_at > first_at THEN 1 ELSE 0 END), 0)" \
        " FROM o"

#endif
