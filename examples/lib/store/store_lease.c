/* SPDX-License-Identifier: MIT */
/* The lease: acquisition with a new generation (the fencing token),
 * refresh, release and its announcement, reads, and the write log's
 * overlap summary. The SQL of each backend decides whose clock counts. */

#include "store_check.h"

#include <errno.h>

#include "monotonic.h"

static int check_lease_args(struct store *s, const char *name, const char *holder) {
        int r = store_check_name(s, "lease name", name);
        return r < 0 ? r : store_check_name(s, "holder", holder);
}

/* A lease is granted and renewed only where the grant survives the
 * store's own failover: once per connection and once per lease at least. */
static int check_durability(struct store *s, uint64_t ttl_usec) {
        return s->backend->check_durability ? s->backend->check_durability(s, ttl_usec) : 0;
}

/* The lease row as it is now, all of *ret: zero for a missing row (and
 * on failure). */
static int lease_read(struct store *s, const char *name, struct store_lease_info *ret) {
        struct store_rows rows;
        int r;

        *ret = (struct store_lease_info) { 0 };
        r = store_query_row(s, &rows, STMT_LEASE_READ, "read lease", name);
        if (r <= 0)
                return r;
        ret->generation = (uint64_t) store_rows_int(&rows, 1);
        ret->held = store_rows_bool(&rows, 2);
        ret->remaining_usec = ret->held ? (uint64_t) store_rows_int(&rows, 3) : 0;
        store_copy_name(ret->holder, store_rows_text(&rows, 0));
        store_rows_end(&rows);
        return 0;
}

/* One statement takes the row only if it is absent, expired (a release
 * sets the expiry to the release time) or, in SQLite, from an earlier
 * boot; of two racing acquirers the second sees the first's expiry.
 * *ret_sent_usec: CLOCK_MONOTONIC just before that statement is sent,
 * which dates the expiry (the server's clock_timestamp(), or the local
 * clock bound as its parameter) no earlier. 1 taken, 0 held by another. */
static int lease_take(struct store *s, const char *name, const char *holder, uint64_t ttl_usec,
                      uint64_t *ret_generation, uint64_t *ret_sent_usec) {
        const struct store_backend *b = s->backend;
        struct store_rows rows;
        int r;

        if (b->lock_single_writes && (r = b->begin(s)) < 0)
                return r;
        *ret_sent_usec = monotonic_usec();
        r = store_query_row(s, &rows, STMT_LEASE_ACQUIRE, "acquire lease", name, holder, (int64_t) ttl_usec);
        if (r > 0) {
                *ret_generation = (uint64_t) store_rows_int(&rows, 0);
                store_rows_end(&rows);
        }
        if (r <= 0)
                return b->lock_single_writes ? b->abort(s, r) : r;
        if (b->lock_single_writes && (r = b->commit(s)) < 0)
                return r;
        return 1;
}

int store_lease_acquire_dated(struct store *s, const char *name, const char *holder, uint64_t ttl_usec,
                              uint64_t *ret_generation, uint64_t *ret_dated_after_usec) {
        struct store_lease_info info = { 0 };
        uint64_t sent = 0;
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = check_lease_args(s, name, holder)) < 0 || (r = store_check_ttl(s, ttl_usec)) < 0)
                return r;
        if (!ret_generation || !ret_dated_after_usec)
                return store_fail(s, -EINVAL, "no place for the generation");
        if ((r = s->backend->follow_store(s)) < 0 || (r = s->backend->connect(s)) < 0 ||
            (r = check_durability(s, ttl_usec)) < 0)
                return r;
        r = lease_take(s, name, holder, ttl_usec, ret_generation, &sent);
        if (r > 0 && s->backend->adopt_store && (r = s->backend->adopt_store(s)) >= 0)
                r = 1;
        if (r > 0)
                *ret_dated_after_usec = sent;
        if (r != 0)
                return r < 0 ? r : 0;
        r = lease_read(s, name, &info);
        if (r < 0)
                return r;
        return store_fail(s, -EBUSY, "lease %s is held by %s (generation %llu) for %llu ms more",
                          name, info.holder, (unsigned long long) info.generation,
                          (unsigned long long) (info.remaining_usec / 1000));
}

