/* SPDX-License-Identifier: MIT */
/* URL dispatch, argument checks and error classes; the backends do the rest. */

#include "store-backend.h"
#include "store_url.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static _Thread_local char open_errmsg[512];

enum store_error_class store_error_class(int r) {
        if (r >= 0)
                return STORE_OK;
        switch (-r) {
        case EBUSY:
        case ESTALE:
                return STORE_LOST;
        case EIO:
        case EAGAIN:
        case ENOSPC:
        case ENOMEM:
        case ETIMEDOUT:
        case ECONNREFUSED:
        case ECONNRESET:
        case ECONNABORTED:
        case ENOTCONN:
        case EHOSTUNREACH:
        case ENETUNREACH:
        case ENETDOWN:
        case EPIPE:
                return STORE_UNAVAILABLE;
        default:
                return STORE_FATAL;
        }
}

int store_vfail(struct store *s, int r, const char *fmt, va_list ap) {
        vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
        return r;
}

int store_fail(struct store *s, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        r = store_vfail(s, r, fmt, ap);
        va_end(ap);
        return r;
}

void store_copy_name(char dst[STORE_NAME_MAX + 1], const char *src) {
        snprintf(dst, STORE_NAME_MAX + 1, "%s", src ? src : "");
}

int store_new_identity(char id[STORE_ID_MAX + 1]) {
        uint8_t bytes[STORE_ID_MAX / 2];
        size_t got = 0;

        while (got < sizeof bytes) {
                ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0)
                        got += (size_t) n;
        }
        for (size_t i = 0; i < sizeof bytes; i++)
                snprintf(id + 2 * i, 3, "%02x", bytes[i]);
        return 0;
}

static int open_url(const char *url, bool readonly, struct store **ret) {
        struct store_url u;
        int r;

        open_errmsg[0] = '\0';
        if (!ret)
                return -EINVAL;
        *ret = NULL;
        r = store_url_parse(url, &u, open_errmsg, sizeof open_errmsg);
        if (r < 0)
                return r;
        if (u.kind == STORE_URL_SQLITE)
                return store_sqlite_open(u.rest, readonly, ret, open_errmsg, sizeof open_errmsg);
#if SDLIVE_STORE_HAVE_POSTGRES
        return store_pg_open(u.rest, readonly, ret, open_errmsg, sizeof open_errmsg);
#else
        snprintf(open_errmsg, sizeof open_errmsg, "this build has no PostgreSQL store (built without libpq)");
        return -EPROTONOSUPPORT;
#endif
}

int store_open(const char *url, struct store **ret) {
        return open_url(url, false, ret);
}

int store_open_readonly(const char *url, struct store **ret) {
        return open_url(url, true, ret);
}

struct store *store_close(struct store *s) {
        if (s)
                s->backend->close(s);
        return NULL;
}

const char *store_errmsg(const struct store *s) {
        return s ? s->errmsg : open_errmsg;
}

const char *store_backend(const struct store *s) {
        return s ? s->backend->name : NULL;
}

const char *store_identity(const struct store *s) {
        return s ? s->backend->identity(s) : "";
}

/* Every entry point starts here: clears the previous message. */
static int begin_call(struct store *s) {
        if (!s)
                return -EINVAL;
        s->errmsg[0] = '\0';
        return 0;
}

static int check_name(struct store *s, const char *what, const char *name) {
        if (!name || name[0] == '\0')
                return store_fail(s, -EINVAL, "%s must not be empty", what);
        if (strlen(name) > STORE_NAME_MAX)
                return store_fail(s, -EINVAL, "%s \"%.20s...\" is longer than %d bytes",
                                  what, name, STORE_NAME_MAX);
        return 0;
}

static int check_fence(struct store *s, const struct store_fence *f) {
        int r;

        if (!f)
                return store_fail(s, -EINVAL, "a leader write needs a fence");
        r = check_name(s, "lease name", f->lease);
        if (r < 0)
                return r;
        r = check_name(s, "holder", f->holder);
        if (r < 0)
                return r;
        if (f->generation == 0 || f->generation > INT64_MAX)
                return store_fail(s, -EINVAL, "generation %llu was never issued",
                                  (unsigned long long) f->generation);
        if (f->store_id && strlen(f->store_id) > STORE_ID_MAX)
                return store_fail(s, -EINVAL, "store identity \"%.20s...\" is longer than %d bytes",
                                  f->store_id, STORE_ID_MAX);
        return 0;
}

