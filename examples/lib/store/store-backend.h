/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_BACKEND_H
#define SDLIVE_EXAMPLE_STORE_BACKEND_H

/* What a backend implements. store.c validates every argument (non-NULL,
 * names at most STORE_NAME_MAX, ttl > 0 ...) before calling in, so backends
 * only deal with the database. Each backend embeds struct store first in
 * its own handle. */

#include "store.h"

#include <stdarg.h>

struct store_backend {
        const char *name;
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

        int (*lease_acquire)(struct store *s, const char *name, const char *holder,
                             uint64_t ttl_usec, uint64_t *ret_generation);
        int (*lease_refresh)(struct store *s, const char *name, const char *holder,
                             uint64_t generation, uint64_t ttl_usec);
        int (*lease_release)(struct store *s, const char *name, const char *holder,
                             uint64_t generation);
        int (*lease_read)(struct store *s, const char *name, struct store_lease_info *ret);
        int (*lease_listen)(struct store *s, int *ret_fd);
        int (*lease_notified)(struct store *s);
        int (*lease_unlisten)(struct store *s);
        int (*log_summary)(struct store *s, const char *lease, struct store_log_summary *ret);

        int (*seed_inventory)(struct store *s, uint64_t blobs, uint64_t artifacts, uint64_t nodes);
        int (*blobs_list)(struct store *s, int64_t after_id, struct store_blob *out, size_t max);
        int (*artifacts_list)(struct store *s, const struct store_artifact *after,
                              struct store_artifact *out, size_t max);
        int (*nodes_list)(struct store *s, const char *after_name, struct store_node *out, size_t max);
        int (*blob_mark_deleted)(struct store *s, const struct store_fence *f, int64_t id);
        int (*artifact_prune)(struct store *s, const struct store_fence *f, const char *name,
                              int64_t version);
        int (*node_mark_missing)(struct store *s, const struct store_fence *f, const char *name);
        int (*node_checkin)(struct store *s, const char *name);

        int (*job_claim)(struct store *s, const struct store_fence *f, uint64_t run,
                         const char *worker, struct store_job *ret);
        int (*jobs_requeue)(struct store *s, const struct store_fence *f, const char *worker);
        int (*job_requeue)(struct store *s, const struct store_fence *f, uint64_t run,
                           uint32_t job, uint32_t attempt);
        int (*job_record)(struct store *s, const struct store_fence *f, uint64_t run,
                          uint32_t job, uint32_t attempt, int64_t outcome);
        int (*jobs_batch)(struct store *s, const struct store_fence *f, struct store_job_batch *b);
        int (*run_begin)(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run);
        int (*run_fill)(struct store *s, const struct store_fence *f, uint64_t run, uint32_t max);
        int (*runs_summary)(struct store *s, struct store_run_summary *out, size_t max);
        int (*job_oldest_in_flight)(struct store *s, struct store_job *ret, int64_t *claimed_usec);
        int (*job_read)(struct store *s, uint64_t run, uint32_t job, struct store_job *ret);
        int (*run_read)(struct store *s, uint64_t run, struct store_run *ret);
        int (*runs_unfinished)(struct store *s, uint64_t *ids, size_t max);
};

struct store {
        const struct store_backend *backend;
        char errmsg[512];
};

/* Backend constructors. On failure they return < 0 with a message in
 * errbuf and leave *ret NULL. */
int store_sqlite_open(const char *path, bool readonly, struct store **ret, char *errbuf, size_t errlen);
#if SDLIVE_STORE_HAVE_POSTGRES
int store_pg_open(const char *conninfo, bool readonly, struct store **ret, char *errbuf, size_t errlen);
#endif

/* Fills id with a new random store identity (STORE_ID_MAX hex digits). */
int store_new_identity(char id[STORE_ID_MAX + 1]);

/* Records a formatted message on s and returns r (a negative errno). */
int store_fail(struct store *s, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int store_vfail(struct store *s, int r, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Copies a text column into a STORE_NAME_MAX buffer, "" for NULL. */
void store_copy_name(char dst[STORE_NAME_MAX + 1], const char *src);

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
