/* SPDX-License-Identifier: MIT */
/* What the entry points and the backends share: error classes and
 * messages, the store's schema version and identity, and the argument
 * checks of the entry points (store_check.h). Opening a handle and the
 * calls that reach it are store_open.c's. */

#include "store_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

uint64_t store_round_trips(const struct store *s) {
        return s && s->backend->round_trips ? s->backend->round_trips(s) : 0;
}

size_t store_jobs_unsettled(const struct store *s) {
        return s && s->backend->jobs_unsettled ? s->backend->jobs_unsettled(s) : 0;
}

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

int store_begin_call(struct store *s) {
        if (!s)
                return -EINVAL;
        s->errmsg[0] = '\0';
        s->act_until = NULL;
        return 0;
}

int store_check_name(struct store *s, const char *what, const char *name) {
        if (!name || name[0] == '\0')
                return store_fail(s, -EINVAL, "%s must not be empty", what);
        if (strlen(name) > STORE_NAME_MAX)
                return store_fail(s, -EINVAL, "%s \"%.20s...\" is longer than %d bytes",
                                  what, name, STORE_NAME_MAX);
        return 0;
}

int store_check_fence(struct store *s, const struct store_fence *f) {
        int r;

        if (!f)
                return store_fail(s, -EINVAL, "a leader write needs a fence");
        r = store_check_name(s, "lease name", f->lease);
        if (r < 0)
                return r;
        r = store_check_name(s, "holder", f->holder);
        if (r < 0)
                return r;
        if (f->generation == 0 || f->generation > INT64_MAX)
                return store_fail(s, -EINVAL, "generation %llu was never issued",
                                  (unsigned long long) f->generation);
        if (f->store_id && strlen(f->store_id) > STORE_ID_MAX)
                return store_fail(s, -EINVAL, "store identity \"%.20s...\" is longer than %d bytes",
                                  f->store_id, STORE_ID_MAX);
        s->act_until = f->act_until_usec;
        /* Past the writer's deadline for acting the call sends nothing,
         * not even the reconnect that precedes the transaction (which can
         * block for the store's connect timeout). */
        return store_fence_in_time(s, f);
}

int store_check_ttl(struct store *s, uint64_t ttl_usec) {
        /* Up to ten years: keeps now + ttl far from int64 overflow. */
        if (ttl_usec == 0 || ttl_usec > UINT64_C(315360000000000))
                return store_fail(s, -EINVAL, "lease time %llu us is out of range",
                                  (unsigned long long) ttl_usec);
        return 0;
}

int store_check_generation(struct store *s, uint64_t generation) {
        if (generation == 0 || generation > INT64_MAX)
                return store_fail(s, -EINVAL, "generation %llu was never issued",
                                  (unsigned long long) generation);
        return 0;
}

int store_check_batch(struct store *s, const void *out, size_t max) {
        if (!out || max == 0 || max > INT32_MAX)
                return store_fail(s, -EINVAL, "a batch needs room for 1 to %d items", INT32_MAX);
        return 0;
}

int store_check_job(struct store *s, uint64_t run, uint32_t job) {
        if (run == 0 || run > INT64_MAX || job > INT32_MAX)
                return store_fail(s, -EINVAL, "job %llu/%u does not exist",
                                  (unsigned long long) run, job);
        return 0;
}

int store_meta_read(struct store *s, char id[STORE_ID_MAX + 1], const char *where) {
        struct store_rows rows;
        char version[16] = "";
        int r;

        id[0] = '\0';
        r = store_query(s, &rows, STMT_META, "read store identity");
        if (r < 0)
                return r;
        while ((r = store_rows_next(&rows)) > 0) {
                const char *key = store_rows_text(&rows, 0), *value = store_rows_text(&rows, 1);
                if (key && strcmp(key, "schema") == 0)
                        snprintf(version, sizeof version, "%s", value ? value : "");
                else
                        snprintf(id, STORE_ID_MAX + 1, "%s", value ? value : "");
        }
        store_rows_end(&rows);
        if (r < 0)
                return r;
        if (strcmp(version, STORE_SCHEMA_VERSION) != 0)
                return store_fail(s, -EPROTONOSUPPORT,
                                  "%s: store schema version \"%s\", this program knows " STORE_SCHEMA_VERSION,
                                  where, version);
        return 0;
}

int store_identity_check(struct store *s, const char *current, const char *bound, const char *where) {
        if (strcmp(current, bound) == 0)
                return 0;
        return store_fail(s, -ESTALE, "store %s is another store (identity %s, not %s)", where,
                          current[0] ? current : "none", bound[0] ? bound : "none");
}
