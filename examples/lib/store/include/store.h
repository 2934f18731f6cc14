/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_H
#define SDLIVE_EXAMPLE_STORE_H

/*
 * The store shared by the reference daemons: a named lease with a fencing
 * generation, fenced writes with a write log, the cluster inventory and the
 * job tables. Two backends behind one opaque handle:
 *
 *   "sqlite:/path/to/file.db"        processes on one host share the file
 *   "postgresql:<libpq conninfo>"    hosts share one database
 *
 * Return convention: < 0 is -errno, >= 0 is success (some calls return a
 * count or a STORE_RECORD_* code). Errors fall into the classes of
 * store_error_class(): a lease held by another or no longer ours (-EBUSY,
 * -ESTALE) is never confused with the store being unreachable (-EIO,
 * -ECONNREFUSED, -ECONNRESET, -ETIMEDOUT, -EAGAIN ...), which a daemon
 * retries with backoff. After any error store_errmsg() says what happened.
 *
 * Filling the caller's structs: a call that fills a struct *ret writes
 * every field of it on every success (a name terminated), and zeroes it
 * first, so after any failure, a refused argument too, *ret reads as zero
 * (a NULL ret is -EINVAL). A list call (out, max) writes every field of
 * out[0 .. n-1] on success; after a failure what out holds means nothing.
 *
 * Threads: a handle is used by one thread at a time; open one handle per
 * thread (for example one for the lease refresher, one for the main loop).
 * After fork() the child must open its own handle.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_token.h" /* FRAME_TOKEN_SIZE: a claim's token is what its ASSIGN carries */