int store_lease_acquire(struct store *s, const char *name, const char *holder,
                        uint64_t ttl_usec, uint64_t *ret_generation) {
        uint64_t dated_after;

        return store_lease_acquire_dated(s, name, holder, ttl_usec, ret_generation, &dated_after);
}

int store_lease_refresh(struct store *s, const char *name, const char *holder,
                        uint64_t generation, uint64_t ttl_usec) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = check_lease_args(s, name, holder)) < 0 || (r = store_check_ttl(s, ttl_usec)) < 0 ||
            (r = store_check_generation(s, generation)) < 0)
                return r;
        if (!s->backend->refresh_checks_identity && (r = s->backend->same_store(s)) < 0)
                return r;
        if ((r = s->backend->connect(s)) < 0 || (r = check_durability(s, ttl_usec)) < 0)
                return r;
        r = store_exec(s, STMT_LEASE_REFRESH, "refresh lease", name, holder, (int64_t) generation,
                       (int64_t) ttl_usec);
        /* Nothing changed, or the statement failed (its tables dropped):
         * another incarnation of the store, if that is why. */
        if (s->backend->refresh_checks_identity && (r == 0 || (r < 0 && store_error_class(r) != STORE_UNAVAILABLE))) {
                int k = s->backend->same_store(s);

                if (k < 0)
                        return k;
        }
        if (r == 0)
                return store_fail(s, -ESTALE, "lease %s is no longer held by %s as generation %llu",
                                  name, holder, (unsigned long long) generation);
        return r < 0 ? r : 0;
}

int store_lease_release(struct store *s, const char *name, const char *holder, uint64_t generation) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = check_lease_args(s, name, holder)) < 0 || (r = store_check_generation(s, generation)) < 0 ||
            (r = s->backend->same_store(s)) < 0 || (r = s->backend->connect(s)) < 0)
                return r;
        r = store_exec(s, STMT_LEASE_RELEASE, "release lease", name, holder, (int64_t) generation);
        if (r == 0)
                return store_fail(s, -ESTALE, "lease %s is not held by %s as generation %llu",
                                  name, holder, (unsigned long long) generation);
        if (r < 0)
                return r;
        if (s->backend->announce_release)
                s->backend->announce_release(s);
        return 0;
}

int store_lease_read(struct store *s, const char *name, struct store_lease_info *ret) {
        int r;

        if (ret)
                *ret = (struct store_lease_info) { 0 };
        if ((r = store_begin_call(s)) < 0)
                return r;
        if ((r = store_check_name(s, "lease name", name)) < 0)
                return r;
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the lease");
        if ((r = s->backend->follow_store(s)) < 0 || (r = s->backend->connect(s)) < 0)
                return r;
        return lease_read(s, name, ret);
}

int store_lease_listen(struct store *s, int *ret_fd) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if (!ret_fd)
                return store_fail(s, -EINVAL, "no place for the fd");
        *ret_fd = -1;
        return s->backend->lease_listen(s, ret_fd);
}

int store_lease_notified(struct store *s) {
        int r = store_begin_call(s);
        return r < 0 ? r : s->backend->lease_notified(s);
}

int store_lease_unlisten(struct store *s) {
        int r = store_begin_call(s);
        return r < 0 ? r : s->backend->lease_unlisten(s);
}

int store_log_summary(struct store *s, const char *lease, struct store_log_summary *ret) {
        struct store_rows rows;
        int r;

        if (ret)
                *ret = (struct store_log_summary) { 0 };
        if ((r = store_begin_call(s)) < 0)
                return r;
        if ((r = store_check_name(s, "lease name", lease)) < 0)
                return r;
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the summary");
        if ((r = s->backend->connect(s)) < 0)
                return r;
        r = store_query_row(s, &rows, STMT_LOG_SUMMARY, "summarize write log", lease);
        if (r <= 0)
                return r;
        ret->entries = (uint64_t) store_rows_int(&rows, 0);
        ret->generations = (uint64_t) store_rows_int(&rows, 1);
        ret->overlaps = (uint64_t) store_rows_int(&rows, 2);
        store_rows_end(&rows);
        return 0;
}