static int check_ttl(struct store *s, uint64_t ttl_usec) {
        /* Up to ten years: keeps now + ttl far from int64 overflow. */
        if (ttl_usec == 0 || ttl_usec > UINT64_C(315360000000000))
                return store_fail(s, -EINVAL, "lease time %llu us is out of range",
                                  (unsigned long long) ttl_usec);
        return 0;
}

static int check_lease_args(struct store *s, const char *name, const char *holder) {
        int r = check_name(s, "lease name", name);
        return r < 0 ? r : check_name(s, "holder", holder);
}

static int check_generation(struct store *s, uint64_t generation) {
        if (generation == 0 || generation > INT64_MAX)
                return store_fail(s, -EINVAL, "generation %llu was never issued",
                                  (unsigned long long) generation);
        return 0;
}

int store_reconnect(struct store *s) {
        int r = begin_call(s);
        return r < 0 ? r : s->backend->reconnect(s);
}

int store_set_lock_timeout(struct store *s, uint64_t usec) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if (usec < 1000 || usec > UINT64_C(3600000000))
                return store_fail(s, -EINVAL, "lock timeout must be between 1 ms and 1 h");
        return s->backend->set_lock_timeout(s, usec);
}

int store_lease_acquire(struct store *s, const char *name, const char *holder,
                        uint64_t ttl_usec, uint64_t *ret_generation) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_lease_args(s, name, holder)) < 0 || (r = check_ttl(s, ttl_usec)) < 0)
                return r;
        if (!ret_generation)
                return store_fail(s, -EINVAL, "no place for the generation");
        if ((r = s->backend->follow_store(s)) < 0)
                return r;
        return s->backend->lease_acquire(s, name, holder, ttl_usec, ret_generation);
}

int store_lease_refresh(struct store *s, const char *name, const char *holder,
                        uint64_t generation, uint64_t ttl_usec) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_lease_args(s, name, holder)) < 0 || (r = check_ttl(s, ttl_usec)) < 0 ||
            (r = check_generation(s, generation)) < 0 || (r = s->backend->same_store(s)) < 0)
                return r;
        return s->backend->lease_refresh(s, name, holder, generation, ttl_usec);
}

int store_lease_release(struct store *s, const char *name, const char *holder, uint64_t generation) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_lease_args(s, name, holder)) < 0 || (r = check_generation(s, generation)) < 0 ||
            (r = s->backend->same_store(s)) < 0)
                return r;
        return s->backend->lease_release(s, name, holder, generation);
}

int store_lease_listen(struct store *s, int *ret_fd) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if (!ret_fd)
                return store_fail(s, -EINVAL, "no place for the fd");
        *ret_fd = -1;
        return s->backend->lease_listen(s, ret_fd);
}

int store_lease_notified(struct store *s) {
        int r = begin_call(s);
        return r < 0 ? r : s->backend->lease_notified(s);
}

int store_lease_unlisten(struct store *s) {
        int r = begin_call(s);
        return r < 0 ? r : s->backend->lease_unlisten(s);
}

int store_lease_read(struct store *s, const char *name, struct store_lease_info *ret) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_name(s, "lease name", name)) < 0)
                return r;
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the lease");
        *ret = (struct store_lease_info) { 0 };
        if ((r = s->backend->follow_store(s)) < 0)
                return r;
        return s->backend->lease_read(s, name, ret);
}

int store_log_summary(struct store *s, const char *lease, struct store_log_summary *ret) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_name(s, "lease name", lease)) < 0)
                return r;
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the summary");
        *ret = (struct store_log_summary) { 0 };
        return s->backend->log_summary(s, lease, ret);
}

int store_seed_inventory(struct store *s, uint64_t blobs, uint64_t artifacts, uint64_t nodes) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if (blobs > INT32_MAX || artifacts > INT32_MAX || nodes > INT32_MAX)
                return store_fail(s, -EINVAL, "at most %d items of each kind", INT32_MAX);
        return s->backend->seed_inventory(s, blobs, artifacts, nodes);
}