#ifdef __cplusplus
extern "C" {
#endif

struct store;

/* Longest lease, holder, worker, artifact or node name, without the NUL. */
#define STORE_NAME_MAX 63

enum store_error_class {
        STORE_OK,          /* r >= 0 */
        STORE_LOST,        /* -EBUSY: held by another; -ESTALE: no longer ours */
        STORE_UNAVAILABLE, /* transient: retry with backoff, then reconnect */
        STORE_FATAL,       /* bad arguments, corrupt or foreign file, bug */
};
enum store_error_class store_error_class(int r);

/* Longest store identity, without the NUL (32 hex digits). */
#define STORE_ID_MAX 32

/* Opens the store at url, creating it when none exists yet: the tables
 * (idempotently) and the store's identity, a random 128-bit id that every
 * incarnation of a store gets when it is created. A SQLite file is created
 * only where neither it nor its write-ahead log (PATH-wal) exists: a
 * database missing beside its log is a store deleted while in use, and is
 * refused (-ENOENT) until it is restored or its -wal and -shm are removed.
 * A handle never creates a store again after this first open: when the
 * store it opened is deleted, its calls fail as "unavailable" (-EIO) until
 * the store is back. On failure *ret is NULL and store_errmsg(NULL)
 * describes the failure for this thread. */
int store_open(const char *url, struct store **ret);
/* Opens an existing store for reading only, for inspection: no schema
 * set-up, no write lock, no transaction that writes, and nothing created
 * beside a SQLite file (PostgreSQL: every transaction is read-only). Every
 * write fails with -EROFS. */
int store_open_readonly(const char *url, struct store **ret);
/* Closes the handle; accepts NULL; returns NULL. */
struct store *store_close(struct store *s);
/* Human-readable reason of the last error on s (or of the last failed
 * store_open() in this thread when s is NULL); "" when there was none.
 * Valid until the next call on s. */
const char *store_errmsg(const struct store *s);
/* "sqlite" or "postgresql". */
const char *store_backend(const struct store *s);
/* The identity of the store this handle is bound to: the incarnation it
 * first opened, or the one its last store_lease_acquire() ran in. "" when
 * the store has none (a read-only handle on a store older than identities). */
const char *store_identity(const struct store *s);
/* Drops and re-establishes the connection (PostgreSQL) or reopens the file
 * (SQLite). PostgreSQL also reconnects by itself on the next call after a
 * lost connection; this call lets a daemon probe during backoff. */
int store_reconnect(struct store *s);
/* How many answers this handle has waited for from a store server so far
 * (PostgreSQL: each a round trip; SQLite, in-process: 0). For tests and
 * diagnostics of what a call costs on a slow network. */
uint64_t store_round_trips(const struct store *s);
/* How long one call may wait for a lock held by another client before it
 * fails with -ETIMEDOUT (SQLite busy timeout, PostgreSQL lock_timeout).
 * Default 1 s. */
int store_set_lock_timeout(struct store *s, uint64_t usec);

/* A call waiting on the store is the caller working, not wedged: its own
 * bound (the lock timeout + 4 s for an answer, libpq's connect_timeout
 * per host for a connect) is what limits it. A wait hook lets the caller
 * show that to its supervisor (pet a watchdog) meanwhile.
 *
 * Contract: while a call on s waits (PostgreSQL: for a server's answer,
 * in slices of at most interval_usec, and before and after each connect
 * or reconnect; SQLite: for another client's lock, in steps of at most
 * 1 ms) fn(userdata) is called on the calling thread once interval_usec
 * has passed since it was set or last called, so at most once per
 * interval_usec and, while a wait goes on, at least once per interval_usec
 * plus one slice. fn must not call into s. A hook cannot lengthen a
 * call: every deadline stays as it was. libpq's connect itself blocks,
 * bounded by connect_timeout per host (2 to 5 s), with fn called just
 * before and just after it; store_open() connects before any hook can be
 * set, so a caller calls its hook around it. What the hook proves is only
 * that the caller is inside a bounded store call: a loop wedged anywhere
 * else calls no hook and is caught as before. */
struct store_wait_hook {
        void (*fn)(void *userdata); /* NULL: no hook */
        void *userdata;
        uint64_t interval_usec;     /* 1 ms to 1 h */
};
/* Sets (copies) or, with NULL, removes s's wait hook. -EINVAL for a hook
 * without fn or an interval out of range. */
int store_set_wait_hook(struct store *s, const struct store_wait_hook *hook);

/* ------------------------------------------------------------------ */
/* Lease                                                               */
/* ------------------------------------------------------------------ */

/* Takes lease `name` for `holder` if it is free, released or expired —
 * also when `holder` held it before — and returns its new generation (the
 * fencing token; every acquisition increments it) in *ret_generation.
 * -EBUSY when another acquisition is still valid (including one by the
 * same holder: extend it with store_lease_refresh()). */
int store_lease_acquire(struct store *s, const char *name, const char *holder,
                        uint64_t ttl_usec, uint64_t *ret_generation);

/* store_lease_acquire(), and in *ret_dated_after_usec the CLOCK_MONOTONIC
 * instant taken just before the statement that dated the won lease: after
 * the call's other round trips (the store's identity, its durability
 * check, a lock wait to begin), never later than the store's dating, so a
 * holder's deadline counted from it loses none of them and is safe. */
int store_lease_acquire_dated(struct store *s, const char *name, const char *holder, uint64_t ttl_usec,
                              uint64_t *ret_generation, uint64_t *ret_dated_after_usec);
/* Extends the lease to ttl_usec from now. -ESTALE when the lease is no
 * longer (holder, generation), has already expired, or the store was
 * deleted or replaced since this handle opened it. */
int store_lease_refresh(struct store *s, const char *name, const char *holder,
                        uint64_t generation, uint64_t ttl_usec);
/* Ends the lease now so a standby can acquire it at once. -ESTALE when the
 * lease is not (holder, generation). */
int store_lease_release(struct store *s, const char *name, const char *holder,
                        uint64_t generation);

/* Release announcements, so that a standby need not wait out its poll.
 * Every release store_lease_release() makes is announced to the listeners
 * of the store (PostgreSQL: NOTIFY, delivered on commit; SQLite: a touch
 * of the file <database>-released, seen through inotify by the processes
 * of the host). Best effort: an announcement is lost when nobody listened
 * at that moment (not yet listening, reconnecting), and a wake-up may be
 * spurious (anyone who can write the store can announce), so a waiter
 * still polls and treats an announcement as "attempt now", never as proof.
 *
 * store_lease_listen() starts listening (idempotent; again after a
 * reconnect) and sets *ret_fd to an fd that polls readable when something
 * may have arrived. The fd belongs to s and is valid until the next call on
 * s. store_lease_notified() consumes what arrived, without blocking: > 0 if
 * at least one release was announced since the last call, 0 if not, < 0
 * when listening broke (listen again). store_lease_unlisten() stops (a
 * leader does: nothing then queues up on its handle). */
int store_lease_listen(struct store *s, int *ret_fd);
int store_lease_notified(struct store *s);
int store_lease_unlisten(struct store *s);

struct store_lease_info {
        bool held;                        /* acquired and not yet expired */
        char holder[STORE_NAME_MAX + 1];  /* last holder, "" if released */
        uint64_t generation;              /* 0 if never acquired */
        uint64_t remaining_usec;          /* 0 unless held */
};
/* All of *ret, zero for a lease never acquired; zero on failure. */
int store_lease_read(struct store *s, const char *name, struct store_lease_info *ret);

/* ------------------------------------------------------------------ */
/* Fenced writes                                                       */
/* ------------------------------------------------------------------ */

/* Every write a leader makes names the lease it holds. The write commits
 * only if, in the same transaction, the lease is still (holder, generation)
 * and unexpired, in the store incarnation that issued it; otherwise it
 * changes nothing and returns -ESTALE. Each committed fenced write adds one
 * row to the write log. */
struct store_fence {
        const char *lease;
        const char *holder;
        uint64_t generation;
        /* store_identity() of the handle that acquired the lease, so a
         * generation from one incarnation of the store never passes in
         * another (a store deleted and created again starts at generation 1
         * too). NULL: the identity of the handle the write goes through. */
        const char *store_id;
        /* The writer's own deadline for acting (NULL: none): CLOCK_MONOTONIC
         * microseconds, loaded atomically at each use, that the lease's
         * holder moves on with every renewal (lease_holder_act_until() of
         * the cluster daemon) and that ends before the lease can expire on
         * the store's clock. From then on every fenced call under this
         * fence fails with -ESTALE and commits nothing: it is checked
         * before the call connects, before the transaction begins and
         * again before it commits, and PostgreSQL waits for any answer of
         * the store no longer than it (the connection is then dropped,
         * which rolls back what it had begun; a COMMIT sent in time whose
         * answer comes later may still have committed, under the lease:
         * the fence's lock on the lease row is held until then). A copy of
         * the fence shares the deadline. */
        const _Atomic uint64_t *act_until_usec;
        /* The lease is held outside the store (etcd, say) and generation is
         * its fencing token: cluster-wide and strictly increasing with each
         * acquisition. The write then commits only if, in the same
         * transaction, generation is at least the highest token the store
         * has seen for this lease, and it raises that high-water mark to
         * generation; a lower token gets -ESTALE, as the lease check does.
         * holder is recorded in the write log, store_id is not checked, and
         * the store's own lease table is not read; the handle must still
         * reach the store incarnation it is bound to (a store deleted,
         * replaced or put back from a copy has lost its marks: -ESTALE). A
         * transaction that rolls back raises nothing (docs/store.md,
         * "Fencing by token"). false: the lease is the store's own
         * (store_lease_acquire) and is checked as above. */
        bool by_token;
};

/* False once f's deadline for acting has passed (true without one). A
 * writer that acts outside the store on what a fenced call returned (a
 * coordinator sending the jobs it claimed) checks it before acting: a
 * call that began in time may return after the deadline. */
bool store_fence_may_act(const struct store_fence *f);

struct store_log_summary {
        uint64_t entries;      /* write-log rows of this lease */
        uint64_t generations;  /* distinct generations that wrote */
        /* Generations whose writes are not strictly after every write of
         * the previous generation (in commit order or in store time), or
         * that were written by more than one holder. 0 means no two
         * leaders' writes ever both succeeded in overlapping periods. */
        uint64_t overlaps;
};
/* All of *ret, zero for a lease that never wrote; zero on failure. */
int store_log_summary(struct store *s, const char *lease, struct store_log_summary *ret);

/* ------------------------------------------------------------------ */
/* Inventory for the maintenance pass                                  */
/* ------------------------------------------------------------------ */

struct store_blob {
        int64_t id;
        int64_t refcount;
        bool deleted;
};

struct store_artifact {
        char name[STORE_NAME_MAX + 1];
        int64_t version;
        int64_t created_usec;  /* CLOCK_REALTIME of the store */
};

struct store_node {
        char name[STORE_NAME_MAX + 1];
        int64_t last_checkin_usec;   /* CLOCK_REALTIME of the store */
        int64_t since_checkin_usec;  /* store's now - last_checkin */
        bool missing;
};

/* Adds (idempotently) blobs 1..blobs (every third unreferenced), `artifacts`
 * rows named artifact-NNNNN with versions 1..10 each, and `nodes` nodes
 * node-NNNNN (every fourth last checked in an hour ago), in one transaction.
 * Not fenced: setup for tests and demos. */
int store_seed_inventory(struct store *s, uint64_t blobs, uint64_t artifacts, uint64_t nodes);

/* Keyset batches: fill up to max items that sort after the cursor (id;
 * (name, version) with versions newest first; name), return how many.
 * 0 means the end. No transaction stays open between batches. */
int store_blobs_list(struct store *s, int64_t after_id, struct store_blob *out, size_t max);
int store_artifacts_list(struct store *s, const struct store_artifact *after /* NULL: start */,
                         struct store_artifact *out, size_t max);
int store_nodes_list(struct store *s, const char *after_name /* NULL: start */,
                     struct store_node *out, size_t max);

/* Fenced per-item updates; 1 if the item changed, 0 if there was nothing to
 * do (referenced blob, already deleted, unknown item). */
int store_blob_mark_deleted(struct store *s, const struct store_fence *f, int64_t id);
int store_artifact_prune(struct store *s, const struct store_fence *f, const char *name, int64_t version);
int store_node_mark_missing(struct store *s, const struct store_fence *f, const char *name);
/* A node reports in (not a leader write: unfenced). Clears `missing`. */
int store_node_checkin(struct store *s, const char *name);

/* Many inventory writes in one fenced transaction (the maintenance
 * pass's): the fence and the deadline for acting as for one write, each
 * item its own write-log row (the same text as its one-item call), all
 * or nothing; -ESTALE when fenced out, with nothing written. PostgreSQL
 * sends the whole list in two round trips (docs/store.md, "Batched
 * inventory writes"). The same row twice in a list changes once, on its
 * first item. */
enum store_inventory_op {
        STORE_BLOB_MARK_DELETED,   /* id */
        STORE_ARTIFACT_PRUNE,      /* name, version */
        STORE_NODE_MARK_MISSING,   /* name */
};

struct store_inventory_write {
        enum store_inventory_op op;
        int64_t id;
        char name[STORE_NAME_MAX + 1];
        int64_t version;
        bool changed;  /* out: the item changed its row (false on failure) */
};

/* At most this many items in one list. */
#define STORE_INVENTORY_WRITES_MAX 256

/* Applies w[0..n-1] (n at most STORE_INVENTORY_WRITES_MAX, else -EINVAL
 * and nothing sent; 0 items: 0, nothing sent). Returns how many items
 * changed their row, each marked in its `changed`. */
int store_inventory_write(struct store *s, const struct store_fence *f, struct store_inventory_write *w, size_t n);

/* ------------------------------------------------------------------ */
/* Jobs                                                                */
/* ------------------------------------------------------------------ */

enum store_job_status {
        STORE_JOB_PENDING,
        STORE_JOB_ASSIGNED,
        STORE_JOB_DONE,
};

struct store_job {
        uint64_t run;
        uint32_t job;                     /* 0 .. total-1 */
        enum store_job_status status;
        uint32_t attempt;                 /* 0 until first claimed */
        char worker[STORE_NAME_MAX + 1];  /* last claimer, "" if none */
        int64_t outcome;                  /* valid when done */
        uint32_t executions;              /* RESULTs recorded, stale ones too */
};

struct store_run {
        uint64_t id;
        uint32_t total;
        uint32_t done_count;       /* advanced once per job, in the recording transaction */
        int64_t created_usec;      /* CLOCK_REALTIME of the store */
        uint32_t jobs_done;        /* jobs in status done (equals done_count) */
        uint32_t jobs_redelivered; /* jobs claimed more than once */
        uint32_t jobs_reexecuted;  /* jobs with more than one recorded RESULT */
};

/* Creates a run of `total` pending jobs: store_run_begin() and then
 * store_run_fill() until it is complete, so in several fenced
 * transactions of at most STORE_RUN_FILL_MAX jobs each, with a pause of
 * STORE_RUN_FILL_PAUSE_USEC between them. */
int store_run_create(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run);
/* Claims the first pending job of `run` (0: of any run, oldest first):
 * assigned to `worker`, attempt incremented. 1 and all of *ret filled, or
 * 0 when nothing is pending (*ret zero, as on failure). Fenced. */
int store_job_claim(struct store *s, const struct store_fence *f, uint64_t run,
                    const char *worker, struct store_job *ret);
/* Puts in-flight jobs back to pending, retryably: those of `worker` (NULL:
 * of every worker — what a new leader does, having no connections yet).
 * Returns how many. Fenced. */
int store_jobs_requeue(struct store *s, const struct store_fence *f, const char *worker);
/* Puts one job back to pending if it is still in flight as `attempt`:
 * 1 if requeued, 0 otherwise. Fenced. */
int store_job_requeue(struct store *s, const struct store_fence *f, uint64_t run,
                      uint32_t job, uint32_t attempt);

enum store_record {
        STORE_RECORD_COUNTED = 1,       /* first transition to done: done_count advanced */
        STORE_RECORD_DUPLICATE = 2,     /* already done by this attempt: nothing changed */
        STORE_RECORD_STALE_ATTEMPT = 3, /* a newer attempt exists: refused */
};
/* Records the RESULT of (run, job, attempt) in one fenced transaction and
 * returns a STORE_RECORD_* code; each call that passes the fence also
 * counts one execution. A RESULT for the current attempt of a job that was
 * requeued but not yet claimed again completes it. -ENOENT for an unknown
 * job, -EINVAL for an attempt that was never assigned. */
int store_job_record(struct store *s, const struct store_fence *f, uint64_t run,
                     uint32_t job, uint32_t attempt, int64_t outcome);

/* ---- The coordinator's batched job path ---------------------------- */

/* Most jobs store_run_fill() adds in one transaction: bounded, so creating
 * a large run never holds the write lock (or the lease row) for long. */
#define STORE_RUN_FILL_MAX 5000
/* Between two such transactions the creator pauses this long: SQLite's
 * write lock is not fair, and a writer waiting for it (the lease
 * refresher) must find it free. */
#define STORE_RUN_FILL_PAUSE_USEC 1000

struct store_claim {
        uint64_t run;
        uint32_t job;
        uint32_t attempt;
        /* The assignment's token: drawn from getrandom() for each claim
         * and stored with the attempt, so a RESULT proves which
         * assignment it answers, also to a later leader. Its size is the
         * wire's (frame_token.h): the ASSIGN carries it as it is. */
        uint8_t token[FRAME_TOKEN_SIZE];
};

/* Up to want jobs for worker, oldest first, into out[0 .. got-1]. */
struct store_claim_request {
        const char *worker;
        struct store_claim *out;
        unsigned want;
        unsigned got; /* set */
};

struct store_result {
        uint64_t run;
        uint32_t job;
        uint32_t attempt;
        uint8_t token[FRAME_TOKEN_SIZE];
        int64_t outcome;
        /* Set: a STORE_RECORD_* code, or -ENOENT (no such job), -EINVAL
         * (attempt never assigned), -EPERM (the token is not that
         * attempt's). Only COUNTED writes; a duplicate, a stale attempt
         * and a refused RESULT change nothing. */
        int status;
};

struct store_requeue {
        uint64_t run;
        uint32_t job;
        uint32_t attempt;
        bool requeued; /* set: it was still in flight as that attempt */
};

/* One part of a job batch: one caller's RESULTs, requeues and claims.
 * Parts are chained by next and applied together in one transaction; each
 * part's outputs (statuses, requeued flags, claimed jobs, its counters)
 * are written into the part itself, so a caller reads its own answers
 * where it put its questions. */
struct store_job_batch {
        struct store_result *results;
        size_t n_results;
        struct store_requeue *requeues;
        size_t n_requeues;
        struct store_claim_request *claims;
        size_t n_claims;
        unsigned counted, requeued, claimed; /* set: this part's */
        /* Set in the first part: jobs of earlier batches put back to
         * pending by this one (store_jobs_unsettled()). */
        unsigned put_back;
        /* The next part of the same batch, NULL for the last. */
        struct store_job_batch *next;
        /* Fault injection (NULL: none), read from the first part only:
         * called with the first part inside the transaction once every
         * statement of every part ran, before it commits. */
        void (*inside)(void *userdata, const struct store_job_batch *b);
        void *userdata;
};

/* Applies the parts b, b->next, ... in ONE fenced transaction, in this
 * order: the RESULTs of every part recorded (idempotent, attempt- and
 * token-guarded; the same job twice in the batch counts once), the jobs of
 * every part requeued, the claims of every part (each job with a fresh
 * token), part by part. A batch that changes nothing is rolled back: no
 * write-log row, nothing written. 0, or -errno: every output of every
 * part then means nothing, and nothing of the batch committed, except
 * where its COMMIT went unanswered (PostgreSQL: the answer did not come in
 * time). Such a batch may still commit: its RESULTs then count, and a
 * retry finds them duplicates; its claims the handle keeps and puts back
 * itself (store_jobs_unsettled()). */
int store_jobs_batch(struct store *s, const struct store_fence *f, struct store_job_batch *b);
/* How many jobs claimed by batches whose COMMIT went unanswered this
 * handle keeps, not yet known to be settled. Each later batch, an empty
 * one too (a part with nothing in it), looks once their transactions
 * have ended and puts back to pending those they had assigned (first
 * part's put_back); a caller with jobs to serve runs a batch now and then
 * while this is not 0. Always 0 on SQLite. */
size_t store_jobs_unsettled(const struct store *s);

/* Creates the row of a run of total jobs, with none of them yet: the
 * run is unfinished until store_run_fill() has added them all and they
 * are done. Fenced. */
int store_run_begin(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run);
/* Adds the next up to min(max, STORE_RUN_FILL_MAX) jobs of run in one
 * fenced transaction; returns how many (0: the run has all its jobs). */
int store_run_fill(struct store *s, const struct store_fence *f, uint64_t run, uint32_t max);

/* ---- What an operator polls: aggregate reads, no per-job loop ------- */

struct store_run_summary {
        uint64_t id;
        uint32_t total;
        uint32_t done_count;
        uint32_t created;      /* jobs added so far (total once created) */
        uint32_t pending;
        uint32_t in_flight;
        uint32_t done;
        uint32_t redelivered;  /* jobs claimed more than once */
        int64_t created_usec;  /* CLOCK_REALTIME of the store */
};
/* Fills up to max summaries of the newest runs (highest ids first), one
 * aggregate query per run, every field; returns how many. */
int store_runs_summary(struct store *s, struct store_run_summary *out, size_t max);

/* The in-flight job claimed longest ago: 1 and all of *ret filled (with
 * the store's CLOCK_REALTIME of the claim in *claimed_usec; 0 when it was
 * claimed by a version that did not record it), or 0 when nothing is in
 * flight (*ret and *claimed_usec zero, as on failure). */
int store_job_oldest_in_flight(struct store *s, struct store_job *ret, int64_t *claimed_usec);

/* 0 and all of *ret, or -ENOENT when there is no such job or run (*ret
 * zero, as on any failure). */
int store_job_read(struct store *s, uint64_t run, uint32_t job, struct store_job *ret);
int store_run_read(struct store *s, uint64_t run, struct store_run *ret);
/* Fills up to max ids of runs with done_count < total, oldest first;
 * returns how many. What a new leader resumes. */
int store_runs_unfinished(struct store *s, uint64_t *ids, size_t max);

#ifdef __cplusplus
}
#endif

#endif