static int check_batch(struct store *s, const void *out, size_t max) {
        if (!out || max == 0 || max > INT32_MAX)
                return store_fail(s, -EINVAL, "a batch needs room for 1 to %d items", INT32_MAX);
        return 0;
}

int store_blobs_list(struct store *s, int64_t after_id, struct store_blob *out, size_t max) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_batch(s, out, max)) < 0)
                return r;
        return s->backend->blobs_list(s, after_id, out, max);
}

int store_artifacts_list(struct store *s, const struct store_artifact *after,
                         struct store_artifact *out, size_t max) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_batch(s, out, max)) < 0)
                return r;
        if (after && strnlen(after->name, sizeof after->name) > STORE_NAME_MAX)
                return store_fail(s, -EINVAL, "artifact cursor name is not terminated");
        return s->backend->artifacts_list(s, after, out, max);
}

int store_nodes_list(struct store *s, const char *after_name, struct store_node *out, size_t max) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_batch(s, out, max)) < 0)
                return r;
        return s->backend->nodes_list(s, after_name ? after_name : "", out, max);
}

int store_blob_mark_deleted(struct store *s, const struct store_fence *f, int64_t id) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0)
                return r;
        return s->backend->blob_mark_deleted(s, f, id);
}

int store_artifact_prune(struct store *s, const struct store_fence *f, const char *name, int64_t version) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0 || (r = check_name(s, "artifact name", name)) < 0)
                return r;
        return s->backend->artifact_prune(s, f, name, version);
}

int store_node_mark_missing(struct store *s, const struct store_fence *f, const char *name) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0 || (r = check_name(s, "node name", name)) < 0)
                return r;
        return s->backend->node_mark_missing(s, f, name);
}

int store_node_checkin(struct store *s, const char *name) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_name(s, "node name", name)) < 0)
                return r;
        return s->backend->node_checkin(s, name);
}

static int check_job(struct store *s, uint64_t run, uint32_t job) {
        if (run == 0 || run > INT64_MAX || job > INT32_MAX)
                return store_fail(s, -EINVAL, "job %llu/%u does not exist",
                                  (unsigned long long) run, job);
        return 0;
}

int store_run_begin(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0)
                return r;
        if (total == 0 || total > INT32_MAX || !ret_run)
                return store_fail(s, -EINVAL, "a run needs 1 to %d jobs and a place for its id", INT32_MAX);
        return s->backend->run_begin(s, f, total, ret_run);
}

int store_run_fill(struct store *s, const struct store_fence *f, uint64_t run, uint32_t max) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0)
                return r;
        if (run == 0 || run > INT64_MAX)
                return store_fail(s, -EINVAL, "run %llu does not exist", (unsigned long long) run);
        if (max > STORE_RUN_FILL_MAX)
                max = STORE_RUN_FILL_MAX;
        return max ? s->backend->run_fill(s, f, run, max) : 0;
}

int store_run_create(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run) {
        uint64_t run = 0;
        int r;

        r = store_run_begin(s, f, total, &run);
        while (r >= 0 && (r = store_run_fill(s, f, run, STORE_RUN_FILL_MAX)) > 0)
                nanosleep(&(struct timespec) { .tv_nsec = STORE_RUN_FILL_PAUSE_USEC * 1000 }, NULL);
        if (r < 0)
                return r;
        *ret_run = run;
        return 0;
}

/* Fills every token a claim may hand out. */
static int draw_tokens(struct store *s, struct store_job_batch *b) {
        for (size_t i = 0; i < b->n_claims; i++) {
                for (unsigned j = 0; j < b->claims[i].want; j++) {
                        uint8_t *t = b->claims[i].out[j].token;
                        size_t got = 0;
                        while (got < STORE_TOKEN_SIZE) {
                                ssize_t n = getrandom(t + got, STORE_TOKEN_SIZE - got, 0);
                                if (n < 0 && errno != EINTR)
                                        return store_fail(s, -errno, "getrandom: %m");
                                if (n > 0)
                                        got += (size_t) n;
                        }
                }
        }
        return 0;
}

int store_jobs_batch(struct store *s, const struct store_fence *f, struct store_job_batch *b) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0)
                return r;
        if (!b || (b->n_results && !b->results) || (b->n_requeues && !b->requeues) ||
            (b->n_claims && !b->claims))
                return store_fail(s, -EINVAL, "bad job batch");
        b->counted = b->requeued = b->claimed = 0;
        for (size_t i = 0; i < b->n_results; i++) {
                struct store_result *x = &b->results[i];
                x->status = 0;
                if (x->run == 0 || x->run > INT64_MAX || x->job > INT32_MAX)
                        x->status = -ENOENT;
                else if (x->attempt == 0 || x->attempt > INT32_MAX)
                        x->status = -EINVAL;
        }
        for (size_t i = 0; i < b->n_requeues; i++) {
                b->requeues[i].requeued = false;
                if ((r = check_job(s, b->requeues[i].run, b->requeues[i].job)) < 0)
                        return r;
        }
        for (size_t i = 0; i < b->n_claims; i++) {
                b->claims[i].got = 0;
                if ((r = check_name(s, "worker", b->claims[i].worker)) < 0)
                        return r;
                if (b->claims[i].want && !b->claims[i].out)
                        return store_fail(s, -EINVAL, "no place for the claimed jobs");
        }
        if ((r = draw_tokens(s, b)) < 0)
                return r;
        r = s->backend->jobs_batch(s, f, b);
        if (r < 0) {
                b->counted = b->requeued = b->claimed = 0;
                for (size_t i = 0; i < b->n_claims; i++)
                        b->claims[i].got = 0;
        }
        return r;
}

int store_job_claim(struct store *s, const struct store_fence *f, uint64_t run,
                    const char *worker, struct store_job *ret) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0 || (r = check_name(s, "worker", worker)) < 0)
                return r;
        if (!ret || run > INT64_MAX)
                return store_fail(s, -EINVAL, "bad run or no place for the job");
        *ret = (struct store_job) { 0 };
        return s->backend->job_claim(s, f, run, worker, ret);
}

int store_jobs_requeue(struct store *s, const struct store_fence *f, const char *worker) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0 || (worker && (r = check_name(s, "worker", worker)) < 0))
                return r;
        return s->backend->jobs_requeue(s, f, worker);
}

int store_job_requeue(struct store *s, const struct store_fence *f, uint64_t run,
                      uint32_t job, uint32_t attempt) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0 || (r = check_job(s, run, job)) < 0)
                return r;
        return s->backend->job_requeue(s, f, run, job, attempt);
}

int store_job_record(struct store *s, const struct store_fence *f, uint64_t run,
                     uint32_t job, uint32_t attempt, int64_t outcome) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_fence(s, f)) < 0 || (r = check_job(s, run, job)) < 0)
                return r;
        if (attempt == 0 || attempt > INT32_MAX)
                return store_fail(s, -EINVAL, "attempt %u of job %llu/%u was never assigned",
                                  attempt, (unsigned long long) run, job);
        return s->backend->job_record(s, f, run, job, attempt, outcome);
}

int store_runs_summary(struct store *s, struct store_run_summary *out, size_t max) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_batch(s, out, max)) < 0)
                return r;
        return s->backend->runs_summary(s, out, max);
}

int store_job_oldest_in_flight(struct store *s, struct store_job *ret, int64_t *claimed_usec) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if (!ret || !claimed_usec)
                return store_fail(s, -EINVAL, "no place for the job");
        *ret = (struct store_job) { 0 };
        *claimed_usec = 0;
        return s->backend->job_oldest_in_flight(s, ret, claimed_usec);
}

int store_job_read(struct store *s, uint64_t run, uint32_t job, struct store_job *ret) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_job(s, run, job)) < 0)
                return r;
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the job");
        *ret = (struct store_job) { 0 };
        return s->backend->job_read(s, run, job, ret);
}

int store_run_read(struct store *s, uint64_t run, struct store_run *ret) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if (run == 0 || run > INT64_MAX)
                return store_fail(s, -EINVAL, "run %llu does not exist", (unsigned long long) run);
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the run");
        *ret = (struct store_run) { 0 };
        return s->backend->run_read(s, run, ret);
}

int store_runs_unfinished(struct store *s, uint64_t *ids, size_t max) {
        int r = begin_call(s);
        if (r < 0)
                return r;
        if ((r = check_batch(s, ids, max)) < 0)
                return r;
        return s->backend->runs_unfinished(s, ids, max);
}
